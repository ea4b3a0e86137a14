package actors

import "github.com/silas-ai/silas/messages"

// webError builds the error event a client sees, with a message that says
// what to do next.
func webError(code messages.Code, text, requestType string) *messages.ErrorEvent {
	return &messages.ErrorEvent{Type: "error", Code: code, Message: text, RequestType: requestType}
}
