package telegram

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Silas writes Telegram messages in HTML parse mode, not MarkdownV2. In HTML
// exactly three characters need escaping (& < >), the same everywhere in
// the text; MarkdownV2 reserves eighteen, with other rules inside code and
// link URLs, so one missed character in a model's answer makes Telegram
// refuse the whole message. HTML also keeps an escape sequence in one place
// (&amp;) where a splitter can see and keep it whole.

// MaxMessageLen is Telegram's limit on a message's text. Telegram counts
// the text after parsing; Split counts the escaped text, in UTF-16 code
// units, which is never less, so a chunk that fits here fits there.
const MaxMessageLen = 4096

// minSplitLimit is the smallest limit Split accepts: the longest escape
// (&amp;) must fit in a chunk.
const minSplitLimit = 8

// EscapeHTML escapes text for Telegram's HTML parse mode.
func EscapeHTML(text string) string {
	return htmlEscaper.Replace(text)
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escapedLen is the length of r once escaped, in UTF-16 code units.
func escapedLen(r rune) int {
	switch r {
	case '&':
		return len("&amp;")
	case '<', '>':
		return len("&lt;")
	}
	return utf16.RuneLen(r)
}

// RenderText turns a plain-text answer into messages: escaped for HTML
// parse mode, split as Split does, chunks with nothing but white space left
// out (Telegram refuses them and trims white space anyway). An answer with
// no visible text yields no messages.
func RenderText(text string) []string {
	var out []string
	for _, chunk := range Split(text, MaxMessageLen) {
		if strings.TrimSpace(chunk) == "" {
			continue
		}
		out = append(out, EscapeHTML(chunk))
	}
	return out
}

// Split cuts text into chunks whose escaped length is at most limit
// (clamped to [8, MaxMessageLen]), so that the chunks concatenated give text
// back (invalid UTF-8 replaced by U+FFFD, which Telegram would refuse).
// Each cut falls, by preference, after a blank line (paragraph), then after
// a line break, then after a space, and only failing those between two
// runes; a boundary is taken only in the second half of the room available,
// so that a short first paragraph does not cost an extra message. Cuts are
// made in the unescaped text, so an escape sequence is never split.
func Split(text string, limit int) []string {
	limit = min(max(limit, minSplitLimit), MaxMessageLen)
	s := strings.ToValidUTF8(text, "\uFFFD")
	var out []string
	for s != "" {
		end, cost := 0, 0
		for i, r := range s {
			c := escapedLen(r)
			if cost+c > limit {
				break
			}
			cost += c
			end = i + utf8.RuneLen(r)
		}
		if end == len(s) {
			out = append(out, s)
			break
		}
		cut := bestCut(s[:end])
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// bestCut returns where to end a chunk taken from the window w (which fits
// but is followed by more text): after the last paragraph break, line break
// or white space in w's second half, else at w's end.
func bestCut(w string) int {
	half := len(w) / 2
	if i := strings.LastIndex(w, "\n\n"); i >= 0 && i+2 > half {
		return i + 2
	}
	if i := strings.LastIndexByte(w, '\n'); i >= 0 && i+1 > half {
		return i + 1
	}
	if i := strings.LastIndexFunc(w, unicode.IsSpace); i >= 0 {
		_, n := utf8.DecodeRuneInString(w[i:])
		if i+n > half {
			return i + n
		}
	}
	return len(w)
}

// truncateHTML escapes text and, when the escaped form is over limit UTF-16
// code units, cuts it (between runes) and ends it with "…", so that one
// message holds it. Cards use it: a card is one message, never a split.
func truncateHTML(text string, limit int) string {
	s := strings.ToValidUTF8(text, "\uFFFD")
	total := 0
	for _, r := range s {
		total += escapedLen(r)
	}
	if total <= limit {
		return EscapeHTML(s)
	}
	cost := 0
	for i, r := range s {
		c := escapedLen(r)
		if cost+c > limit-1 { // room for the "…"
			return EscapeHTML(s[:i]) + "…"
		}
		cost += c
	}
	return EscapeHTML(s)
}
