package away

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/persistence"
)

func TestIsQuestion(t *testing.T) {
	for text, want := range map[string]bool{
		"What did you do while I was away?":                           true,
		"what did you do while i slept":                               true,
		"Hey Silas, what happened while I was out?":                   true,
		"What did I miss?":                                            true,
		"what have you been up to since I left?":                      true,
		"What’s new since my last visit?":                             true,
		"what happened?":                                              false, // about something just said
		"what did you do":                                             false,
		"What did you do while I was away? Also email Bob the report": false,
		"Please summarize what happened while I was away in the Q3 report for the board, with charts and the numbers from last year's filing": false,
		"": false,
	} {
		if got := IsQuestion(text); got != want {
			t.Errorf("IsQuestion(%q) = %v, want %v", text, got, want)
		}
	}
}

func entry(at time.Time, scope, event string, data map[string]any) persistence.AuditEntry {
	b, _ := json.Marshal(data)
	return persistence.AuditEntry{Time: at, Scope: scope, Event: event, Data: b}
}

func TestSummarize(t *testing.T) {
	since := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return since.Add(time.Duration(m) * time.Minute) }
	entries := []persistence.AuditEntry{
		entry(at(-5), "owner", "approval_requested", nil), // before the visit: not counted
		entry(at(1), "owner", "turn_completed", nil),
		entry(at(2), "owner", "plan_proposed", map[string]any{"work_item_id": "w1", "title": "Back up the photos"}),
		entry(at(3), "owner", "approval_requested", map[string]any{"work_item_id": "w1"}),
		entry(at(4), "owner", "approval_granted", map[string]any{"work_item_id": "w1"}),
		entry(at(5), "owner", "execution_started", map[string]any{"work_item_id": "w1", "attempt": 1}),
		entry(at(6), "owner", "execution_started", map[string]any{"work_item_id": "w1", "attempt": 2}),
		entry(at(7), "owner", "work_item_done", map[string]any{"work_item_id": "w1"}),
		entry(at(8), "owner", "approval_requested", map[string]any{"work_item_id": "w2"}),
		entry(at(9), "owner", "approval_declined", map[string]any{"work_item_id": "w2", "reason": "no_owner_connection"}),
		entry(at(10), "owner", "goal_cycle", map[string]any{"goal_id": "site-up", "passed": true}),
		entry(at(11), "owner", "goal_cycle", map[string]any{"goal_id": "site-up", "passed": false}),
		entry(at(12), "owner", "turn_failed", map[string]any{"stage": "proxy"}),
		entry(at(13), "customer-7", "turn_completed", nil), // another scope
	}
	got := Summarize(entries, "owner", Window{Since: since, Now: at(60)})
	for _, want := range []string{
		"Since your last visit (2026-03-01 08:00:00 UTC, 1 hour ago)",
		"Answered 1 message.",
		`Worked on 1 task: "Back up the photos".`,
		`Finished 1: "Back up the photos".`,
		"Approvals: asked 2, you approved 1, declined 0; 1 ran out of time or found no app open.",
		"Ran 2 goal checks (site-up): 1 passed, 1 did not.",
		"1 problem: a reply could not be finished (at proxy).",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if again := Summarize(entries, "owner", Window{Since: since, Now: at(60)}); again != got {
		t.Error("the summary is not deterministic")
	}
	quiet := Summarize(entries[:1], "owner", Window{Since: since, Now: at(60), Truncated: true})
	if !strings.Contains(quiet, "Nothing") || !strings.Contains(quiet, "only its newest entries") {
		t.Errorf("quiet truncated summary:\n%s", quiet)
	}
}
