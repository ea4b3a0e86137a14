package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// calmGoal is an active goal (the chatbot lane: its gates and escalations
// apply to customer turns) whose gate suppresses answers with an
// exclamation mark and has them rephrased, at most twice, then falls back
// to a fixed answer.
const calmGoal = `---
id: goal-calm
type: goal
title: Stay calm
gates:
  - name: no_shouting
    on: every_agent_response
    provider: predicate
    type: regex
    config: { pattern: "^[^!]*$" }
    on_block: rephrase
escalation:
  rephrase:
    action: suppress_and_rephrase
    instruction: "Answer calmly, without exclamation marks."
    max_retries: 2
    fallback: calm_fallback
  calm_fallback:
    action: respond
    message: "Let me come back to you on that."
---

Keep every answer calm.
`

// startCalm starts a daemon with calmGoal active and connects a customer;
// shout decides whether the proxy's answer to a request shouts.
func startCalm(t *testing.T, shout func(r *mockllm.RecordedRequest) bool) (*testDaemon, *mockllm.Server, *client) {
	t.Helper()
	mock := newMock(t)
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if r.Schema != "RouteDecision" {
			return "", 0, false
		}
		if shout(r) {
			return routeDecision("direct", "BUY NOW!!! It is the best!"), 0, true
		}
		return routeDecision("direct", "It is a good product, and here is why."), 0, true
	})
	dir := t.TempDir()
	goal := filepath.Join(dir, "goal.md")
	if err := os.WriteFile(goal, []byte(calmGoal), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startTest(t, loadGateConfig(t, mock, dir, "  active_goal: \""+goal+"\"\n"))
	c := mustDial(t, d.Addr(), "/chat")
	c.next("session")
	return d, mock, c
}

func routeCalls(mock *mockllm.Server) []mockllm.RecordedRequest {
	var out []mockllm.RecordedRequest
	for _, r := range mock.Requests() {
		if r.Schema == "RouteDecision" {
			out = append(out, r)
		}
	}
	return out
}

// The first answer trips the goal's policy gate; the agent is asked again
// with the gate's feedback and the escalation's instruction, and the client
// sees only the rephrased answer.
func TestSuppressAndRephrase(t *testing.T) {
	d, mock, c := startCalm(t, func(r *mockllm.RecordedRequest) bool {
		return !strings.Contains(r.LastUser(), "[GATE FEEDBACK]")
	})

	id := c.say("should I buy it?")
	// Every event up to the answer: nothing of the suppressed answer may
	// reach the client.
	var got string
	for got == "" {
		ev := c.nextAny()
		if strings.Contains(fmt.Sprint(ev), "BUY NOW") {
			t.Fatalf("the suppressed answer reached the client: %v", ev)
		}
		if ev.str("type") == "message" && ev.str("reply_to") == id {
			got = ev.str("text")
		}
	}
	if got != "It is a good product, and here is why." {
		t.Fatalf("answer %q, want the rephrased answer", got)
	}
	calls := routeCalls(mock)
	if len(calls) != 2 {
		t.Fatalf("%d proxy calls, want the answer and one rephrase", len(calls))
	}
	again := calls[1].LastUser()
	for _, want := range []string{"no_shouting", "Answer calmly, without exclamation marks."} {
		if !strings.Contains(again, want) {
			t.Errorf("the rephrase request does not carry %q", want)
		}
	}
	if strings.Contains(again, "BUY NOW") {
		t.Error("the suppressed answer was fed back to the agent")
	}
	waitAudit(t, d, "gate_retry", "no_shouting")
}

// When every rephrase still trips the gate, max_retries bounds the
// re-runs and the fallback escalation answers.
func TestSuppressAndRephraseFallsBack(t *testing.T) {
	d, mock, c := startCalm(t, func(*mockllm.RecordedRequest) bool { return true })

	if got := c.answer(c.say("should I buy it?")).str("text"); got != "Let me come back to you on that." {
		t.Fatalf("answer %q, want the fallback's message", got)
	}
	if n := len(routeCalls(mock)); n != 3 {
		t.Fatalf("%d proxy calls, want the answer and max_retries=2 rephrases", n)
	}
	waitAudit(t, d, "gate_retries_exhausted", "no_shouting")
}
