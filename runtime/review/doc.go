// Package review is the runtime's side of the decision cockpit (spec
// 0.5.2-0.5.4): it assigns every actionable card its risk level from the
// approval scope and the reversibility of what the approval lets Silas do,
// never from a model; it builds the card contract (intent, risk_level,
// rationale, consequence-labelled CTAs, affected items, details) in one
// place; and it says which rung of the confirmation ladder an approving
// answer must carry (Check), including the WebAuthn ceremonies behind the
// irreversible rung (webauthn.go).
//
// Like every engine under runtime/, it holds no goroutines and no actor
// references: it takes values and returns values.
package review
