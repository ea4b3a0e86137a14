package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestRunStructuredToolCalls: with tools offered, an answer that calls them
// is handed back undecoded (the caller runs the loop); with tools forbidden
// (tool_choice none) or not offered, calls are an invalid answer, repaired
// once.
func TestRunStructuredToolCalls(t *testing.T) {
	tools := []Tool{{Name: "memory_search", Parameters: json.RawMessage(`{"type":"object"}`)}}
	calls := []ToolCall{{ID: "c1", Name: "memory_search", Arguments: `{"query":"cat"}`}}
	tests := []struct {
		name      string
		tools     []Tool
		choice    string
		script    func(s *Scripted)
		wantCalls int  // model calls made
		wantTools bool // the result hands back tool calls
		wantErr   error
	}{
		{"offered: calls returned", tools, "", func(s *Scripted) { s.QueueToolCalls(calls...) }, 1, true, nil},
		{"offered: repair answer calls tools", tools, "", func(s *Scripted) { s.QueueContent(`{`); s.QueueToolCalls(calls...) }, 2, true, nil},
		{"offered: plain answer decoded", tools, "", func(s *Scripted) { s.QueueContent(`{}`) }, 1, false, nil},
		{"forbidden: calls are invalid", tools, ToolChoiceNone, func(s *Scripted) { s.QueueToolCalls(calls...); s.QueueToolCalls(calls...) }, 2, false, ErrStructuredOutputInvalid},
		{"forbidden: repaired", tools, ToolChoiceNone, func(s *Scripted) { s.QueueToolCalls(calls...); s.QueueContent(`{}`) }, 2, false, nil},
		{"not offered: calls are invalid", nil, "", func(s *Scripted) { s.QueueToolCalls(calls...); s.QueueToolCalls(calls...) }, 2, false, ErrStructuredOutputInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewScripted(nil)
			tt.script(s)
			req := &Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}, Tools: tt.tools, ToolChoice: tt.choice}
			decoded := 0
			res, err := RunStructured(context.Background(), s.Complete, req, func(c string) error {
				decoded++
				if c != "{}" {
					return errors.New("not {}")
				}
				return nil
			})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if res.Calls != tt.wantCalls || s.Calls() != tt.wantCalls {
				t.Fatalf("%d calls (%d made), want %d", res.Calls, s.Calls(), tt.wantCalls)
			}
			gotTools := res.Response != nil && len(res.Response.ToolCalls) > 0
			if gotTools != tt.wantTools {
				t.Fatalf("tool calls handed back: %v, want %v", gotTools, tt.wantTools)
			}
			if gotTools && res.Response.ToolCalls[0].Name != "memory_search" {
				t.Fatalf("calls %+v", res.Response.ToolCalls)
			}
			for _, r := range s.Requests() {
				if r.ToolChoice != tt.choice || len(r.Tools) != len(tt.tools) {
					t.Fatalf("a call changed the tools: %+v", r)
				}
			}
		})
	}
}

func TestEncodeRequestToolChoice(t *testing.T) {
	tools := []Tool{{Name: "t", Parameters: json.RawMessage(`{"type":"object"}`)}}
	for _, tt := range []struct {
		req  *Request
		want string
	}{
		{&Request{Model: "m", Tools: tools, ToolChoice: ToolChoiceNone}, `"tool_choice":"none"`},
		{&Request{Model: "m", Tools: tools}, ""},
		// Without tools there is nothing to choose: tool_choice is left out.
		{&Request{Model: "m", ToolChoice: ToolChoiceNone}, ""},
	} {
		b, err := encodeRequest(tt.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), "tool_choice"); got != (tt.want != "") || (tt.want != "" && !strings.Contains(string(b), tt.want)) {
			t.Errorf("body %s, want %q", b, tt.want)
		}
	}
}
