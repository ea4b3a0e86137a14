package messages

// EventGateApproval is the type of the server event that asks the owner to
// approve what a gate holds (spec 8.1 `gate_approval`); the client answers
// with a `gate_response` frame carrying the same request_id.
const EventGateApproval = "gate_approval"

// GateApprovalEvent is the server event `gate_approval` (spec 8.1).
type GateApprovalEvent struct {
	Type      string `json:"type"` // always "gate_approval"
	RequestID string `json:"request_id"`
	GateName  string `json:"gate_name"`
	// Value is the value the gate checked; Context the evaluation context
	// (the message or response, the sender, a tool call's arguments).
	Value   any            `json:"value"`
	Context map[string]any `json:"context"`
}
