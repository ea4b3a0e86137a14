package contextmgr

import (
	"regexp"
	"strings"
)

// The injection markers ScrubInjection removes. The regular expressions are
// compiled once and only read afterwards.
var (
	// Chat-template control tokens: <|im_start|>, <|im_end|>, <|system|>,
	// <|endoftext|>, <|eot_id|>, <|start_header_id|>, <|end_header_id|>,
	// and any other <|...|> token.
	reTemplateToken = regexp.MustCompile(`<\|[^|<>\n]{0,40}\|>`)
	// Role and instruction tags: <system>, </system>, <sys>, <instructions>,
	// <<SYS>>, [INST], [/INST], [SYSTEM].
	reRoleTag = regexp.MustCompile(`(?i)</?\s*(?:system|sys|instructions?)\s*>|<<\s*/?\s*sys\s*>>|\[/?\s*(?:inst|system)\s*\]`)
	// Role prefixes at the start of a line: "system:", "assistant:",
	// "### System:", "developer:".
	reRolePrefix = regexp.MustCompile(`(?im)^[ \t>#*]*(?:system|assistant|developer)\s*:`)
	// Forged context delimiters of spec 3.5: a line "--- ... ---".
	reDelimiter = regexp.MustCompile(`(?m)^[ \t]*-{3,}[^\n]*-{3,}[ \t]*$`)
	// Instruction overrides: "ignore/disregard/forget (all) (the)
	// previous/prior/above/earlier/system instructions/prompts/rules/
	// messages/context", "new instructions:", "you are now in developer
	// mode".
	reOverride = regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:previous|prior|above|earlier|preceding|system|original|existing)\s+(?:instructions?|prompts?|rules|directives?|messages?|context|guidelines)\b|\bnew\s+(?:system\s+)?instructions\s*:|\byou\s+are\s+now\s+in\s+(?:developer|god|jailbreak|dan)\s+mode\b`)
)

// ScrubMarker replaces every removed injection marker, so that a reader of
// the stored text sees that something was removed.
const ScrubMarker = "[filtered]"

// ScrubInjection removes prompt-injection markers from external-tainted
// content before it is persisted to memory or shown to a model as data
// (spec 5.7, 5.12). The marker set:
//
//   - invisible characters used to hide instructions: zero-width space and
//     joiners (U+200B..U+200D), U+2060, the byte-order mark U+FEFF, bidi
//     controls (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and Unicode
//     tag characters (U+E0000..U+E007F) are deleted;
//   - chat-template control tokens (<|im_start|> and any <|...|>);
//   - role and instruction tags (<system>, </instructions>, <<SYS>>,
//     [INST], [/INST], [SYSTEM]);
//   - role prefixes at the start of a line (system:, assistant:,
//     developer:);
//   - lines shaped like the context delimiters of spec 3.5 ("--- ... ---"),
//     which could forge a block boundary;
//   - instruction overrides ("ignore all previous instructions", "new
//     instructions:", "you are now in developer mode").
//
// Each marker but the invisible characters is replaced by ScrubMarker. The
// rest of the text is kept, so the content stays searchable.
func ScrubInjection(s string) string {
	s = dropInvisible(s)
	for _, m := range scrubbers {
		if m.may(s) {
			s = m.re.ReplaceAllLiteralString(s, ScrubMarker)
		}
	}
	return s
}

// dropInvisible deletes the invisible characters used to hide instructions.
func dropInvisible(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0x200B && r <= 0x200F, r == 0x2060, r == 0xFEFF,
			r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069,
			r >= 0xE0000 && r <= 0xE007F:
			return -1
		}
		return r
	}, s)
}

// scrubber is one marker expression and a cheap test that is true of every
// text the expression can match. Every customer message and answer passes
// through ScrubInjection, and almost none holds a marker, so the tests spare
// the regular expressions most of that work.
type scrubber struct {
	re  *regexp.Regexp
	may func(string) bool
}

var scrubbers = [...]scrubber{
	{reTemplateToken, func(s string) bool { return strings.Contains(s, "<|") }},
	{reRoleTag, func(s string) bool { return strings.ContainsAny(s, "<[") }},
	{reDelimiter, func(s string) bool { return strings.Contains(s, "---") }},
	{reRolePrefix, func(s string) bool { return strings.IndexByte(s, ':') >= 0 }},
	{reOverride, mayOverride},
}

// overrideWords are the words one of which every match of reOverride's
// first two alternatives holds; the third holds both "you" and "now".
var overrideWords = [...]string{"ignore", "disregard", "forget", "override", "bypass", "instructions"}

// mayOverride reports whether s may match reOverride. The expression folds
// case the Unicode way (the long s "ſ" matches "s", the Kelvin sign "K"
// matches "k"), so text beyond ASCII always runs it.
func mayOverride(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	for _, w := range overrideWords {
		if containsFoldASCII(s, w) {
			return true
		}
	}
	return containsFoldASCII(s, "you") && containsFoldASCII(s, "now")
}

// containsFoldASCII reports whether s holds word, a lower-case ASCII word,
// in any case.
func containsFoldASCII(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		j := 0
		for j < len(word) && s[i+j]|0x20 == word[j] {
			j++
		}
		if j == len(word) {
			return true
		}
	}
	return false
}
