package fakebot

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// htmlTags are the tags Telegram's HTML parse mode supports
// (https://core.telegram.org/bots/api#html-style).
var htmlTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "tg-emoji": true, "code": true, "pre": true, "blockquote": true,
}

// parseHTML checks text against Telegram's HTML rules: only supported tags,
// properly nested and closed; every '<' and '&' outside a tag or entity
// escaped; only the named entities &lt; &gt; &amp; &quot; and numeric ones.
// It returns the plain text.
func parseHTML(s string) (string, error) {
	var b strings.Builder
	var stack []string
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("unclosed start tag at byte offset %d", i)
			}
			inner := s[i+1 : i+end]
			if rest, ok := strings.CutPrefix(inner, "/"); ok {
				name := strings.ToLower(strings.TrimSpace(rest))
				if len(stack) == 0 {
					return "", fmt.Errorf("unexpected end tag at byte offset %d", i)
				}
				if top := stack[len(stack)-1]; name != top {
					return "", fmt.Errorf("unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", i, top, name)
				}
				stack = stack[:len(stack)-1]
			} else {
				name, attrs := splitTag(inner)
				if !htmlTags[name] {
					return "", fmt.Errorf("unsupported start tag %q at byte offset %d", name, i)
				}
				if err := checkAttrs(name, attrs); err != nil {
					return "", fmt.Errorf("%w at byte offset %d", err, i)
				}
				stack = append(stack, name)
			}
			i += end + 1
		case '&':
			r, n, ok := htmlEntity(s[i:])
			if !ok {
				return "", fmt.Errorf("character entity expected (unescaped \"&\") at byte offset %d", i)
			}
			b.WriteRune(r)
			i += n
		default:
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("can't find end tag corresponding to start tag %q", stack[len(stack)-1])
	}
	return b.String(), nil
}

// splitTag splits the inside of a start tag into its lower-case name and
// its attributes.
func splitTag(inner string) (string, map[string]string) {
	name, rest, _ := strings.Cut(inner, " ")
	attrs := map[string]string{}
	rest = strings.TrimSpace(rest)
	for rest != "" {
		key, after, hasValue := strings.Cut(rest, "=")
		if !hasValue {
			for _, k := range strings.Fields(key) {
				attrs[strings.ToLower(k)] = ""
			}
			break
		}
		key = strings.ToLower(strings.TrimSpace(key))
		after = strings.TrimSpace(after)
		var val string
		if after != "" && (after[0] == '"' || after[0] == '\'') {
			q := after[0]
			end := strings.IndexByte(after[1:], q)
			if end < 0 {
				val, after = after[1:], ""
			} else {
				val, after = after[1:1+end], after[2+end:]
			}
		} else {
			val, after, _ = strings.Cut(after, " ")
		}
		attrs[key] = val
		rest = strings.TrimSpace(after)
	}
	return strings.ToLower(strings.TrimSpace(name)), attrs
}

func checkAttrs(name string, attrs map[string]string) error {
	switch name {
	case "a":
		if attrs["href"] == "" {
			return fmt.Errorf("tag \"a\" must have an href attribute")
		}
	case "span":
		if attrs["class"] != "tg-spoiler" {
			return fmt.Errorf("tag \"span\" must have class \"tg-spoiler\"")
		}
	case "tg-emoji":
		if attrs["emoji-id"] == "" {
			return fmt.Errorf("tag \"tg-emoji\" must have an emoji-id attribute")
		}
	}
	return nil
}

// htmlEntity decodes the entity s starts with ("&amp;", "&#60;", "&#x3C;").
func htmlEntity(s string) (rune, int, bool) {
	end := strings.IndexByte(s, ';')
	if end < 2 || end > 12 {
		return 0, 0, false
	}
	name := s[1:end]
	switch name {
	case "lt":
		return '<', end + 1, true
	case "gt":
		return '>', end + 1, true
	case "amp":
		return '&', end + 1, true
	case "quot":
		return '"', end + 1, true
	}
	num, ok := strings.CutPrefix(name, "#")
	if !ok || num == "" {
		return 0, 0, false
	}
	base := 10
	if h, ok := strings.CutPrefix(strings.ToLower(num), "x"); ok {
		num, base = h, 16
	}
	v, err := strconv.ParseUint(num, base, 32)
	if err != nil || v == 0 || !utf8.ValidRune(rune(v)) {
		return 0, 0, false
	}
	return rune(v), end + 1, true
}
