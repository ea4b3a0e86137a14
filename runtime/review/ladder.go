package review

import (
	"fmt"

	"github.com/silas-ai/silas/messages"
)

// Rungs of the confirmation ladder (spec 0.5.2) as CardContract.Confirmation
// names them. "tap" and "chip" are the client's to enforce (no decision is
// ever throttled, spec 0.5.4); the server checks "slide" and "webauthn".
const (
	RungTap      = "tap"
	RungChip     = "chip"
	RungSlide    = messages.ConfirmSlide
	RungWebAuthn = messages.ConfirmWebAuthn
)

// Required returns the rung an approving answer to a card of risk r needs.
// An unknown level needs the most.
func Required(r Risk) string {
	switch r {
	case Low:
		return RungTap
	case Medium:
		return RungChip
	case High:
		return RungSlide
	}
	return RungWebAuthn
}

// Check reports whether an approving answer to a card of risk r may count.
// confirmed is what the Connection established for the answer
// (messages.ApprovalResponse.Confirmed): "" for a tap, ConfirmSlide, or
// ConfirmWebAuthn for an assertion the server verified. A higher rung
// satisfies a lower one. Declines need no rung: callers check approving
// answers only. The error says what the owner does next; nothing may run
// when it is not nil.
func Check(r Risk, confirmed string) error {
	have := 0
	switch confirmed {
	case messages.ConfirmSlide:
		have = 1
	case messages.ConfirmWebAuthn:
		have = 2
	}
	switch Required(r) {
	case RungSlide:
		if have < 1 {
			return fmt.Errorf("%w: approving this high-risk card needs the slide confirmation; answer it in the Silas app (Review) and slide to approve "+
				"(a client sends \"confirmation\":{\"method\":\"slide\"}). Nothing ran", ErrSlideRequired)
		}
	case RungWebAuthn:
		if have < 2 {
			return fmt.Errorf("%w: approving this irreversible card needs your security key; register one in the Silas app under Device > Security keys, "+
				"then approve the card there with the slide and the key. Nothing ran", ErrSecurityKeyRequired)
		}
	}
	return nil
}
