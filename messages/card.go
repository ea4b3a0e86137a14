package messages

// CardContract is the anatomy every actionable card shares (spec 0.5.3),
// sent as the "card" object of the server event that asks for a decision.
// runtime/review builds it, from the risk the runtime assigned (spec
// 0.5.2), so that every surface (the app, Telegram, the CLI) reads one
// intent, one risk level, one rationale and the same labelled answers.
type CardContract struct {
	// Intent is one line saying what the action does.
	Intent string `json:"intent"`
	// RiskLevel is low, medium, high or irreversible (spec 0.5.2); the
	// event's own risk_level is the same value.
	RiskLevel string `json:"risk_level"`
	// Rationale is one or two sentences saying why Silas proposes it.
	Rationale string `json:"rationale"`
	// CTAs are the answers in the enforced order: the recommended one
	// first, safe alternatives next, the decline (or destructive) one last.
	CTAs []CardCTA `json:"ctas"`
	// AffectedItems counts and summarizes what the action touches, when
	// that applies.
	AffectedItems *AffectedItems `json:"affected_items,omitempty"`
	// Details are the expandable rows (payload, checks, items).
	Details []CardDetail `json:"details,omitempty"`
	// DetailsExpanded is true for high and irreversible cards, whose
	// details show before the owner answers (spec 0.5.3).
	DetailsExpanded bool `json:"details_expanded"`
	// Confirmation names the rung an approving answer must climb: "tap",
	// "chip" (both checked by the client only), "slide" or "webauthn"
	// (both checked by the server; see Confirmation).
	Confirmation string `json:"confirmation"`
}

// CardCTA is one answer of a card with its consequence label.
type CardCTA struct {
	// Answer is the value the answer frame carries (a verdict, an action).
	Answer string `json:"answer"`
	// ConsequenceLabel says the concrete outcome ("Approve + run plan",
	// "Decline, run nothing").
	ConsequenceLabel string `json:"consequence_label"`
	// Role is recommended, alternative or decline; it fixes the order.
	Role string `json:"role"`
}

// CTA roles, in the order a card shows them.
const (
	CTARecommended = "recommended"
	CTAAlternative = "alternative"
	CTADecline     = "decline"
)

// AffectedItems is the count and a summary of what a card's action
// touches.
type AffectedItems struct {
	Count   int    `json:"count"`
	Summary string `json:"summary"`
}

// CardDetail is one row of a card's expandable details.
type CardDetail struct {
	Label string `json:"label"`
	Value string `json:"value"`
}
