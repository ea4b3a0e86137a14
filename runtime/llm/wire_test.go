package llm

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestEncodeRequest(t *testing.T) {
	temp := 0.2
	tests := []struct {
		name string
		req  *Request
		want string
	}{
		{
			name: "minimal",
			req:  &Request{Model: "m", Messages: []Message{{Role: RoleUser, Content: "hi"}}},
			want: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		},
		{
			name: "tool round trip with format and limits",
			req: &Request{
				Model: "openai/gpt-4o",
				Messages: []Message{
					{Role: RoleSystem, Content: "sys"},
					{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "shell_exec", Arguments: `{"cmd":"ls"}`}}},
					{Role: RoleTool, ToolCallID: "c1", Name: "shell_exec", Content: "a.txt"},
				},
				Tools:       []Tool{{Name: "shell_exec", Description: "run", Parameters: json.RawMessage(`{"type":"object"}`)}},
				Format:      &ResponseFormat{Name: "ScorerOutput", Schema: json.RawMessage(`{"type":"object"}`)},
				MaxTokens:   100,
				Temperature: &temp,
			},
			want: `{"model":"openai/gpt-4o","messages":[` +
				`{"role":"system","content":"sys"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"shell_exec","arguments":"{\"cmd\":\"ls\"}"}}]},` +
				`{"role":"tool","content":"a.txt","tool_call_id":"c1","name":"shell_exec"}],` +
				`"tools":[{"type":"function","function":{"name":"shell_exec","description":"run","parameters":{"type":"object"}}}],` +
				`"response_format":{"type":"json_schema","json_schema":{"name":"ScorerOutput","strict":true,"schema":{"type":"object"}}},` +
				`"max_tokens":100,"temperature":0.2}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeRequest(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("body\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDecodeResponse(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		want       *Response
		wantErr    error
		wantStatus int
	}{
		{
			name: "content and openrouter cost",
			body: `{"model":"x/y","choices":[{"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13,"cost":0.0025}}`,
			want: &Response{Content: "hello", Model: "x/y", FinishReason: "stop", Usage: Usage{PromptTokens: 10, CompletionTokens: 3, TotalTokens: 13, CostUSD: 0.0025}, CostReported: true},
		},
		{
			name: "a cost of zero is reported",
			body: `{"model":"m:free","choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"cost":0}}`,
			want: &Response{Content: "hi", Model: "m:free", FinishReason: "stop", Usage: Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}, CostReported: true},
		},
		{
			name: "tool calls with null content and no total",
			body: `{"model":"m","choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"web_search","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":4,"completion_tokens":2}}`,
			want: &Response{ToolCalls: []ToolCall{{ID: "c1", Name: "web_search", Arguments: "{}"}}, Model: "m", FinishReason: "tool_calls", Usage: Usage{PromptTokens: 4, CompletionTokens: 2, TotalTokens: 6}},
		},
		{name: "not json", body: `<html>`, wantErr: ErrInvalidResponse},
		{name: "no choices", body: `{"choices":[]}`, wantErr: ErrInvalidResponse},
		{name: "error in 200 with code", body: `{"error":{"message":"upstream overloaded","code":503}}`, wantStatus: 503},
		{name: "error in 200 without numeric code", body: `{"error":{"message":"boom","code":"x"}}`, wantStatus: 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeResponse([]byte(tt.body))
			if tt.wantStatus != 0 {
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.Status != tt.wantStatus || !apiErr.Retryable {
					t.Fatalf("err = %v, want retryable *APIError with status %d", err, tt.wantStatus)
				}
				return
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tt.want)
			if string(gj) != string(wj) {
				t.Errorf("response\n got %s\nwant %s", gj, wj)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"}, // é is two bytes; never split it
		{"éé", 3, "é"},
	}
	for _, tt := range tests {
		if got := truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestEncodeRequestPreEncodedFormat: a format from Format is spliced in
// pre-encoded, and the body means the same as one encoded in full.
func TestEncodeRequestPreEncodedFormat(t *testing.T) {
	f := Format(SchemaRouteDecision)
	req := &Request{Model: "m", Messages: []Message{{Role: RoleUser, Content: "hi"}}, Format: f, MaxTokens: 5}
	spliced, err := encodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	req.Format = &ResponseFormat{Name: f.Name, Schema: f.Schema}
	full, err := encodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	if err := json.Unmarshal(spliced, &a); err != nil {
		t.Fatalf("spliced body is not JSON: %v\n%s", err, spliced)
	}
	if err := json.Unmarshal(full, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("spliced body differs:\n%s\n%s", spliced, full)
	}
}
