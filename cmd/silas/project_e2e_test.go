package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// abProject is a project of two tasks, B depending on A; its own check
// needs both files. checkA is task A's check.
func abProject(checkA string) string {
	return `---
id: project-ab
type: project
title: Write a then b
tasks: [task-a, task-b]
verify:
  - name: both_files
    run: "test -f a.txt && test -f b.txt"
    expect: { exit_code: 0 }
---

# Overview
Task B builds on task A.

` + "```plan" + `
---
id: task-b
type: task
title: Write b
depends_on: [task-a]
verify:
  - name: b_exists
    run: "test -f b.txt"
    expect: { exit_code: 0 }
---

WRITE b.txt
` + "```" + `

` + "```plan" + `
---
id: task-a
type: task
title: Write a
budget: { max_attempts: 1 }
verify:
  - name: a_check
    run: "` + checkA + `"
    expect: { exit_code: 0 }
---

WRITE a.txt
` + "```" + `
`
}

// writeNamedFile is an executor that writes the file its briefing names
// after "WRITE ", then reports.
func writeNamedFile(r *mockllm.RecordedRequest) mockllm.Reply {
	if n := len(r.Messages); r.Messages[n-1].Role == "tool" {
		return mockllm.Reply{Content: `{"summary":"written","artifact_refs":[],"next_steps":[]}`}
	}
	_, rest, _ := strings.Cut(r.Messages[1].Content, "WRITE ")
	file, _, _ := strings.Cut(rest, "\n")
	return mockllm.Reply{ToolCalls: []mockllm.ToolCall{{ID: "call-1", Name: "shell_exec", Arguments: `{"command":"echo x > ` + strings.TrimSpace(file) + `"}`}}}
}

// projectStatuses approves the project and returns "id:status" of every
// status event up to the project's final one.
func projectStatuses(c *client) []string {
	c.t.Helper()
	req := c.next("approval_request")
	if !strings.Contains(req.str("body"), "WRITE b.txt") {
		c.t.Fatalf("the approval_request does not show the project's tasks: %v", req)
	}
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	var out []string
	for {
		ev := c.next("work_item_status")
		out = append(out, ev.str("work_item_id")+":"+ev.str("status"))
		if ev.str("work_item_id") == "project-ab" && ev.str("status") != "running" {
			return out
		}
	}
}

func TestProjectRunsItsTasksInOrder(t *testing.T) {
	mock := newMock(t)
	scriptWork(mock, abProject("test -f a.txt"), writeNamedFile)
	dir := t.TempDir()
	d := startTest(t, loadConfig(t, overrides(t, mock, dir)))
	c := owner(t, d.Addr())

	c.say("please write a then b")
	got := strings.Join(projectStatuses(c), ",")
	want := "project-ab:running,task-a:running,task-a:done,task-b:running,task-b:done,project-ab:done"
	if got != want {
		t.Fatalf("statuses %s, want %s", got, want)
	}
	d.stop()
	entries := auditEntries(t, filepath.Join(dir, "db"))
	if len(auditNamed(entries, "project_done")) != 1 || len(auditNamed(entries, "execution_blocked_no_approval")) != 0 {
		t.Fatal("the audit log has no project_done, or a task was refused its approval")
	}
}

func TestProjectStopsAtAFailedTask(t *testing.T) {
	mock := newMock(t)
	scriptWork(mock, abProject("test -f missing.txt"), writeNamedFile)
	dir := t.TempDir()
	d := startTest(t, loadConfig(t, overrides(t, mock, dir)))
	c := owner(t, d.Addr())

	c.say("please write a then b")
	got := strings.Join(projectStatuses(c), ",")
	if !strings.HasPrefix(got, "project-ab:running,task-a:running") || !strings.HasSuffix(got, "task-a:stuck,task-b:blocked,project-ab:failed") ||
		strings.Contains(got, "task-b:running") {
		t.Fatalf("statuses %s, want task-a stuck, task-b not run and the project failed", got)
	}
	for _, r := range executorCalls(mock) {
		if strings.Contains(r.Messages[1].Content, "WRITE b.txt") {
			t.Fatal("the executor ran task-b after task-a failed")
		}
	}
}
