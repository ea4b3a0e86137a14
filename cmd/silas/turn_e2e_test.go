package main

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/runtime/pipeline"
)

func TestOwnerGetsDirectAnswer(t *testing.T) {
	mock := newMock(t)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())

	id := c.say("hello silas")
	if ack := c.next("ack"); ack.str("message_id") != id {
		t.Fatalf("ack %v, want message_id %s", ack, id)
	}
	ans := c.answer(id)
	if want := mockllm.Echo("[auth] owner: hello silas"); !strings.Contains(ans.str("text"), "hello silas") {
		t.Fatalf("answer %q, want the mock's echo (%q)", ans.str("text"), want)
	}
	if ans.str("sender") == "" || ans.str("timestamp") == "" {
		t.Errorf("answer lacks sender or timestamp: %v", ans)
	}
	reqs := mock.Requests()
	if len(reqs) != 1 {
		t.Fatalf("mock got %d requests, want 1", len(reqs))
	}
	if reqs[0].Schema != "RouteDecision" || reqs[0].Model != proxyModel {
		t.Fatalf("request schema %q model %q, want RouteDecision and %s", reqs[0].Schema, reqs[0].Model, proxyModel)
	}
}

func TestTurnsOfOneScopeRunInOrder(t *testing.T) {
	mock := newMock(t)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())

	first := c.say("first question")
	second := c.say("second question")
	a1 := c.answer(first)
	c.answer(second)

	reqs := mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("mock got %d requests, want 2", len(reqs))
	}
	// The second model call must see the first answer in its context: it
	// started only after the first turn was committed and answered.
	if !strings.Contains(requestText(&reqs[1]), a1.str("text")) {
		t.Fatalf("second model call does not contain the first answer %q:\n%s", a1.str("text"), requestText(&reqs[1]))
	}
	if strings.Contains(requestText(&reqs[0]), "second question") {
		t.Fatal("first model call already saw the second message")
	}
}

func TestTurnsOfTwoCustomersOverlap(t *testing.T) {
	mock := newMock(t)
	// Each call waits until two calls are in flight: only overlapping turns
	// of different customers can both get there.
	var mu sync.Mutex
	arrived, both := 0, make(chan struct{})
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		mu.Lock()
		arrived++
		if arrived == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
			return routeDecision("direct", "hi "+r.LastUser()[len(r.LastUser())-1:]), 0, true
		case <-time.After(waitLimit):
			return "timed out waiting for the other customer's call", 500, true
		}
	})
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	a, b := mustDial(t, d.Addr(), "/chat"), mustDial(t, d.Addr(), "/chat")
	a.next("session")
	b.next("session")
	ida, idb := a.say("customer A"), b.say("customer B")
	a.answer(ida)
	b.answer(idb)
	if got := mock.Stats().MaxInFlight; got < 2 {
		t.Fatalf("max model calls in flight = %d, want 2", got)
	}
}

func TestPlannerRoute(t *testing.T) {
	mock := newMock(t)
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if r.Schema == "RouteDecision" {
			return routeDecision("planner", ""), 0, true
		}
		return `{"message":"a careful plan","memory_queries":[],"memory_ops":[],"plan_action":null,"needs_approval":false}`, 0, true
	})
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())
	id := c.say("plan my week")
	if got := c.answer(id).str("text"); got != "a careful plan" {
		t.Fatalf("answer %q, want the planner's", got)
	}
	reqs := mock.Requests()
	if len(reqs) != 2 || reqs[1].Schema != "AgentResponse" || reqs[1].Model != plannerModel {
		t.Fatalf("requests %+v, want RouteDecision then AgentResponse to %s", reqs, plannerModel)
	}
}

