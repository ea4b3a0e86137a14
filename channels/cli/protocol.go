package cli

import (
	"encoding/json"

	"github.com/silas-ai/silas/messages"
)

// Client → server frames (spec 8.1).

type authFrame struct {
	Type  string `json:"type"` // "auth"
	Token string `json:"token"`
}

type messageFrame struct {
	Type      string `json:"type"` // "message"
	Text      string `json:"text"`
	MessageID string `json:"message_id"`
}

type approvalResponseFrame struct {
	Type      string `json:"type"` // "approval_response"
	RequestID string `json:"request_id"`
	Verdict   string `json:"verdict"` // "approved" or "declined"
}

// Approval verdicts the CLI sends.
const (
	verdictApproved = "approved"
	verdictDeclined = "declined"
)

// event is any server → client frame; fields unused by a type stay empty.
type event struct {
	Type string `json:"type"`

	// message
	Text      string `json:"text"`
	Sender    string `json:"sender"`
	Timestamp string `json:"timestamp"`
	ReplyTo   string `json:"reply_to"`

	// error
	Code    string `json:"code"`
	Message string `json:"message"`

	// approval_request
	RequestID string          `json:"request_id"`
	Title     string          `json:"title"`
	Body      string          `json:"body"`
	Budget    json.RawMessage `json:"budget"`
	Verify    json.RawMessage `json:"verify"`
	// Plan is every field the approval token signs; nil from a server
	// that sends only the fields of spec 8.1.
	Plan *messages.PlanCard `json:"plan"`
	// Scope is "skill_install" on a skill's install card, which Skill
	// then holds (SKILL.md, every script, the reports).
	Scope string              `json:"scope"`
	Skill *messages.SkillCard `json:"skill"`

	// skill_install_result
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`

	// raw is the frame as received: the connection cards decode it into
	// their messages types (conncard.go).
	raw []byte
	// card is set on a queued connection card.
	card *connCard
}

// isCard reports whether t is an interactive server event the CLI cannot
// answer; it says so instead of leaving the user waiting for the server's
// timeout.
func isCard(t string) bool {
	switch t {
	case "gate_approval", "checkpoint", "batch_review", "draft_review", "decision",
		"suggestion", "autonomy_threshold_review":
		return true
	}
	return false
}
