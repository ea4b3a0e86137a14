package messages

// Code is a stable, machine-readable error code sent to clients in
// ErrorEvent.Code and in the JSON bodies of HTTP errors. Codes never change
// meaning; clients may switch on them.
type Code string

// The error codes. Their default messages are in Code.Message.
const (
	CodeInvalidJSON      Code = "invalid_json"
	CodeUnknownType      Code = "unknown_type"
	CodeFrameTooLarge    Code = "frame_too_large"
	CodeRateLimited      Code = "rate_limited"
	CodeUnauthorized     Code = "unauthorized"
	CodeAuthTimeout      Code = "auth_timeout"
	CodeBusy             Code = "busy"
	CodeNotSupported     Code = "not_supported"
	CodeInternal         Code = "internal"
	CodeNotFound         Code = "not_found"
	CodeForbidden        Code = "forbidden"
	CodeMethodNotAllowed Code = "method_not_allowed"
	CodeUnavailable      Code = "unavailable"
	CodeBadRequest       Code = "bad_request"
	CodeHostNotAllowed   Code = "host_not_allowed"
	CodeTooManySockets   Code = "too_many_connections"
	CodeIdleTimeout      Code = "idle_timeout"
	// CodeConfirmationRequired refuses an approving answer that skipped a
	// rung of the risk ladder (spec 0.5.2), or whose security key check
	// failed; the card stays pending and nothing ran.
	CodeConfirmationRequired Code = "confirmation_required"
)

// codeInfo is one row of the code table.
type codeInfo struct {
	Code    Code
	Message string
}

// codeTable is the one table of codes and their default messages, each
// saying what the client should do. It is an array value, so reading it
// allocates nothing and nobody can change it.
func codeTable() [18]codeInfo {
	return [...]codeInfo{
		{CodeInvalidJSON, "The frame is not a JSON object with a string \"type\" field; fix the frame and send it again."},
		{CodeUnknownType, "The server does not know this frame type; check the client against the protocol of spec 8.1."},
		{CodeFrameTooLarge, "The frame is larger than the server accepts; send a shorter message. The connection will close."},
		{CodeRateLimited, "Too many messages from your address; the frame was dropped. Wait a few seconds and send it again."},
		{CodeUnauthorized, "Authentication is missing or invalid; reconnect and authenticate with a valid token."},
		{CodeAuthTimeout, "No authentication arrived in time; reconnect and send {\"type\":\"auth\",\"token\":...} first."},
		{CodeBusy, "Too many messages are waiting for a reply; wait for the current reply, then send again."},
		{CodeNotSupported, "This is not supported here; send JSON text frames as described in spec 8.1."},
		{CodeInternal, "Something went wrong on the server; try again, and check the server log if it persists."},
		{CodeNotFound, "Nothing is served at this path; check the URL."},
		{CodeForbidden, "This request is not allowed from here; use the same origin, or a valid bearer token."},
		{CodeMethodNotAllowed, "This path does not accept this HTTP method; check the method."},
		{CodeUnavailable, "The server is shutting down; reconnect in a moment."},
		{CodeBadRequest, "The request or frame is malformed; the message names the field to fix. /ws and /chat accept only WebSocket upgrades."},
		{CodeHostNotAllowed, "This server does not answer to this host name; the operator adds it to silas.channels.web.allowed_hosts."},
		{CodeTooManySockets, "Too many connections are open; close one or try again later."},
		{CodeIdleTimeout, "No message arrived in time, so the connection was closed; reconnect when you want to talk."},
		{CodeConfirmationRequired, "This answer needs a stronger confirmation (the slide, or your security key); nothing ran. Answer the card again in the Silas app."},
	}
}

// Codes returns every code, in table order.
func Codes() []Code {
	t := codeTable()
	cs := make([]Code, len(t))
	for i, e := range t {
		cs[i] = e.Code
	}
	return cs
}

// Message returns the code's default human message; an unknown code gets
// the message of CodeInternal.
func (c Code) Message() string {
	var internal string
	for _, e := range codeTable() {
		if e.Code == c {
			return e.Message
		}
		if e.Code == CodeInternal {
			internal = e.Message
		}
	}
	return internal
}

// ErrorEvent is the server event the transport (and the session side) sends
// when it refuses or drops a client frame: {"type":"error",...}.
type ErrorEvent struct {
	Type        string `json:"type"` // always "error"
	Code        Code   `json:"code"`
	Message     string `json:"message"`
	RequestType string `json:"request_type,omitempty"` // type of the frame that caused it, if known
	Field       string `json:"field,omitempty"`        // the frame field to fix (bad_request), if any
}

// NewError returns an ErrorEvent for code with its default message.
func NewError(code Code, requestType string) *ErrorEvent {
	return &ErrorEvent{Type: "error", Code: code, Message: code.Message(), RequestType: requestType}
}
