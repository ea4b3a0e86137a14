package actors

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/plan"
)

// twoTaskProject: task-b depends on task-a; the project checks that both
// files exist. failA makes task-a's check fail with one attempt allowed.
func twoTaskProject(failA bool) string {
	checkA := "test -f a.txt"
	if failA {
		checkA = "test -f never.txt"
	}
	return "---\nid: project-ab\ntype: project\ntitle: A then B\ntasks: [task-b, task-a]\n" +
		"verify:\n  - name: both\n    run: \"test -f a.txt && test -f b.txt\"\n    expect: { exit_code: 0 }\n---\n\n" +
		"Two tasks.\n\n```plan\n---\nid: task-b\ntype: task\ntitle: Write b\ndepends_on: [task-a]\n" +
		"verify:\n  - name: b\n    run: \"test -f b.txt\"\n    expect: { exit_code: 0 }\n---\n\nWRITE b.txt\n```\n\n" +
		"```plan\n---\nid: task-a\ntype: task\ntitle: Write a\nbudget: { max_attempts: 1 }\n" +
		"verify:\n  - name: a\n    run: \"" + checkA + "\"\n    expect: { exit_code: 0 }\n---\n\nWRITE a.txt\n```\n"
}

// writesFromBriefing is an executor that writes the file its briefing names
// after "WRITE ".
func writesFromBriefing(req *llm.Request) *llm.Response {
	if n := len(req.Messages); req.Messages[n-1].Role == llm.RoleTool {
		return &llm.Response{Content: `{"summary":"written","artifact_refs":[],"next_steps":[]}`}
	}
	_, rest, _ := strings.Cut(req.Messages[1].Content, "WRITE ")
	file, _, _ := strings.Cut(rest, "\n")
	return &llm.Response{ToolCalls: []llm.ToolCall{shell("c1", "echo x > "+strings.TrimSpace(file))}}
}

// runProject runs w as a Project under a probe and returns every status
// event up to the project's final one.
func (h *execHarness) runProject(t *testing.T, w *messages.WorkItem) []messages.WorkItemStatusEvent {
	t.Helper()
	got := h.startProject(t, w)
	var out []messages.WorkItemStatusEvent
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-got:
			out = append(out, m.event)
			if m.final && m.event.WorkItemID == w.ID {
				return out
			}
		case <-deadline:
			t.Fatalf("no final project status within 30s; got %+v", out)
		}
	}
}

// of lists "id:status" for the events.
func of(evs []messages.WorkItemStatusEvent) string {
	var s []string
	for _, ev := range evs {
		s = append(s, ev.WorkItemID+":"+ev.Status)
	}
	return strings.Join(s, ",")
}

func TestProjectRunsTasksInDependencyOrder(t *testing.T) {
	h := newExecHarness(t)
	h.exec = writesFromBriefing
	evs := h.runProject(t, h.approvedPlan(t, twoTaskProject(false)))
	want := "project-ab:running,task-a:running,task-a:done,task-b:running,task-b:done,project-ab:done"
	if got := of(evs); got != want {
		t.Fatalf("statuses %s (%+v), want %s", got, evs, want)
	}
	if d := evs[len(evs)-1].Detail; !strings.Contains(d, "task-a: done, task-b: done") {
		t.Fatalf("project detail %q, want both tasks named", d)
	}
	if n := len(h.audited(t, "project_done")); n != 1 {
		t.Fatalf("%d project_done audit entries, want 1", n)
	}
}

func TestProjectStopsWhenATaskFails(t *testing.T) {
	h := newExecHarness(t)
	h.exec = writesFromBriefing
	evs := h.runProject(t, h.approvedPlan(t, twoTaskProject(true)))
	got := of(evs)
	if !strings.HasSuffix(got, "task-a:stuck,task-b:blocked,project-ab:failed") || strings.Contains(got, "task-b:running") {
		t.Fatalf("statuses %s, want task-a stuck, task-b not run and the project failed", got)
	}
	last := evs[len(evs)-1]
	if !strings.Contains(last.Detail, "task task-a ended stuck") || !strings.Contains(last.Detail, "not run: task-b") {
		t.Fatalf("project detail %q, want the failing task and the task not run", last.Detail)
	}
	if d := evs[len(evs)-2].Detail; !strings.Contains(d, "depends on task task-a") {
		t.Fatalf("task-b detail %q, want its dependency named", d)
	}
	for _, r := range h.calls() {
		if strings.Contains(r, "WRITE b.txt") {
			t.Fatal("the executor ran task-b after task-a failed")
		}
	}
}

func TestProjectTaskRunsOnlyAsApproved(t *testing.T) {
	h := newExecHarness(t)
	p := h.approvedPlan(t, twoTaskProject(false))
	tasks, err := plan.Tasks(p)
	if err != nil {
		t.Fatal(err)
	}
	a := tasks[0]
	if err := checkProjectTask(context.Background(), h.eng, p, a); err != nil {
		t.Fatalf("the approved task-a is refused: %v", err)
	}
	changed := *a
	changed.Body = "WRITE evil.txt"
	if err := checkProjectTask(context.Background(), h.eng, p, &changed); err == nil || !strings.Contains(err.Error(), "differs from the one approved") {
		t.Fatalf("a changed task-a: %v, want refused", err)
	}
	stranger := *a
	other := "project-other"
	stranger.Parent = &other
	if err := checkProjectTask(context.Background(), h.eng, p, &stranger); err == nil {
		t.Fatal("a task of another project ran under this project's approval")
	}
	// A project changed after its approval runs nothing.
	p.Body = strings.Replace(p.Body, "WRITE a.txt", "WRITE evil.txt", 1)
	evs := h.runProject(t, p)
	if got := of(evs); got != "project-ab:blocked" {
		t.Fatalf("statuses %s, want the changed project blocked", got)
	}
	if n := h.execCalls.Load(); n != 0 {
		t.Fatalf("a blocked project made %d executor calls", n)
	}
}

// calls returns the briefings the executor got: tests hook exec to see them.
func (h *execHarness) calls() []string {
	h.briefMu.Lock()
	defer h.briefMu.Unlock()
	return append([]string(nil), h.briefings...)
}

func TestResumedProjectSkipsItsDoneTasks(t *testing.T) {
	h := newExecHarness(t)
	h.exec = writesFromBriefing
	p := h.approvedPlan(t, twoTaskProject(false))
	p.Status = messages.StatusRunning
	p.TaskStatus = map[string]messages.WorkItemStatus{"task-a": messages.StatusDone}
	evs := h.runProject(t, h.stored(t, p))
	// task-a is not run again, so its a.txt is not among the files the
	// project checks: the project's own check fails.
	want := "project-ab:running,task-b:running,task-b:done,project-ab:failed"
	if got := of(evs); got != want {
		t.Fatalf("statuses %s, want %s", got, want)
	}
	if d := evs[len(evs)-1].Detail; !strings.Contains(d, "the project's checks failed: both") {
		t.Fatalf("project detail %q, want its check named", d)
	}
	for _, b := range h.calls() {
		if strings.Contains(b, "WRITE a.txt") {
			t.Fatal("the resumed project ran task-a again")
		}
	}
}
