package cli

import (
	"encoding/json"
	"fmt"

	"github.com/silas-ai/silas/messages"
)

// Client → server frames are messages.Frame values (spec 8.1); these build
// the ones the CLI sends, with the fields each type carries.

func authFrame(token string) *messages.Frame {
	return &messages.Frame{Type: messages.TypeAuth, Token: token}
}

func messageFrame(text, id string) *messages.Frame {
	return &messages.Frame{Type: messages.TypeMessage, Text: text, MessageID: id}
}

// approvalFrame answers an approval_request whose risk_level is risk. An
// approval of a high card carries the slide confirmation the server
// requires (spec 0.5.2): in a terminal, the owner's typed answer to the
// card is that deliberate second step. An irreversible card needs a
// security key, which only the app has: the server refuses the answer
// and says so.
func approvalFrame(requestID, verdict, risk string) *messages.Frame {
	f := &messages.Frame{Type: messages.TypeApprovalResponse, RequestID: requestID, Verdict: verdict}
	if verdict == verdictApproved {
		f.Confirmation = typedConfirmation(risk)
	}
	return f
}

// typedConfirmation is the confirmation a typed approval of a card of
// risk carries: the slide for a high card, none below.
func typedConfirmation(risk string) json.RawMessage {
	if risk == "high" {
		return json.RawMessage(`{"method":"` + messages.ConfirmSlide + `"}`)
	}
	return nil
}

func gateFrame(requestID, verdict string) *messages.Frame {
	return &messages.Frame{Type: messages.TypeGateResponse, RequestID: requestID, Verdict: verdict}
}

// secureInputCompletedFrame tells the server that the value of ref was
// stored (or not). It carries the outcome only, never the value.
func secureInputCompletedFrame(ref string, stored bool) *messages.Frame {
	return &messages.Frame{Type: messages.TypeSecureInputCompleted, RefID: ref, Success: stored}
}

// Verdicts the CLI sends in approval_response and gate_response frames (the
// two values actors/connection.go accepts for a gate).
const (
	verdictApproved = "approved"
	verdictDeclined = "declined"
)

// event is one server → client frame as the session routes it: the
// envelope that routing and lockstep need, and the frame's bytes, which the
// handler of its type decodes into the messages type.
type event struct {
	Type string `json:"type"`
	// ReplyTo names the client message a "message" or "error" answers.
	ReplyTo string `json:"reply_to"`
	// Scope tells the kinds of approval_request apart (plan, skill_install,
	// connection_manage).
	Scope messages.ApprovalScope `json:"scope"`

	raw []byte
}

// decode reads ev's frame into v, the messages type of its Type.
func (ev event) decode(v any) error {
	if err := json.Unmarshal(ev.raw, v); err != nil {
		return fmt.Errorf("%s event: %w", ev.Type, err)
	}
	return nil
}

// isCard reports whether t is an interactive server event the CLI cannot
// answer; it says so instead of leaving the user waiting for the server's
// timeout.
func isCard(t string) bool {
	switch t {
	case "checkpoint", "batch_review", "draft_review", "decision",
		"suggestion", "autonomy_threshold_review":
		return true
	}
	return false
}
