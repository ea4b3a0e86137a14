// Package away answers the owner's "what did you do while I was away?"
// (spec 0.5 item 7) from the audit log, deterministically: counts and
// titles read from the hash-chained entries, no model. A model could
// word it more warmly, but it could also invent or drop an action, and
// this answer is the owner's check on what Silas did.
package away

import (
	"regexp"
	"strings"
	"unicode"
)

// questionRE matches the normalized question: lower case, apostrophes
// dropped, punctuation as spaces, spaces collapsed. "What did you do" and
// "what happened" need a "while I was away" or "since ..." clause, so that
// a question about something just said ("what happened?") is not taken
// for it; "what did I miss" stands alone.
var questionRE = regexp.MustCompile(`^(?:(?:hey|hi|so|ok|okay|silas) )*(?:` +
	`(?:what (?:did you do|did you get up to|have you done|have you been up to|happened|went on|did i miss)|anything happen|did anything happen|whats new)` +
	` (?:while i (?:was|were) (?:away|out|gone|offline|asleep|sleeping|afk|not here)|while i slept|while i was at work|since (?:my last visit|i was (?:last )?here|i left|last time|i last checked|we last talked))` +
	`|what did i miss` +
	`)(?: silas)?$`)

// maxQuestionLen bounds what is read as the question: a longer message
// asks for more than the summary and goes to the models.
const maxQuestionLen = 100

// IsQuestion reports whether an owner's message asks what Silas did while
// they were away.
func IsQuestion(text string) bool {
	if len(text) > maxQuestionLen {
		return false
	}
	return questionRE.MatchString(normalize(text))
}

func normalize(text string) string {
	text = strings.NewReplacer("'", "", "’", "").Replace(strings.ToLower(text))
	f := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return strings.Join(f, " ")
}
