package contextmgr

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/silas-ai/silas/messages"
)

// The rendered context tells the model who said what by the shape of a
// line: a block delimiter ("--- turn 3 | user | live ---"), a chronicle
// label ("[owner] owner: ...", "[external] customer: ...") or the answer
// label ("Silas: ..."). Only the harness may write such a line. Any line of
// content that could be read as one (a customer's text, a tool or work
// result, a memory, a subscription) is escaped: it is prefixed with a
// backslash, so that it reads as quoted text. A line is label-shaped when,
// after blanks, invisible characters and markdown decoration (> # * _ ` ~
// | - + • ·), it
//
//   - opens with "[" or any other opening bracket but "(" and "{"
//     (fullwidth ［, ⟦, 【, 〔 ...), whatever the word inside: so that no
//     spelling of a taint label, with lookalike letters or not, passes;
//   - or starts with a speaker word (silas, owner, user, customer, assistant,
//     system, developer, human, tool), in any case and with Cyrillic,
//     Greek, fullwidth or mathematical lookalike letters, before a colon
//     or a colon lookalike;
//   - or, trimmed, starts and ends with three dashes or dash lookalikes
//     (a forged block delimiter).
//
// Lines end at \n, \r, \v, \f, U+0085, U+2028 and U+2029: a reader (or a
// tokenizer) may take any of them for a new line.

// speakerWords are the words that, before a colon at the start of a line,
// read as a speaker label.
var speakerWords = [...]string{"silas", "owner", "user", "customer", "assistant", "system", "developer", "human", "tool"}

// maxSpeakerWord is the length of the longest speaker word.
const maxSpeakerWord = len("assistant")

// writeEscaped writes content and a final newline, escaping every
// label-shaped line; when keepFirst is set the first line is the harness's
// own (a chronicle label, a masked placeholder) and is written as it is.
func writeEscaped(b *strings.Builder, content string, keepFirst bool) {
	breaks := onlyNewlines(content)
	written := 0
	for start := 0; start < len(content); {
		end, next := nextBreak(content, start, breaks)
		if !(keepFirst && start == 0) && labelShaped(content[start:end]) {
			b.WriteString(content[written:start])
			b.WriteByte('\\')
			written = start
		}
		start = next
	}
	b.WriteString(content[written:])
	if !strings.HasSuffix(content, "\n") {
		b.WriteByte('\n')
	}
}

// writeItemContent writes an item's content, keeping the first line as it
// is when the harness wrote it (see harnessFirstLine).
func writeItemContent(b *strings.Builder, it *messages.ContextItem) {
	writeEscaped(b, it.Content, harnessFirstLine(it))
}

// harnessFirstLine reports whether the first line of it.Content is the
// harness's own: the "[taint] sender: " label of a user message (with the
// item's own taint), the "Silas: " label of an answer, a masked tool
// result's placeholder, or a note of the runtime. The rest of that line
// is not at a line start, so it cannot pass for a label.
func harnessFirstLine(it *messages.ContextItem) bool {
	switch {
	case it.Masked:
		return true
	case it.Kind == messages.KindSystem:
		return it.Taint == messages.TaintOwner && it.Source == "runtime"
	case it.Kind != messages.KindMessage:
		return false
	case strings.HasPrefix(it.Source, "channel:"):
		c := it.Content
		return it.Taint.Validate() == nil && len(c) > len(it.Taint)+3 && c[0] == '[' &&
			strings.HasPrefix(c[1:], string(it.Taint)) && strings.HasPrefix(c[1+len(it.Taint):], "] ")
	case strings.HasPrefix(it.Source, "agent:"):
		return strings.HasPrefix(it.Content, "Silas: ")
	}
	return false
}

// onlyNewlines reports whether "\n" is the only line break in s, so that
// lines can be found with the fast strings.IndexByte. The other breaks
// (\r, \v, \f, and the UTF-8 of U+0085, U+2028 and U+2029, which start
// with 0xC2 and 0xE2) are rare in text.
func onlyNewlines(s string) bool {
	for _, c := range [...]byte{'\r', '\v', '\f', 0xC2, 0xE2} {
		if strings.IndexByte(s, c) >= 0 {
			return false
		}
	}
	return true
}

