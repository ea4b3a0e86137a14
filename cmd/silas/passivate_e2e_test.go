package main

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/runtime/metrics"
)

// metricValue reads one unlabelled metric from /metrics with the owner's
// token.
func metricValue(t *testing.T, addr, name string) float64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer owner-secret-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("metric %s not in /metrics", name)
	return 0
}

// TestIdleCustomerScopeIsPassivatedAndResumes: a customer who leaves has
// its scope stopped after rehydration.scope_idle_timeout_seconds; a
// customer still connected keeps its scope; the one who left comes back
// with its session token and the conversation goes on with its history,
// reloaded from the database.
func TestIdleCustomerScopeIsPassivatedAndResumes(t *testing.T) {
	mock := newMock(t)
	ov := overrides(t, mock, t.TempDir())
	ov["silas.rehydration.scope_idle_timeout_seconds"] = 1
	d := startTest(t, loadConfig(t, ov))
	addr := d.Addr()

	// stays is connected the whole time, and idle longer than leaves.
	stays := mustDial(t, addr, "/chat")
	stays.next("session")
	stays.answer(stays.say("hello, I stay connected"))

	leaves := mustDial(t, addr, "/chat")
	token := leaves.next("session").str("session_token")
	const fact = "my locker code is ZEBRA-5521"
	leaves.answer(leaves.say(fact))
	if got := metricValue(t, addr, metrics.NameScopesActive); got != 2 {
		t.Fatalf("%s = %v with two customers, want 2", metrics.NameScopesActive, got)
	}
	if err := leaves.conn.Close(); err != nil {
		t.Fatal(err)
	}

	checkFor(t, 20*time.Second, func() bool {
		return metricValue(t, addr, metrics.NameScopesPassivated) >= 1
	}, "the departed customer's scope to be passivated")
	// The connected customer's idle timer fired before the departed one's
	// (its last message came first), and its scope stayed.
	if got := metricValue(t, addr, metrics.NameScopesPassivated); got != 1 {
		t.Fatalf("%s = %v, want 1: a connected customer's scope was passivated", metrics.NameScopesPassivated, got)
	}
	checkFor(t, 5*time.Second, func() bool { return metricValue(t, addr, metrics.NameScopesActive) == 1 },
		"the Stream to forget the passivated scope")

	// The customer comes back: the session resumes, the scope reloads, and
	// the model sees what was said before it left.
	back := mustDial(t, addr, "/chat")
	back.next("session")
	back.send(map[string]any{"type": "auth", "session_token": token})
	if ev := back.next("session"); ev["resumed"] != true {
		t.Fatalf("session not resumed: %v", ev)
	}
	before := len(mock.Requests())
	back.answer(back.say("what was my locker code?"))
	reqs := requestsSince(mock, before)
	if len(reqs) == 0 {
		t.Fatal("the resumed turn made no model request")
	}
	text := requestText(&reqs[0])
	for _, want := range []string{fact, actors.RehydratedNote, "what was my locker code?"} {
		if !strings.Contains(text, want) {
			t.Errorf("the resumed turn's model request lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "hello, I stay connected") {
		t.Errorf("another customer's message reached this customer's context:\n%s", text)
	}
	if got := metricValue(t, addr, metrics.NameScopesActive); got != 2 {
		t.Errorf("%s = %v after the customer came back, want 2", metrics.NameScopesActive, got)
	}

	// The customer still connected never lost its scope: its next turn
	// needs no reload, so its context has no rehydration note.
	before = len(mock.Requests())
	stays.answer(stays.say("still here"))
	reqs = requestsSince(mock, before)
	if len(reqs) == 0 {
		t.Fatal("the connected customer's turn made no model request")
	}
	if text := requestText(&reqs[0]); strings.Contains(text, actors.RehydratedNote) || !strings.Contains(text, "hello, I stay connected") {
		t.Errorf("the connected customer's scope was reloaded or lost its history:\n%s", text)
	}
}
