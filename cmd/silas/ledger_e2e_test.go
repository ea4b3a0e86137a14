package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/persistence"
)

// auditEntry is one audit log entry with its data decoded.
type auditEntry struct {
	Event string
	Data  map[string]any
}

// auditEntries reads the audit log of a stopped daemon, in order.
func auditEntries(t *testing.T, dbDir string) []auditEntry {
	t.Helper()
	db, err := persistence.Open(context.Background(), persistence.Options{Dir: dbDir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, err := db.Audit().Range(context.Background(), 0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]auditEntry, 0, len(entries))
	for _, e := range entries {
		var data map[string]any
		_ = json.Unmarshal(e.Data, &data)
		out = append(out, auditEntry{Event: e.Event, Data: data})
	}
	return out
}

// auditNamed returns the entries of event.
func auditNamed(entries []auditEntry, event string) []auditEntry {
	var out []auditEntry
	for _, e := range entries {
		if e.Event == event {
			out = append(out, e)
		}
	}
	return out
}

// strList reads a JSON list of strings.
func strList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// approveAndFinish approves the next approval_request and returns the
// work_item_status events of id up to its final one.
func (c *client) approveAndFinish(id string) []event {
	c.t.Helper()
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	return c.statusesUntilFinal(id)
}

// statusesUntilFinal returns the work_item_status events of id up to its
// final status.
func (c *client) statusesUntilFinal(id string) []event {
	c.t.Helper()
	var out []event
	for {
		ev := c.next("work_item_status")
		if ev.str("work_item_id") != id {
			continue
		}
		out = append(out, ev)
		switch ev.str("status") {
		case "done", "failed", "stuck", "blocked":
			return out
		}
	}
}

// executorScript answers the executor with one tool call per model call,
// then with final.
func executorScript(final string, calls ...mockllm.ToolCall) func(r *mockllm.RecordedRequest) mockllm.Reply {
	return func(r *mockllm.RecordedRequest) mockllm.Reply {
		done := 0
		for _, m := range r.Messages {
			if m.Role == "tool" {
				done++
			}
		}
		if done < len(calls) {
			return mockllm.Reply{ToolCalls: []mockllm.ToolCall{calls[done]}}
		}
		return mockllm.Reply{Content: final}
	}
}

// scriptWork makes the planner propose markdown and the executor follow exec.
func scriptWork(mock *mockllm.Server, markdown string, exec func(r *mockllm.RecordedRequest) mockllm.Reply) {
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		switch r.Schema {
		case "RouteDecision":
			return mockllm.Reply{Content: routeDecision("planner", "")}, true
		case "AgentResponse":
			return mockllm.Reply{Content: planReply(markdown)}, true
		case "ExecutorAgentOutput":
			return exec(r), true
		}
		return mockllm.Reply{}, false
	})
}

func TestExecutorClaimsOnlyWhatTheLedgerShows(t *testing.T) {
	mock := newMock(t)
	scriptWork(mock, helloPlan, executorScript(
		`{"summary":"wrote the files","artifact_refs":["hello.txt","report.pdf"],"next_steps":[]}`,
		mockllm.ToolCall{ID: "call-1", Name: "shell_exec", Arguments: `{"command":"echo hi > hello.txt"}`}))
	dir := t.TempDir()
	d := startTest(t, loadConfig(t, overrides(t, mock, dir)))
	c := owner(t, d.Addr())

	c.say("please write hello.txt")
	evs := c.approveAndFinish("task-hello-file")
	last := evs[len(evs)-1]
	if last.str("status") != "done" {
		t.Fatalf("final status %v, want done", last)
	}
	if detail := last.str("detail"); !strings.Contains(detail, "Artifacts: hello.txt") || strings.Contains(detail, "report.pdf") {
		t.Fatalf("final detail %q, want hello.txt reported and the claimed report.pdf not", detail)
	}
	d.stop()

	entries := auditEntries(t, filepath.Join(dir, "db"))
	mm := auditNamed(entries, "artifact_ref_mismatch")
	if len(mm) != 1 || !slices.Equal(strList(mm[0].Data["claimed_not_produced"]), []string{"report.pdf"}) {
		t.Fatalf("artifact_ref_mismatch entries %+v, want one naming report.pdf", mm)
	}
	done := auditNamed(entries, "work_item_done")
	if len(done) != 1 || !slices.Equal(strList(done[0].Data["artifacts"]), []string{"hello.txt"}) {
		t.Fatalf("work_item_done %+v, want the artifacts [hello.txt] only", done)
	}
}
