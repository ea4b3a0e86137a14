package review

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/silas-ai/silas/messages"
)

// Limits of the card contract's text (spec 0.5.3: the body fits 300 px on
// a 375 px phone; longer content belongs in the details).
const (
	maxIntent    = 120
	maxRationale = 280
	maxLabel     = 60
	maxSummary   = 160
	maxDetail    = 4000
	maxDetails   = 24
)

// Spec is what a card says, before the contract's rules are applied.
type Spec struct {
	Intent    string
	Risk      Risk
	Rationale string
	CTAs      []messages.CardCTA
	// Affected is the count and summary of what the action touches; nil
	// when that does not apply.
	Affected *messages.AffectedItems
	Details  []messages.CardDetail
}

// Build returns the card contract of s (spec 0.5.3): the intent on one
// line, the rationale cut to two sentences, the CTAs in the enforced
// order (recommended, alternatives, decline), the details expanded for
// high and irreversible cards, and the rung an approving answer needs. It
// fails when a required field is missing, so no card goes out without
// one: every site builds through here.
func Build(s Spec) (messages.CardContract, error) {
	if !s.Risk.Valid() {
		return messages.CardContract{}, fmt.Errorf("%w: risk level %q", ErrCard, s.Risk)
	}
	intent := oneLine(s.Intent, maxIntent)
	if intent == "" {
		return messages.CardContract{}, fmt.Errorf("%w: no intent", ErrCard)
	}
	rationale := sentences(s.Rationale, 2, maxRationale)
	if rationale == "" {
		return messages.CardContract{}, fmt.Errorf("%w: card %q has no rationale", ErrCard, intent)
	}
	if len(s.CTAs) == 0 {
		return messages.CardContract{}, fmt.Errorf("%w: card %q has no answer", ErrCard, intent)
	}
	ctas := make([]messages.CardCTA, 0, len(s.CTAs))
	for _, c := range s.CTAs {
		c.ConsequenceLabel = oneLine(c.ConsequenceLabel, maxLabel)
		if c.Answer == "" || c.ConsequenceLabel == "" {
			return messages.CardContract{}, fmt.Errorf("%w: card %q has an answer without a value or a consequence label", ErrCard, intent)
		}
		if roleRank(c.Role) < 0 {
			return messages.CardContract{}, fmt.Errorf("%w: card %q: CTA role %q", ErrCard, intent, c.Role)
		}
		ctas = append(ctas, c)
	}
	slices.SortStableFunc(ctas, func(a, b messages.CardCTA) int { return roleRank(a.Role) - roleRank(b.Role) })
	out := messages.CardContract{
		Intent: intent, RiskLevel: string(s.Risk), Rationale: rationale, CTAs: ctas,
		DetailsExpanded: s.Risk == High || s.Risk == Irreversible, Confirmation: Required(s.Risk),
	}
	if a := s.Affected; a != nil {
		out.AffectedItems = &messages.AffectedItems{Count: a.Count, Summary: oneLine(a.Summary, maxSummary)}
	}
	for _, d := range s.Details {
		if len(out.Details) == maxDetails {
			break
		}
		if d.Label == "" || strings.TrimSpace(d.Value) == "" {
			continue
		}
		out.Details = append(out.Details, messages.CardDetail{Label: oneLine(d.Label, maxLabel), Value: clip(d.Value, maxDetail)})
	}
	return out, nil
}

// Approve, Alternative and Decline build CTAs of each role.
func Approve(answer, label string) messages.CardCTA {
	return messages.CardCTA{Answer: answer, ConsequenceLabel: label, Role: messages.CTARecommended}
}

// Alternative is a safe alternative answer.
func Alternative(answer, label string) messages.CardCTA {
	return messages.CardCTA{Answer: answer, ConsequenceLabel: label, Role: messages.CTAAlternative}
}

// Decline is the decline (or destructive) answer, shown last.
func Decline(answer, label string) messages.CardCTA {
	return messages.CardCTA{Answer: answer, ConsequenceLabel: label, Role: messages.CTADecline}
}

func roleRank(role string) int {
	switch role {
	case messages.CTARecommended:
		return 0
	case messages.CTAAlternative:
		return 1
	case messages.CTADecline:
		return 2
	}
	return -1
}

// oneLine returns the first non-empty line of s, trimmed and cut to max
// bytes at a rune boundary (with an ellipsis).
func oneLine(s string, max int) string {
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#>*- "))
		if line != "" {
			return clip(line, max)
		}
	}
	return ""
}

// sentences returns the first n sentences of s as one line, cut to max
// bytes. A sentence ends at . ! or ? followed by a space and a capital
// letter or a digit, so "hello.txt" does not end one.
func sentences(s string, n, max int) string {
	text := strings.Join(strings.Fields(strings.NewReplacer("#", "", "*", "", "`", "").Replace(s)), " ")
	end, count := len(text), 0
	for i := 0; i+2 < len(text); i++ {
		if c := text[i]; (c == '.' || c == '!' || c == '?') && text[i+1] == ' ' {
			if r, _ := utf8.DecodeRuneInString(text[i+2:]); r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '"' || r == '(' {
				if count++; count == n {
					end = i + 1
					break
				}
			}
		}
	}
	return clip(text[:end], max)
}

// clip cuts s to max bytes at a rune boundary, with an ellipsis when cut.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}
