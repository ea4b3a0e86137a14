package messages

import "time"

// EventMessage is the type of the server event that answers a turn (spec
// 8.1 `message`).
const EventMessage = "message"

// AnswerEvent is the server event `message`: the answer to the client
// message whose message_id is ReplyTo. A redelivered answer (after a
// reconnect or a crash) has the same bytes, so a client drops one whose
// reply_to it already has.
type AnswerEvent struct {
	Type      string    `json:"type"` // always "message"
	Text      string    `json:"text"`
	Sender    string    `json:"sender"`
	Timestamp time.Time `json:"timestamp"`
	ReplyTo   string    `json:"reply_to"`
	Register  string    `json:"interaction_register,omitempty"`
	Mode      string    `json:"interaction_mode,omitempty"`
	// Error is set when the turn failed: what kind of failure, and whether
	// sending the message again may help.
	Error *TurnError `json:"error,omitempty"`
}

// EventMessageDelta is the type of the server event that carries a piece
// of an answer while the model still writes it (beyond spec 8.1).
const EventMessageDelta = "message_delta"

// MessageDeltaEvent is the server event `message_delta`: the next piece of
// the answer to ReplyTo, sent only when no policy-lane output gate has to
// see the whole answer first. Pieces are appended in order; Reset says to
// discard the text shown so far first (the model started its answer again:
// a retry, a fallback model, the repair of an invalid structured answer),
// and then Delta may be empty. It is a preview: not stored, never
// redelivered, only to the connections attached at that moment. The answer
// itself is the `message` event with the same reply_to, unchanged, which
// replaces the preview; a client that ignores deltas loses nothing.
type MessageDeltaEvent struct {
	Type    string `json:"type"` // always "message_delta"
	ReplyTo string `json:"reply_to"`
	Delta   string `json:"delta"`
	Reset   bool   `json:"reset,omitempty"`
}

// EventInterim is the type of the server event that carries an interim
// message: what the proxy told the user (its tell_user tool, spec 19.3)
// while it works on the answer to ReplyTo.
const EventInterim = "interim"

// InterimEvent is the server event `interim`. It goes out at once, before
// the answer, and only to the connections attached at that moment: it is
// not stored, never redelivered, and the answer (the `message` event with
// the same reply_to) does not repeat it. A client shows it as a passing
// note from Silas; one that ignores it loses nothing the answer needs.
type InterimEvent struct {
	Type string `json:"type"` // always "interim"
	// ID is unique per interim message, for a client to drop a duplicate.
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	Sender    string    `json:"sender"`
	Timestamp time.Time `json:"timestamp"`
	ReplyTo   string    `json:"reply_to"`
}

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

// TurnError rides on the `message` event that answers a turn which failed
// (a model call that failed, a stage that crashed): the answer text says
// what happened in words, and this says it to a program. A client may offer
// "try again" only when Retryable is true; for the other kinds the same
// message fails the same way until the operator fixes something.
type TurnError struct {
	// Kind is a model-call kind of runtime/llm (transient, rate_limited,
	// auth, bad_request, content_filter, invalid_output) or "internal" for
	// a crash of the runtime itself.
	Kind      string `json:"kind"`
	Retryable bool   `json:"retryable"`
}

// TurnErrorInternal is the kind of a turn that crashed inside the runtime.
const TurnErrorInternal = "internal"
