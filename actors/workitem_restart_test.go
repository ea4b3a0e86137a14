package actors

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
)

// TestRestartedWorkItemResumesFromTheStore panics a scope's work item while
// its first attempt waits on the executor model. The restarted instance
// starts from the journaled record, not from the memory of the one that
// panicked: it sees what the store says (a marker the test wrote there), runs
// a fresh attempt, finishes once, and the stale attempt changes nothing.
func TestRestartedWorkItemResumesFromTheStore(t *testing.T) {
	h := newExecHarness(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	var once sync.Once
	h.onExec = func() {
		entered <- struct{}{}
		<-release
	}
	t.Cleanup(func() { once.Do(func() { close(release) }) })

	w := h.approved(t)
	stored := h.stored(t, w)
	got := make(chan messages.WorkItemStatusEvent, 16)
	pids := make(chan *actor.PID, 1)
	probe := actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			pids <- c.Spawn(workItemProps(h.d, "owner", stored))
		case *workItemProgress:
			got <- m.event
		}
	})
	probePID := h.d.sys.Root.Spawn(probe)
	t.Cleanup(func() { h.d.sys.Root.Stop(probePID) })
	pid := <-pids

	select {
	case <-entered: // attempt 1 waits on the executor; its start is journaled
	case <-time.After(20 * time.Second):
		t.Fatal("the first attempt never called the executor")
	}
	// The store is the truth after a crash: mark it.
	all, err := h.d.DB.WorkItems().List(t.Context(), "owner")
	if err != nil || len(all) != 1 || all[0].Attempts != 1 {
		t.Fatalf("stored %v (%v), want the item with attempt 1 journaled", all, err)
	}
	rec := all[0]
	rec.BudgetUsed.Tokens = 777
	if err := h.d.DB.WorkItems().Put(t.Context(), "owner", rec); err != nil {
		t.Fatal(err)
	}
	// A nil message makes onAttemptSpend dereference nil: a panic in Receive.
	h.d.sys.Root.Send(pid, (*attemptSpend)(nil))

	restarted := func() []map[string]any { return h.audited(t, "work_item_restarted") }
	deadline := time.Now().Add(20 * time.Second)
	for len(restarted()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no work_item_restarted audit entry")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := restarted()[0]; r["tokens"] != float64(777) || r["attempts"] != float64(1) {
		t.Fatalf("restarted from %v, want the stored record (777 tokens, attempt 1)", r)
	}
	once.Do(func() { close(release) })

	var finals []messages.WorkItemStatusEvent
	timeout := time.After(20 * time.Second)
	for len(finals) == 0 {
		select {
		case ev := <-got:
			if messages.WorkItemStatus(ev.Status).Final() {
				finals = append(finals, ev)
			}
		case <-timeout:
			t.Fatal("no final status after the restart")
		}
	}
	if finals[0].Status != string(messages.StatusDone) || finals[0].Attempt != 2 {
		t.Fatalf("final %+v, want done at attempt 2 (a fresh attempt after the restart)", finals[0])
	}
	if n := len(h.audited(t, "work_item_done")); n != 1 {
		t.Fatalf("%d work_item_done entries, want 1", n)
	}
}

// TestRestartedProjectTaskResumesFromTheStore panics a project's task while
// its first attempt waits on the executor model. The restarted task starts
// from its journaled record, as a scope's work item does, not from the copy
// of the plan the project started it from: it sees the marker the test put
// in the store, runs a fresh attempt, and the project finishes once.
func TestRestartedProjectTaskResumesFromTheStore(t *testing.T) {
	h := newExecHarness(t)
	h.exec = writesFromBriefing
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	var once sync.Once
	h.onExec = func() {
		entered <- struct{}{}
		<-release
	}
	t.Cleanup(func() { once.Do(func() { close(release) }) })

	// task-a may take a second attempt: the restart starts a fresh one.
	p := h.approvedPlan(t, strings.Replace(twoTaskProject(false), "budget: { max_attempts: 1 }\n", "", 1))
	got := make(chan *workItemProgress, 64)
	projects := make(chan *actor.PID, 1)
	probe := actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			projects <- c.Spawn(actor.PropsFromProducer(func() actor.Actor { return newProject(h.d, "owner", p) }))
		case *workItemProgress:
			got <- m
		}
	})
	probePID := h.d.sys.Root.Spawn(probe)
	t.Cleanup(func() { h.d.sys.Root.Stop(probePID) })
	project := <-projects

	select {
	case <-entered: // task-a's attempt 1 waits on the executor
	case <-time.After(20 * time.Second):
		t.Fatal("task-a never called the executor")
	}
	var rec *messages.WorkItem
	all, err := h.d.DB.WorkItems().List(t.Context(), "owner")
	for _, w := range all {
		if w.ID == "task-a" {
			rec = w
		}
	}
	if err != nil || rec == nil || rec.Attempts != 1 {
		t.Fatalf("stored %v (%v), want task-a with attempt 1 journaled", all, err)
	}
	rec.BudgetUsed.Tokens = 777
	if err := h.d.DB.WorkItems().Put(t.Context(), "owner", rec); err != nil {
		t.Fatal(err)
	}
	task := onlyChild(t, h.d.sys, project)
	h.d.sys.Root.Send(task, (*attemptSpend)(nil)) // a panic in Receive

	restarted := func() []map[string]any { return h.audited(t, "work_item_restarted") }
	deadline := time.Now().Add(20 * time.Second)
	for len(restarted()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no work_item_restarted audit entry: the task restarted from memory")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := restarted()[0]; r["tokens"] != float64(777) || r["attempts"] != float64(1) || r["work_item_id"] != "task-a" {
		t.Fatalf("restarted from %v, want task-a's stored record (777 tokens, attempt 1)", r)
	}
	once.Do(func() { close(release) })

	var evs []messages.WorkItemStatusEvent
	timeout := time.After(30 * time.Second)
	for len(evs) == 0 || evs[len(evs)-1].WorkItemID != p.ID || !messages.WorkItemStatus(evs[len(evs)-1].Status).Final() {
		select {
		case m := <-got:
			evs = append(evs, m.event)
		case <-timeout:
			t.Fatalf("no final project status; got %s", of(evs))
		}
	}
	if got := of(evs); !strings.HasSuffix(got, "task-a:done,task-b:running,task-b:done,project-ab:done") {
		t.Fatalf("statuses %s, want task-a done after the restart, then task-b, then the project", got)
	}
	for _, ev := range evs {
		if ev.WorkItemID == "task-a" && ev.Status == string(messages.StatusDone) && ev.Attempt != 2 {
			t.Fatalf("task-a done at attempt %d, want 2 (a fresh attempt after the restart)", ev.Attempt)
		}
	}
	if n := len(h.audited(t, "project_done")); n != 1 {
		t.Fatalf("%d project_done entries, want 1", n)
	}
}

// onlyChild finds the one child actor of parent: children are named
// "<parent>/$<n>", and a grandchild has a further "/".
func onlyChild(t *testing.T, sys *actor.ActorSystem, parent *actor.PID) *actor.PID {
	t.Helper()
	prefix := parent.Id + "/"
	var found []string
	for _, bucket := range sys.ProcessRegistry.LocalPIDs.LocalPIDs {
		for _, id := range bucket.Keys() {
			if rest, ok := strings.CutPrefix(id, prefix); ok && !strings.Contains(rest, "/") {
				found = append(found, id)
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("children of %s: %v, want one", parent.Id, found)
	}
	return actor.NewPID(sys.Address(), found[0])
}