func TestCustomersAreIsolated(t *testing.T) {
	mock := newMock(t)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))

	a := mustDial(t, d.Addr(), "/chat")
	token := a.next("session").str("session_token")
	if token == "" {
		t.Fatal("first event of /chat has no session_token")
	}
	a.answer(a.say("my secret word is pineapple"))

	b := mustDial(t, d.Addr(), "/chat")
	b.next("session")
	b.answer(b.say("what is the secret word?"))

	// Customer A comes back with its token and still has its history.
	a2 := mustDial(t, d.Addr(), "/chat")
	a2.next("session")
	a2.send(map[string]any{"type": "auth", "session_token": token})
	if ev := a2.next("session"); ev["resumed"] != true {
		t.Fatalf("resume answered %v", ev)
	}
	a2.answer(a2.say("remind me"))

	reqs := mock.Requests()
	if len(reqs) != 3 {
		t.Fatalf("mock got %d requests, want 3", len(reqs))
	}
	if strings.Contains(requestText(&reqs[1]), "pineapple") {
		t.Fatal("customer A's words reached a model request made for customer B")
	}
	if !strings.Contains(requestText(&reqs[2]), "pineapple") {
		t.Fatal("resumed customer A lost its history")
	}
	if strings.Contains(requestText(&reqs[2]), "what is the secret word") {
		t.Fatal("customer B's words reached a model request made for customer A")
	}

	// A forged token is refused with 4001.
	f := mustDial(t, d.Addr(), "/chat")
	f.next("session")
	f.send(map[string]any{"type": "auth", "session_token": token + "x"})
	if code := f.closed(); code != 4001 {
		t.Fatalf("forged session token: close code %d, want 4001", code)
	}
}

func TestInvalidRouteDecisionIsRepairedOnce(t *testing.T) {
	mock := newMock(t)
	var mu sync.Mutex
	calls := 0
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return `{"route":"direct","reason":"missing fields"}`, 0, true
		}
		return routeDecision("direct", "repaired answer"), 0, true
	})
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())
	if got := c.answer(c.say("hi")).str("text"); got != "repaired answer" {
		t.Fatalf("answer %q, want the repaired one", got)
	}
	reqs := mock.Requests()
	if len(reqs) != 2 || !strings.Contains(requestText(&reqs[1]), "[SCHEMA VALIDATION ERROR]") {
		t.Fatalf("the retry does not carry the validation error: %d requests", len(reqs))
	}
}

func TestInvalidRouteDecisionTwiceFallsBack(t *testing.T) {
	mock := newMock(t)
	var mu sync.Mutex
	calls := 0
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls <= 2 {
			return `not json at all`, 0, true
		}
		return routeDecision("direct", "back to normal"), 0, true
	})
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())
	if got := c.answer(c.say("hi")).str("text"); got != pipeline.ProxyFallbackText {
		t.Fatalf("answer %q, want the proxy fallback", got)
	}
	if got := c.answer(c.say("again")).str("text"); got != "back to normal" {
		t.Fatalf("next turn answered %q", got)
	}
}

func TestMissingAPIKeyIsExplained(t *testing.T) {
	mock := newMock(t)
	ov := overrides(t, mock, t.TempDir())
	ov["silas.providers.openrouter.base_url"] = "https://openrouter.ai/api/v1"
	ov["silas.providers.openrouter.api_key_env"] = "TEST_UNSET_MODEL_KEY"
	d := startTest(t, loadConfig(t, ov))
	c := owner(t, d.Addr())
	got := c.answer(c.say("hi")).str("text")
	if !strings.Contains(got, "TEST_UNSET_MODEL_KEY") {
		t.Fatalf("answer %q does not name the missing key's variable", got)
	}
}

func TestHistorySurvivesRestart(t *testing.T) {
	mock := newMock(t)
	cfg := loadConfig(t, overrides(t, mock, t.TempDir()))
	d := startTest(t, cfg)
	c := owner(t, d.Addr())
	c.answer(c.say("my cat is called Miso"))
	d.stop()

	d2 := startTest(t, cfg)
	c2 := owner(t, d2.Addr())
	c2.answer(c2.say("what is my cat called?"))
	reqs := mock.Requests()
	last := requestText(&reqs[len(reqs)-1])
	for _, want := range []string{"my cat is called Miso", "Session rehydrated after restart"} {
		if !strings.Contains(last, want) {
			t.Errorf("model request after restart lacks %q:\n%s", want, last)
		}
	}
}
