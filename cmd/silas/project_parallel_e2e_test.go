package main

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/bench/mockllm"
)

// parallelPair is a project of two tasks that depend on nothing; outputs,
// when set, is both tasks' outputs line.
func parallelPair(outputs string) string {
	task := func(id, file string) string {
		return "```plan\n---\nid: " + id + "\ntype: task\ntitle: Write " + file + "\n" + outputs +
			"verify:\n  - name: wrote\n    run: \"test -f " + file + "\"\n    expect: { exit_code: 0 }\n---\n\nWRITE " + file + "\n```\n\n"
	}
	return "---\nid: project-pair\ntype: project\ntitle: Two at once\ntasks: [task-x, task-y]\n---\n\nTwo tasks.\n\n" +
		task("task-x", "x.txt") + task("task-y", "y.txt")
}

// executorsAtWork counts the tasks whose executor calls are in flight at
// the mock: a task enters at its first call and leaves when its last one is
// answered. hold, when set, holds each first call until both tasks are in
// flight (at most 10 s).
type executorsAtWork struct {
	mu   sync.Mutex
	now  map[string]bool
	max  int
	both chan struct{}
	hold bool
}

func (e *executorsAtWork) reply(r *mockllm.RecordedRequest) mockllm.Reply {
	_, rest, _ := strings.Cut(r.Messages[1].Content, "WRITE ")
	file, _, _ := strings.Cut(rest, "\n")
	if n := len(r.Messages); r.Messages[n-1].Role == "tool" {
		e.mu.Lock()
		delete(e.now, file)
		e.mu.Unlock()
		return writeNamedFile(r)
	}
	e.mu.Lock()
	e.now[file] = true
	e.max = max(e.max, len(e.now))
	if len(e.now) == 2 {
		close(e.both)
	}
	e.mu.Unlock()
	if e.hold {
		select {
		case <-e.both:
		case <-time.After(10 * time.Second):
		}
	}
	return writeNamedFile(r)
}

// runPair approves the project and returns its final status event.
func runPair(t *testing.T, e *executorsAtWork, plan string) event {
	mock := newMock(t)
	scriptWork(mock, plan, e.reply)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())
	c.say("please write x and y")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	for {
		ev := c.next("work_item_status")
		if ev.str("work_item_id") == "project-pair" && ev.str("status") != "running" {
			return ev
		}
	}
}

func TestProjectRunsIndependentTasksAtOnce(t *testing.T) {
	e := &executorsAtWork{now: map[string]bool{}, both: make(chan struct{}), hold: true}
	last := runPair(t, e, parallelPair(""))
	if last.str("status") != "done" {
		t.Fatalf("project %s: %s, want done", last.str("status"), last.str("detail"))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.max != 2 {
		t.Fatalf("the mock saw at most %d executors at work at once, want both tasks' together", e.max)
	}
}

func TestProjectTasksDeclaringTheSameOutputTakeTurns(t *testing.T) {
	e := &executorsAtWork{now: map[string]bool{}, both: make(chan struct{})}
	last := runPair(t, e, parallelPair("outputs: [x.txt, y.txt]\n"))
	if last.str("status") != "done" {
		t.Fatalf("project %s: %s, want done", last.str("status"), last.str("detail"))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.max != 1 {
		t.Fatalf("the mock saw %d executors at work at once, want one: the tasks declare the same outputs", e.max)
	}
}