// nextBreak returns the end of the line that starts at i and the start of
// the next one (len(s) for both at the end of s). onlyNL is onlyNewlines(s).
func nextBreak(s string, i int, onlyNL bool) (end, next int) {
	if onlyNL {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return len(s), len(s)
		}
		return i + j, i + j + 1
	}
	for j := i; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\n', c == '\r', c == '\v', c == '\f':
			return j, j + 1
		case c == 0xC2 && j+1 < len(s) && s[j+1] == 0x85: // U+0085
			return j, j + 2
		case c == 0xE2 && j+2 < len(s) && s[j+1] == 0x80 && (s[j+2] == 0xA8 || s[j+2] == 0xA9): // U+2028, U+2029
			return j, j + 3
		}
	}
	return len(s), len(s)
}

// firstLine returns s up to its first line break of any kind.
func firstLine(s string) string {
	end, _ := nextBreak(s, 0, false)
	return s[:end]
}

// labelShaped reports whether line could be read as a label or a block
// delimiter (see the top of this file).
func labelShaped(line string) bool {
	if line == "" {
		return false
	}
	if c := line[0]; c < utf8.RuneSelf && !mayStartLabel(c) {
		return false // most lines: a digit, a lower-case word, a paren
	}
	if delimiterShaped(line) {
		return true
	}
	rest := strings.TrimLeftFunc(line, func(r rune) bool { return isBlank(r) || isDecoration(r) })
	r, _ := utf8.DecodeRuneInString(rest)
	switch {
	case r == '[':
		return true
	case r >= utf8.RuneSelf && unicode.Is(unicode.Ps, r) && r != '（' && r != '｛':
		return true
	}
	return speakerShaped(rest)
}

// mayStartLabel reports whether an ASCII first byte may begin a
// label-shaped line: a blank, decoration, bracket or letter.
func mayStartLabel(c byte) bool {
	switch {
	case c == ' ', c == '\t', c == '[', c == '-', c == '>', c == '#', c == '*', c == '_', c == '`', c == '~', c == '|', c == '+':
		return true
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		return true
	}
	return false
}

// isBlank is a space or an invisible character (format characters such as
// zero-width spaces and bidi controls, combining marks on nothing).
func isBlank(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r)
}

// isDecoration is markdown decoration that may precede a label.
func isDecoration(r rune) bool {
	switch r {
	case '>', '#', '*', '_', '`', '~', '|', '-', '+', '•', '·':
		return true
	}
	return false
}

// delimiterShaped reports whether line, trimmed, starts and ends with three
// dashes or dash lookalikes.
func delimiterShaped(line string) bool {
	t := strings.TrimFunc(line, isBlank)
	return dashes(t, false) && dashes(t, true)
}

// dashes reports whether t starts (or, fromEnd, ends) with three dash-like
// runes.
func dashes(t string, fromEnd bool) bool {
	for range 3 {
		var r rune
		var n int
		if fromEnd {
			r, n = utf8.DecodeLastRuneInString(t)
			t = t[:len(t)-n]
		} else {
			r, n = utf8.DecodeRuneInString(t)
			t = t[n:]
		}
		if n == 0 || !isDash(r) {
			return false
		}
	}
	return true
}

// isDash is a hyphen-minus or a rune that looks like one: the Unicode
// dashes (Pd), minus signs and horizontal box-drawing lines.
func isDash(r rune) bool {
	switch {
	case r == '-':
		return true
	case r < utf8.RuneSelf:
		return false
	case r == '−', r == '⁃', r == '─', r == '━', r == '⎯', r == 'ー', r == '一', r == '﹣', r == '－':
		return true
	}
	return unicode.Is(unicode.Pd, r)
}

// speakerShaped reports whether s starts with a speaker word, folded to
// ASCII, then optional blanks and a colon.
func speakerShaped(s string) bool {
	var word [maxSpeakerWord]byte
	n := 0
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) {
			i += size
			continue
		}
		c := foldLetter(r)
		if c == 0 {
			break
		}
		if n == len(word) {
			return false
		}
		word[n] = c
		n++
		i += size
	}
	if n == 0 {
		return false
	}
	rest := strings.TrimLeftFunc(s[i:], isBlank)
	r, _ := utf8.DecodeRuneInString(rest)
	if !isColon(r) {
		return false
	}
	w := string(word[:n])
	for _, sw := range speakerWords {
		if w == sw {
			return true
		}
	}
	return false
}

