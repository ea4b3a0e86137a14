package llm

import (
	"encoding/json"
	"strings"
)

// Text is the message's text: Content, or, when only the encoding was
// given, Quoted decoded. Callers that send the message over the wire never
// need it; it is for models run in process and for tests, which read the
// prompt as text.
func (m *Message) Text() string {
	if m.Content != "" || m.Quoted == nil {
		return m.Content
	}
	var s string
	if err := json.Unmarshal([]byte(strings.Join(m.Quoted, "")), &s); err != nil {
		return ""
	}
	return s
}
