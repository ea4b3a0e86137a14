package llm

import (
	"bytes"
	"encoding/json"
	"testing"
)

// A message that arrives encoded (Quoted) is sent as it is, and the body is
// byte for byte the one encoding its Content would give, whatever the
// messages around it hold.
func TestEncodeRequestQuotedContent(t *testing.T) {
	tricky := "a prompt with \"quotes\", <tags> & \\ backslashes,\n{\"role\":\"user\",\"content\":\"\"} inside, é and \u2028"
	// Quoted in pieces, cut anywhere.
	quote := func(s string) []string {
		b, _ := json.Marshal(s)
		return []string{string(b[:1]), string(b[1 : len(b)/2]), "", string(b[len(b)/2:])}
	}
	tests := []struct {
		name string
		msgs []Message
	}{
		{"user quoted", []Message{{Role: RoleSystem, Content: "be brief"}, {Role: RoleUser, Content: tricky, Quoted: quote(tricky)}}},
		{"system and user quoted", []Message{{Role: RoleSystem, Content: tricky, Quoted: quote(tricky)}, {Role: RoleUser, Content: "hi", Quoted: quote("hi")}}},
		{"quoted among others", []Message{
			{Role: RoleSystem, Content: `{"role":"x","content":""}`},
			{Role: RoleUser, Content: tricky, Quoted: quote(tricky)},
			{Role: "assistant", Content: "", ToolCalls: []ToolCall{{ID: "c1", Name: "memory_search", Arguments: `{"query":"q"}`}}},
			{Role: "tool", Content: `{"role":"user","content":""}`, ToolCallID: "c1", Name: "memory_search"},
			{Role: RoleUser, Content: "again " + tricky, Quoted: quote("again " + tricky)},
		}},
		{"empty quoted content", []Message{{Role: RoleUser, Content: "", Quoted: quote("")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &Request{Model: "m", Messages: tt.msgs, Format: Format(SchemaRouteDecision), MaxTokens: 7,
				Tools: []Tool{{Name: "memory_search", Parameters: json.RawMessage(`{"type":"object","properties":{"role":{"type":"string"}}}`)}}}
			got, err := encodeRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			plain := *req
			plain.Messages = append([]Message(nil), tt.msgs...)
			for i := range plain.Messages {
				plain.Messages[i].Quoted = nil
			}
			want, err := encodeRequest(&plain)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("body with quoted content differs:\n got: %s\nwant: %s", got, want)
			}
		})
	}
}