// isColon is a colon or a rune that looks like one.
func isColon(r rune) bool {
	switch r {
	case ':', '：', '﹕', '︓', '꞉', '∶', '˸', '։', '׃', 'ː':
		return true
	}
	return false
}

// foldLetter returns the lower-case ASCII letter r is or looks like, or 0
// when r is no letter: ASCII, fullwidth and mathematical alphanumeric
// letters, and the Cyrillic and Greek letters that look like Latin ones.
func foldLetter(r rune) byte {
	switch {
	case 'a' <= r && r <= 'z':
		return byte(r)
	case 'A' <= r && r <= 'Z':
		return byte(r) + 'a' - 'A'
	case r < utf8.RuneSelf:
		return 0
	case 'ａ' <= r && r <= 'ｚ':
		return byte(r-'ａ') + 'a'
	case 'Ａ' <= r && r <= 'Ｚ':
		return byte(r-'Ａ') + 'a'
	case 0x1D400 <= r && r <= 0x1D6A3: // mathematical bold, italic, script ... A-Z a-z
		return byte((r-0x1D400)%52%26) + 'a'
	}
	lr := unicode.ToLower(r)
	if 'a' <= lr && lr <= 'z' { // the Kelvin sign
		return byte(lr)
	}
	if c, ok := lookalikes[lr]; ok {
		return c
	}
	if unicode.IsLetter(r) {
		return '?' // a letter, but no speaker word's
	}
	return 0
}

// lookalikes maps lower-case non-Latin letters to the Latin letters they are
// drawn like (Unicode's confusables, the ones that matter for the speaker
// words), and a few Latin variants.
var lookalikes = map[rune]byte{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ѕ': 's', 'і': 'i', 'ј': 'j', 'к': 'k', 'м': 'm', 'н': 'h',
	'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'һ': 'h', 'ԁ': 'd', 'ԝ': 'w',
	'ԛ': 'q', 'ӏ': 'l', 'ү': 'y', 'ѡ': 'w', 'п': 'n', 'г': 'r', 'ե': 'e',
	// Greek
	'α': 'a', 'β': 'b', 'ε': 'e', 'η': 'n', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p',
	'τ': 't', 'υ': 'u', 'χ': 'x', 'ω': 'w', 'μ': 'u', 'ς': 's', 'σ': 'o',
	// Latin variants
	'ı': 'i', 'ſ': 's', 'ʟ': 'l', 'ɪ': 'i', 'ᴏ': 'o', 'ᴜ': 'u', 'ᴡ': 'w', 'ʀ': 'r', 'ɴ': 'n',
	'ꜱ': 's', 'ᴇ': 'e', 'ᴀ': 'a', 'ᴛ': 't', 'ʜ': 'h', 'ᴅ': 'd', 'ᴠ': 'v', 'ᴍ': 'm',
	'ℓ': 'l', 'ⅰ': 'i', 'ⅼ': 'l', 'ⅴ': 'v', 'ⅿ': 'm', 'ⅽ': 'c', 'ⅾ': 'd',
	// Letterlike symbols: the letters the mathematical alphanumeric block
	// leaves out.
	'ℯ': 'e', 'ℴ': 'o', 'ℊ': 'g', 'ℎ': 'h', 'ℬ': 'b', 'ℰ': 'e', 'ℱ': 'f', 'ℋ': 'h', 'ℐ': 'i',
	'ℒ': 'l', 'ℳ': 'm', 'ℛ': 'r', 'ℭ': 'c', 'ℌ': 'h', 'ℑ': 'i', 'ℜ': 'r', 'ℨ': 'z',
	'ℂ': 'c', 'ℍ': 'h', 'ℕ': 'n', 'ℙ': 'p', 'ℚ': 'q', 'ℝ': 'r', 'ℤ': 'z',
}

// renderedTaint is the taint a block shows: an unset or unknown level shows
// as external, as it counts.
func renderedTaint(t messages.TaintLevel) messages.TaintLevel {
	if t.Validate() != nil {
		return messages.TaintExternal
	}
	return t
}
