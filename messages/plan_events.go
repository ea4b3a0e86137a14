package messages

import "time"

// Event types of the plan approval flow and work-item progress (spec 8.1).
const (
	EventApprovalRequest = "approval_request"
	EventWorkItemStatus  = "work_item_status"
)

// ApprovalRequestEvent asks the owner to approve a plan (server event
// `approval_request`). The client answers with `approval_response` carrying
// the same request_id. WorkItemID names the work item the plan becomes, so
// that a client can title its work_item_status events; ExpiresAt is when
// the server declines the request unanswered
// (silas.approval.request_timeout_seconds).
//
// Title, Body, Budget and Verify are the fields of spec 8.1, kept for
// clients that read only them; Plan carries every field the approval token
// signs, which a card must show before the owner can approve.
type ApprovalRequestEvent struct {
	Type       string              `json:"type"`
	RequestID  string              `json:"request_id"`
	WorkItemID string              `json:"work_item_id"`
	Title      string              `json:"title"`
	Body       string              `json:"body"`
	Budget     Budget              `json:"budget"`
	Verify     []VerificationCheck `json:"verify"`
	ExpiresAt  time.Time           `json:"expires_at"`
	Plan       PlanCard            `json:"plan"`
	// RiskLevel is the risk the runtime assigned from the approval scope
	// and the plan's reach (runtime/review, spec 0.5.2); Card is the card
	// contract of spec 0.5.3.
	RiskLevel string        `json:"risk_level"`
	Card      *CardContract `json:"card,omitempty"`
}

// WorkItemStatusEvent reports a work item's progress (server event
// `work_item_status`); Status is one of spec 19.2.1: running,
// verification_failed, done, failed, stuck or blocked.
type WorkItemStatusEvent struct {
	Type       string `json:"type"`
	WorkItemID string `json:"work_item_id"`
	Status     string `json:"status"`
	Attempt    int    `json:"attempt"`
	Detail     string `json:"detail"`
}

// Progress statuses of a work item (spec 19.2.1) that are not WorkItemStatus
// values.
const ProgressVerificationFailed = "verification_failed"

// ApprovalResponse is the owner's answer to an approval_request, sent by a
// Connection to its scope. Sink is the connection that answered, for errors.
type ApprovalResponse struct {
	RequestID string
	Verdict   ApprovalVerdict
	// Confirmed is the rung of the risk ladder the answer climbed beyond
	// its tap, as the Connection established it: "" (a tap),
	// ConfirmSlide (the client says so), or ConfirmWebAuthn (the server
	// verified an assertion over this request's challenge by a credential
	// the owner registered). Whoever owns the card compares it with the
	// card's risk (review.Check) before anything runs.
	Confirmed string
	Sink      Sink
}
