package actors

import (
	"context"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
)

// TestFailedTurnCarriesItsKind: a turn whose model call fails is answered
// with the failure's kind and whether sending the message again may help,
// so a client offers "try again" only when it can work; the owner's text
// says what to fix.
func TestFailedTurnCarriesItsKind(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		kind      string
		retryable bool
		hint      string
	}{
		{"refused key", &llm.APIError{Status: 401, Body: "invalid key"}, "auth", false, "set a valid key"},
		{"unknown model", &llm.APIError{Status: 404, Body: "no such model"}, "bad_request", false, "check silas.models"},
		{"rate limited", &llm.APIError{Status: 429, Body: "slow down", Retryable: true}, "rate_limited", true, "wait a minute"},
		{"provider down", &llm.APIError{Status: 503, Body: "unavailable", Retryable: true}, "transient", true, "send it again in a moment"},
		{"content filter", &llm.APIError{Status: 400, Body: `{"code":"content_filter"}`}, "content_filter", false, "rephrase"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(context.Context, *llm.Request) (*llm.Response, error) { return nil, tc.err }, nil)
			c, s := h.ownerConn()
			c.Frame(&messages.Frame{Type: "message", Text: "hello", MessageID: "m1"})
			ans := s.wait(t, "answer", typed("message", "reply_to", "m1"))
			e, _ := ans["error"].(map[string]any)
			if e["kind"] != tc.kind || e["retryable"] != tc.retryable {
				t.Fatalf("answer error %v, want kind %s retryable %v", ans["error"], tc.kind, tc.retryable)
			}
			if text, _ := ans["text"].(string); !strings.Contains(text, tc.hint) {
				t.Fatalf("owner's text %q, want it to say %q", text, tc.hint)
			}
		})
	}
}

// TestAnsweredTurnCarriesNoError: a turn that went well has no error field.
func TestAnsweredTurnCarriesNoError(t *testing.T) {
	h := newHarness(t, func(context.Context, *llm.Request) (*llm.Response, error) { return direct("fine"), nil }, nil)
	c, s := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: "hello", MessageID: "m1"})
	if ans := s.wait(t, "answer", typed("message", "reply_to", "m1")); ans["error"] != nil {
		t.Fatalf("answer %v carries an error", ans)
	}
}
