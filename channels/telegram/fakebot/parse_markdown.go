package fakebot

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// mdReserved are the characters MarkdownV2 reserves: outside an entity's
// markup each must be escaped with a preceding '\'
// (https://core.telegram.org/bots/api#markdownv2-style).
const mdReserved = "_*[]()~`>#+-=|{}.!"

// parseMarkdownV2 checks text against Telegram's MarkdownV2 rules and
// returns the plain text. Entities: *bold*, _italic_, __underline__,
// ~strike~, ||spoiler||, `code`, ```pre```, [text](url), ![emoji](url) and
// '>' blockquotes at the start of a line. Inside code and pre only '`' and
// '\' need escaping; inside a link's URL only ')' and '\'.
func parseMarkdownV2(s string) (string, error) {
	var b strings.Builder
	var stack []string // open entities, innermost last
	var opened []int   // byte offset where each was opened
	toggle := func(kind string, at int) error {
		if n := len(stack); n > 0 && stack[n-1] == kind {
			stack, opened = stack[:n-1], opened[:n-1]
			return nil
		}
		if slices.Contains(stack, kind) {
			return fmt.Errorf("can't find end of %s entity at byte offset %d", kind, opened[slices.Index(stack, kind)])
		}
		stack, opened = append(stack, kind), append(opened, at)
		return nil
	}
	lineStart := true
	for i := 0; i < len(s); {
		c := s[i]
		atLineStart := lineStart
		lineStart = c == '\n'
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return "", fmt.Errorf("character '\\' at byte offset %d escapes nothing", i)
			}
			r, n := utf8.DecodeRuneInString(s[i+1:])
			if r < 1 || r > 126 {
				b.WriteByte('\\') // not an escape: a literal backslash
				i++
				continue
			}
			b.WriteRune(r)
			i += 1 + n
		case c == '`':
			fence := "`"
			if strings.HasPrefix(s[i:], "```") {
				fence = "```"
			}
			text, n, err := mdCode(s[i+len(fence):], fence)
			if err != nil {
				return "", fmt.Errorf("%w (entity opened at byte offset %d)", err, i)
			}
			b.WriteString(text)
			i += len(fence) + n
		case c == '*':
			if err := toggle("bold", i); err != nil {
				return "", err
			}
			i++
		case c == '_' && strings.HasPrefix(s[i:], "__"):
			if err := toggle("underline", i); err != nil {
				return "", err
			}
			i += 2
		case c == '_':
			if err := toggle("italic", i); err != nil {
				return "", err
			}
			i++
		case c == '~':
			if err := toggle("strikethrough", i); err != nil {
				return "", err
			}
			i++
		case c == '|' && strings.HasPrefix(s[i:], "||"):
			if err := toggle("spoiler", i); err != nil {
				return "", err
			}
			i += 2
		case c == '[' || (c == '!' && strings.HasPrefix(s[i:], "![")):
			n := 1
			if c == '!' {
				n = 2
			}
			stack, opened = append(stack, "link"), append(opened, i)
			i += n
		case c == ']' && len(stack) > 0 && stack[len(stack)-1] == "link" && strings.HasPrefix(s[i:], "]("):
			n, err := mdURL(s[i+2:])
			if err != nil {
				return "", fmt.Errorf("%w (link at byte offset %d)", err, i)
			}
			stack, opened = stack[:len(stack)-1], opened[:len(opened)-1]
			i += 2 + n
		case c == '>' && atLineStart:
			i++ // blockquote marker
		case strings.IndexByte(mdReserved, c) >= 0:
			return "", fmt.Errorf("character '%c' is reserved and must be escaped with the preceding '\\' (byte offset %d)", c, i)
		default:
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("can't find end of %s entity at byte offset %d", stack[len(stack)-1], opened[len(opened)-1])
	}
	return b.String(), nil
}

// mdCode reads a code or pre entity's content up to the closing fence and
// returns the content (escapes removed; for pre, without the language line)
// and the bytes consumed including the fence.
func mdCode(s, fence string) (string, int, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\\' && i+1 < len(s) && (s[i+1] == '`' || s[i+1] == '\\'):
			b.WriteByte(s[i+1])
			i += 2
		case s[i] == '\\':
			return "", 0, fmt.Errorf("character '\\' inside code must be escaped")
		case strings.HasPrefix(s[i:], fence):
			text := b.String()
			if fence == "```" {
				if lang, rest, ok := strings.Cut(text, "\n"); ok && !strings.ContainsAny(lang, " \t") {
					text = rest
				}
			}
			return text, i + len(fence), nil
		case s[i] == '`':
			return "", 0, fmt.Errorf("character '`' inside code must be escaped")
		default:
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return "", 0, fmt.Errorf("can't find end of code entity")
}

// mdURL reads a link's URL up to its unescaped ')' and returns the bytes
// consumed including it.
func mdURL(s string) (int, error) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ')':
			if i == 0 {
				return 0, fmt.Errorf("empty URL")
			}
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("can't find end of a URL")
}
