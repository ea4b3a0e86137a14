package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/runtime/llm"
)

// deltas records what a stream delivered, one string per attempt.
type deltas struct{ attempts []string }

func (d *deltas) on(x llm.Delta) {
	if x.Start {
		d.attempts = append(d.attempts, "")
		return
	}
	if len(d.attempts) == 0 {
		panic("content before Start")
	}
	d.attempts[len(d.attempts)-1] += x.Content
}

func TestClientStreamsFromTheMock(t *testing.T) {
	srv := startMock(t, mockllm.Options{})
	long := strings.Repeat("A long answer, streamed in pieces. ", 8) + "Fin."
	srv.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "tools") {
			return mockllm.Reply{ToolCalls: []mockllm.ToolCall{
				{ID: "c1", Name: "memory_search", Arguments: `{"query":"cats"}`},
				{ID: "c2", Name: "web_search", Arguments: `{"query":"dogs"}`},
			}, FinishReason: "tool_calls"}, true
		}
		return mockllm.Reply{Content: `{"message":"` + long + `"}`}, true
	})
	c := newClient(srv, &sleeps{}, nil)

	var d deltas
	req := userRequest("hello")
	req.Stream = d.on
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.attempts) != 1 || d.attempts[0] != resp.Content || resp.Content != `{"message":"`+long+`"}` {
		t.Fatalf("deltas %q, content %q", d.attempts, resp.Content)
	}
	if resp.FinishReason != "stop" || resp.Model != "mock/model" {
		t.Errorf("finish %q model %q", resp.FinishReason, resp.Model)
	}
	if u := resp.Usage; u.PromptTokens == 0 || u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens || !resp.CostReported {
		t.Errorf("usage %+v (cost reported %v): the stream's usage chunk was not read", u, resp.CostReported)
	}
	recs := srv.Requests()
	if len(recs) != 1 || !recs[0].Stream {
		t.Fatalf("the mock saw %d requests, streamed %v", len(recs), len(recs) == 1 && recs[0].Stream)
	}

	// Tool calls arrive whole.
	d = deltas{}
	req = userRequest("use tools")
	req.Stream = d.on
	resp, err = c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[1] != (llm.ToolCall{ID: "c2", Name: "web_search", Arguments: `{"query":"dogs"}`}) || resp.FinishReason != "tool_calls" {
		t.Fatalf("tool calls %+v finish %q", resp.ToolCalls, resp.FinishReason)
	}

	// Without Stream the request is not streamed.
	if _, err := c.Complete(context.Background(), userRequest("plain")); err != nil {
		t.Fatal(err)
	}
	if recs := srv.Requests(); recs[len(recs)-1].Stream {
		t.Error("a request without Stream was streamed")
	}
}

