package main

import (
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// A proxy's tell_user message shows in the stream at once, before the
// answer, marked as said while Silas works on it; the answer follows.
func TestPWAShowsInterimBeforeTheAnswer(t *testing.T) {
	mock := newMock(t)
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		if r.Schema != "RouteDecision" || !strings.Contains(currentMessage(r), "look it up") {
			return mockllm.Reply{}, false
		}
		for _, m := range r.Messages {
			if m.Role == "tool" { // the interim went out: answer
				return mockllm.Reply{Content: routeDecision("direct", "Here is what I found.")}, true
			}
		}
		return mockllm.Reply{ToolCalls: []mockllm.ToolCall{{ID: "c1", Name: "tell_user", Arguments: `{"message":"Looking it up now."}`}}}, true
	})
	d := startPWADaemon(t, mock, t.TempDir(), 0)
	p := openPWA(t, d.Addr(), 375, 812)
	p.login()
	p.say("please look it up")
	p.waitFor("the answer", hasText(".msg-silas .bubble", "Here is what I found."))
	order := eval[[]string](p, `[...document.querySelectorAll('.msg-silas .bubble')].map((b) => b.textContent)`)
	interim := eval[bool](p, `[...document.querySelectorAll('.msg-interim .bubble')].some((b) => b.textContent.includes('Looking it up now.'))`)
	if !interim || len(order) < 2 || !strings.Contains(order[len(order)-2], "Looking it up now.") || !strings.Contains(order[len(order)-1], "Here is what I found.") {
		t.Fatalf("silas's bubbles %q (interim marked: %v), want the interim, then the answer", order, interim)
	}
}
