package messages

import "encoding/json"

// Client frame types of spec 8.1.
const (
	TypeAuth                         = "auth"
	TypeMessage                      = "message"
	TypeApprovalResponse             = "approval_response"
	TypeGateResponse                 = "gate_response"
	TypeCheckpoint                   = "checkpoint"
	TypeBatchReviewResponse          = "batch_review_response"
	TypeDraftReviewResponse          = "draft_review_response"
	TypeDecisionResponse             = "decision_response"
	TypeSuggestionResponse           = "suggestion_response"
	TypeAutonomyThresholdResponse    = "autonomy_threshold_response"
	TypeSecureInputCompleted         = "secure_input_completed"
	TypeConnectionSetupResponse      = "connection_setup_response"
	TypePermissionEscalationResponse = "permission_escalation_response"
	TypeConnectionFailureResponse    = "connection_failure_response"
	// TypeReceived (beyond spec 8.1) confirms that the client has the
	// answer whose reply_to it names; without reply_to it turns receipts
	// on for the connection. An answer handed to a connection with
	// receipts on counts as delivered only once confirmed, and goes out
	// again on the next connection if this one closes first.
	TypeReceived = "received"
)

// IsClientType reports whether t is one of the client frame types of spec
// 8.1. The transport passes every well-formed frame to the Conn; a Conn that
// meets another type answers with CodeUnknownType.
func IsClientType(t string) bool {
	switch t {
	case TypeAuth, TypeMessage, TypeApprovalResponse, TypeGateResponse, TypeCheckpoint,
		TypeBatchReviewResponse, TypeDraftReviewResponse, TypeDecisionResponse,
		TypeSuggestionResponse, TypeAutonomyThresholdResponse, TypeSecureInputCompleted,
		TypeConnectionSetupResponse, TypePermissionEscalationResponse, TypeConnectionFailureResponse,
		TypeReceived:
		return true
	}
	return false
}

// Frame is one decoded client frame: its type plus the union of the client
// fields of spec 8.1 and the owner-signature fields. Every channel turns
// what its clients send into Frames, so the session side reads one
// protocol. Absent fields (and JSON null) are zero. Unknown fields are
// ignored; they remain in Raw.
type Frame struct {
	Type            string   `json:"type"`
	Token           string   `json:"token,omitempty"`
	SessionToken    string   `json:"session_token,omitempty"`
	Text            string   `json:"text,omitempty"`
	MessageID       string   `json:"message_id,omitempty"`
	SenderID        string   `json:"sender_id,omitempty"`
	RequestID       string   `json:"request_id,omitempty"`
	Verdict         string   `json:"verdict,omitempty"`
	SelectedItemIDs []string `json:"selected_item_ids,omitempty"`
	EditedText      string   `json:"edited_text,omitempty"`
	SelectedValue   string   `json:"selected_value,omitempty"`
	Freetext        string   `json:"freetext,omitempty"`
	RefID           string   `json:"ref_id,omitempty"`
	Success         bool     `json:"success,omitempty"`
	StepType        string   `json:"step_type,omitempty"`
	Action          string   `json:"action,omitempty"`
	SelectedAction  string   `json:"selected_action,omitempty"`
	ReplyTo         string   `json:"reply_to,omitempty"`
	// Receipts on an auth frame turns receipts on for the connection from
	// its first answer (see TypeReceived).
	Receipts bool `json:"receipts,omitempty"`
	// Confirmation is the rung of the risk ladder an answer climbed beyond
	// its tap (a JSON object, see Confirmation): {"method":"slide"}, or
	// {"method":"webauthn","assertion":...}. The Connection decodes and
	// checks it; nil when absent or null.
	Confirmation json.RawMessage `json:"confirmation,omitempty"`

	// Owner signature (spec 3.1 SignedMessage): the base64 Ed25519 signature
	// over the canonical {"nonce","text","timestamp"} object, the nonce, and
	// the ISO-8601 timestamp.
	Signature string `json:"signature,omitempty"`
	Nonce     string `json:"nonce,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`

	// Raw is a copy of the frame as received, for signature checks and
	// audit. It is the Frame's own; nothing else refers to it.
	Raw []byte `json:"-"`
}