// sseServer answers every request with the body bodies[i] of its attempt
// (the last one repeats), as text/event-stream unless it starts with "{".
func sseServer(t *testing.T, bodies ...string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		b := bodies[min(i, len(bodies)-1)]
		if strings.HasPrefix(b, "{") {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		}
		fmt.Fprint(w, b)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

func chunk(content string) string {
	return fmt.Sprintf(`data: {"model":"m","choices":[{"index":0,"delta":{"content":%q}}]}`+"\n\n", content)
}

const (
	finish = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	usage  = `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}` + "\n\n"
	done   = "data: [DONE]\n\n"
)

func TestClientStreamWire(t *testing.T) {
	tests := []struct {
		name    string
		bodies  []string
		want    []string // content streamed per attempt
		content string
		errIs   error
		errKind llm.Kind
	}{
		{name: "comments, CRLF, no space after data:", bodies: []string{
			": OPENROUTER PROCESSING\r\n\r\n" + strings.ReplaceAll(chunk("Hel"), "\n", "\r\n") + "data:" + chunk("lo")[len("data: "):] + "event: x\nid: 1\n" + chunk("!") + finish + usage + done},
			want: []string{"Hello!"}, content: "Hello!"},
		{name: "DONE without its blank line", bodies: []string{chunk("ok") + finish + "data: [DONE]"}, want: []string{"ok"}, content: "ok"},
		{name: "server ignored stream", bodies: []string{`{"model":"m","choices":[{"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}`},
			want: []string{"whole"}, content: "whole"},
		{name: "interrupted then complete", bodies: []string{chunk("Hal") + chunk("f"), chunk("Full") + finish + done},
			want: []string{"Half", "Full"}, content: "Full"},
		{name: "interrupted every time", bodies: []string{chunk("cut") + finish},
			want: []string{"cut", "cut"}, errIs: llm.ErrStreamInterrupted, errKind: llm.KindTransient},
		{name: "error chunk mid-stream", bodies: []string{chunk("par") + `data: {"error":{"message":"upstream died","code":429}}` + "\n\n" + done},
			want: []string{"par", "par"}, errKind: llm.KindRateLimited},
		{name: "malformed chunk", bodies: []string{chunk("a") + "data: {not json\n\n" + done},
			want: []string{"a"}, errIs: llm.ErrInvalidResponse}, // not retried, as unstreamed
		{name: "empty body", bodies: []string{""}, want: []string{"", ""}, errIs: llm.ErrStreamInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := sseServer(t, tt.bodies...)
			c := llm.NewClient(llm.ClientOptions{BaseURL: srv.URL, MaxRetries: 1, Sleep: (&sleeps{}).sleep})
			var d deltas
			req := userRequest("hi")
			req.Stream = d.on
			resp, err := c.Complete(context.Background(), req)
			if fmt.Sprint(d.attempts) != fmt.Sprint(tt.want) {
				t.Errorf("streamed %q, want %q", d.attempts, tt.want)
			}
			if tt.errIs == nil && tt.errKind == "" {
				if err != nil {
					t.Fatal(err)
				}
				if resp.Content != tt.content {
					t.Errorf("content %q, want %q", resp.Content, tt.content)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; content %q", resp.Content)
			}
			if tt.errIs != nil && !errors.Is(err, tt.errIs) {
				t.Errorf("error %v, want %v", err, tt.errIs)
			}
			if tt.errKind != "" && llm.KindOf(err) != tt.errKind {
				t.Errorf("error %v has kind %s, want %s", err, llm.KindOf(err), tt.errKind)
			}
		})
	}
}

func TestClientStreamUsageAndToolCallPieces(t *testing.T) {
	body := `data: {"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"memory_search","arguments":""}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"query\":"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"cats\"}"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
		`data: {"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":4,"total_tokens":15,"cost":0.002}}` + "\n\n" + done
	srv, _ := sseServer(t, body)
	c := llm.NewClient(llm.ClientOptions{BaseURL: srv.URL})
	req := userRequest("hi")
	var d deltas
	req.Stream = d.on
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := llm.ToolCall{ID: "c1", Name: "memory_search", Arguments: `{"query":"cats"}`}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0] != want || resp.Content != "" || resp.FinishReason != "tool_calls" {
		t.Fatalf("response %+v", resp)
	}
	if resp.Usage != (llm.Usage{PromptTokens: 11, CompletionTokens: 4, TotalTokens: 15, CostUSD: 0.002}) || !resp.CostReported {
		t.Fatalf("usage %+v reported %v", resp.Usage, resp.CostReported)
	}
}

// A repair call of RunStructured streams too, after a Start: the consumer
// discards the invalid first answer it was shown.
func TestRunStructuredStreamsTheRepairAfterAStart(t *testing.T) {
	srv, n := sseServer(t, chunk(`{"message":`)+chunk(`"bad`)+finish+done, chunk(`{"message":"good"}`)+finish+done)
	c := llm.NewClient(llm.ClientOptions{BaseURL: srv.URL})
	req := userRequest("hi")
	x := llm.NewTextExtractor("message")
	var shown []string
	req.Stream = func(d llm.Delta) {
		if d.Start {
			x.Reset()
			shown = append(shown, "")
			return
		}
		shown[len(shown)-1] += x.Write(d.Content)
	}
	res, err := llm.RunStructured(context.Background(), c.Complete, req, func(s string) error {
		if s != `{"message":"good"}` {
			return errors.New("not good")
		}
		return nil
	})
	if err != nil || res.Calls != 2 || n.Load() != 2 {
		t.Fatalf("calls %v, requests %d: %v", res, n.Load(), err)
	}
	if fmt.Sprint(shown) != "[bad good]" {
		t.Fatalf("shown %q, want the first answer, then after a Start the repair", shown)
	}
}
