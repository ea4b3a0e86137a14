package actors

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/plan"
)

// holdTimeout bounds how long the executor hook holds a call: a test that
// waits for an overlap that never comes fails after it instead of hanging.
const holdTimeout = 10 * time.Second

// parTask is one task of a test project: it writes file; outputs and
// deps are its outputs and depends_on; fail makes its check fail (one
// attempt).
type parTask struct {
	id, file string
	outputs  []string
	deps     []string
	fail     bool
}

// parallelProject is a project of the tasks, without checks of its own.
func parallelProject(tasks ...parTask) string {
	var ids []string
	var b strings.Builder
	for _, t := range tasks {
		ids = append(ids, t.id)
		check := "test -f " + t.file
		fmt.Fprintf(&b, "```plan\n---\nid: %s\ntype: task\ntitle: Write %s\n", t.id, t.file)
		if t.fail {
			check = "test -f never.txt"
			b.WriteString("budget: { max_attempts: 1 }\n")
		}
		if len(t.outputs) > 0 {
			fmt.Fprintf(&b, "outputs: [%s]\n", strings.Join(t.outputs, ", "))
		}
		if len(t.deps) > 0 {
			fmt.Fprintf(&b, "depends_on: [%s]\n", strings.Join(t.deps, ", "))
		}
		fmt.Fprintf(&b, "verify:\n  - name: wrote\n    run: %q\n    expect: { exit_code: 0 }\n---\n\nWRITE %s\n```\n\n", check, t.file)
	}
	return "---\nid: project-par\ntype: project\ntitle: In parallel\ntasks: [" + strings.Join(ids, ", ") + "]\n---\n\nTasks.\n\n" + b.String()
}

// flight follows the tasks whose executor is at work: a task enters at its
// executor's first model call and leaves when its last one returns.
type flight struct {
	mu     sync.Mutex
	now    map[string]bool
	max    int
	starts []string // the files in the order their tasks entered
	// enough is closed once want tasks are in flight together.
	want   int
	enough chan struct{}
}

func newFlight(want int) *flight {
	return &flight{now: map[string]bool{}, want: want, enough: make(chan struct{})}
}

func (f *flight) enter(file string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now[file] = true
	f.starts = append(f.starts, file)
	f.max = max(f.max, len(f.now))
	if len(f.now) == f.want {
		close(f.enough)
	}
}

func (f *flight) leave(file string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.now, file)
}

func (f *flight) inFlight() (n, most int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.now), f.max
}

// exec is the executor model: it writes the file the briefing names after
// "WRITE " (in its directory), with every task's first
// call passed to hold (nil: not held) while the task is in flight.
func (f *flight) exec(hold func(file string)) func(req *llm.Request) *llm.Response {
	return func(req *llm.Request) *llm.Response {
		_, rest, _ := strings.Cut(req.Messages[1].Content, "WRITE ")
		file, _, _ := strings.Cut(rest, "\n")
		file = strings.TrimSpace(file)
		if n := len(req.Messages); req.Messages[n-1].Role == llm.RoleTool {
			defer f.leave(file)
			return &llm.Response{Content: `{"summary":"written","artifact_refs":[],"next_steps":[]}`}
		}
		f.enter(file)
		if hold != nil {
			hold(file)
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{shell("c1", "mkdir -p \"$(dirname "+file+")\" && echo x > "+file)}}
	}
}

// untilTogether holds a call until want tasks are in flight together, or
// holdTimeout has passed.
func (f *flight) untilTogether(string) {
	select {
	case <-f.enough:
	case <-time.After(holdTimeout):
	}
}

// startProject runs w as a Project under a probe and streams its events.
func (h *execHarness) startProject(t *testing.T, w *messages.WorkItem) <-chan *workItemProgress {
	t.Helper()
	got := make(chan *workItemProgress, 256)
	probe := actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Spawn(actor.PropsFromProducer(func() actor.Actor { return newProject(h.d, "owner", w) }))
		case *workItemProgress:
			got <- m
		}
	})
	pid := h.d.sys.Root.Spawn(probe)
	t.Cleanup(func() { h.d.sys.Root.Stop(pid) })
	return got
}

// until reads events up to the one for id with status st ("" for the
// project's final one) and returns them.
func until(t *testing.T, got <-chan *workItemProgress, id, st string) []messages.WorkItemStatusEvent {
	t.Helper()
	var out []messages.WorkItemStatusEvent
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-got:
			out = append(out, m.event)
			if m.event.WorkItemID == id && (m.event.Status == st || st == "" && m.final) {
				return out
			}
		case <-deadline:
			t.Fatalf("no %s:%s within 30s; got %s", id, st, of(out))
		}
	}
}

// index is the position of "id:status" in evs, -1 when absent.
func index(evs []messages.WorkItemStatusEvent, idStatus string) int {
	for i, ev := range evs {
		if ev.WorkItemID+":"+ev.Status == idStatus {
			return i
		}
	}
	return -1
}

func TestProjectRunsIndependentTasksConcurrently(t *testing.T) {
	h := newExecHarness(t)
	f := newFlight(2)
	h.exec = f.exec(f.untilTogether)
	evs := h.runProject(t, h.approvedPlan(t, parallelProject(parTask{id: "t-a", file: "a.txt"}, parTask{id: "t-b", file: "b.txt"})))
	if last := evs[len(evs)-1]; last.Status != string(messages.StatusDone) {
		t.Fatalf("project ended %s: %s (%s)", last.Status, last.Detail, of(evs))
	}
	if _, most := f.inFlight(); most != 2 {
		t.Fatalf("at most %d executor at work at once, want both tasks' executors together", most)
	}
	started := h.audited(t, "project_task_started")
	if len(started) != 2 {
		t.Fatalf("%d project_task_started audit entries, want 2", len(started))
	}
}

// Two tasks whose declared outputs overlap (one declares a directory, the
// other a file in it) never run at the same time, although neither
// depends on the other; both still run and the project is done.
func TestProjectTasksWithTheSameOutputNeverOverlap(t *testing.T) {
	h := newExecHarness(t)
	f := newFlight(2)
	var mu sync.Mutex
	var poolAtFirst []int
	h.exec = f.exec(func(string) {
		mu.Lock()
		defer mu.Unlock()
		if len(poolAtFirst) == 0 {
			// The project started every task it could before the first
			// executor call: with the second task started too, its slot
			// would be held now.
			n, _ := h.d.pool.inUse("owner")
			poolAtFirst = append(poolAtFirst, n)
		}
	})
	evs := h.runProject(t, h.approvedPlan(t, parallelProject(
		parTask{id: "t-a", file: "out/a.txt", outputs: []string{"out/"}},
		parTask{id: "t-b", file: "out/b.txt", outputs: []string{"out/b.txt"}},
	)))
	if last := evs[len(evs)-1]; last.Status != string(messages.StatusDone) {
		t.Fatalf("project ended %s: %s (%s)", last.Status, last.Detail, of(evs))
	}
	if _, most := f.inFlight(); most != 1 {
		t.Fatalf("%d executors at work at once, want one: the tasks declare the same output", most)
	}
	if !slices.Equal(poolAtFirst, []int{1}) {
		t.Fatalf("pool slots in use at the first executor call: %v, want 1", poolAtFirst)
	}
	// The second task started only once the first was done.
	if a, b := index(evs, "t-a:done"), index(evs, "t-b:running"); a < 0 || b < a {
		t.Fatalf("statuses %s, want t-b to start after t-a is done", of(evs))
	}
}

func TestProjectParallelismStaysWithinThePerScopeLimit(t *testing.T) {
	h := newExecHarness(t, func(d *Deps) { d.Config.Limits.MaxParallelExecutorsPerScope = 2 })
	f := newFlight(99)
	release := make(chan struct{})
	h.exec = f.exec(func(string) {
		select {
		case <-release:
		case <-time.After(holdTimeout):
		}
	})
	got := h.startProject(t, h.approvedPlan(t, parallelProject(
		parTask{id: "t-a", file: "a.txt"}, parTask{id: "t-b", file: "b.txt"}, parTask{id: "t-c", file: "c.txt"},
	)))
	checkFor(t, holdTimeout, func() bool { n, _ := f.inFlight(); return n >= 2 }, "two tasks in flight")
	// Both held calls keep their slots: the third task cannot have started.
	if n, total := h.d.pool.inUse("owner"); n != 2 || total != 2 {
		t.Fatalf("pool slots in use %d (total %d), want the limit of 2", n, total)
	}
	close(release)
	evs := until(t, got, "project-par", "")
	if last := evs[len(evs)-1]; last.Status != string(messages.StatusDone) {
		t.Fatalf("project ended %s: %s (%s)", last.Status, last.Detail, of(evs))
	}
	if _, most := f.inFlight(); most != 2 {
		t.Fatalf("at most %d tasks at work at once, want the limit of 2", most)
	}
	checkFor(t, holdTimeout, func() bool { n, total := h.d.pool.inUse("owner"); return n == 0 && total == 0 }, "every slot given back")
}

// A diamond: b and c depend on a, d on both. a runs first, b and c
// together, d last.
func TestProjectDependenciesStillOrderParallelTasks(t *testing.T) {
	h := newExecHarness(t)
	f := newFlight(2)
	h.exec = f.exec(func(file string) {
		if file == "b.txt" || file == "c.txt" {
			f.untilTogether(file)
		}
	})
	evs := h.runProject(t, h.approvedPlan(t, parallelProject(
		parTask{id: "t-d", file: "d.txt", deps: []string{"t-b", "t-c"}},
		parTask{id: "t-b", file: "b.txt", deps: []string{"t-a"}},
		parTask{id: "t-c", file: "c.txt", deps: []string{"t-a"}},
		parTask{id: "t-a", file: "a.txt"},
	)))
	if last := evs[len(evs)-1]; last.Status != string(messages.StatusDone) {
		t.Fatalf("project ended %s: %s (%s)", last.Status, last.Detail, of(evs))
	}
	aDone, dRun := index(evs, "t-a:done"), index(evs, "t-d:running")
	for _, id := range []string{"t-b", "t-c"} {
		if run, done := index(evs, id+":running"), index(evs, id+":done"); run < aDone || done > dRun {
			t.Fatalf("statuses %s: want %s between t-a done and t-d running", of(evs), id)
		}
	}
	if _, most := f.inFlight(); most != 2 {
		t.Fatalf("at most %d tasks at work at once, want t-b and t-c together", most)
	}
}

// A failing task stops new tasks, lets the running one finish, and the
// project fails naming it.
func TestProjectFailureLetsRunningTasksFinish(t *testing.T) {
	h := newExecHarness(t)
	f := newFlight(99)
	aFailed := make(chan struct{})
	h.exec = f.exec(func(file string) {
		if file == "b.txt" {
			select {
			case <-aFailed:
			case <-time.After(holdTimeout):
			}
		}
	})
	got := h.startProject(t, h.approvedPlan(t, parallelProject(
		parTask{id: "t-a", file: "a.txt", fail: true},
		parTask{id: "t-b", file: "b.txt"},
		parTask{id: "t-c", file: "c.txt", deps: []string{"t-a"}},
	)))
	evs := until(t, got, "t-a", string(messages.StatusStuck))
	close(aFailed)
	evs = append(evs, until(t, got, "project-par", "")...)
	last := evs[len(evs)-1]
	if last.Status != string(messages.StatusFailed) || !strings.Contains(last.Detail, "task t-a ended stuck") || !strings.Contains(last.Detail, "not run: t-c") {
		t.Fatalf("project %s: %q, want failed naming t-a and t-c not run", last.Status, last.Detail)
	}
	if index(evs, "t-b:done") < 0 || index(evs, "t-c:running") >= 0 {
		t.Fatalf("statuses %s, want t-b finished and t-c never started", of(evs))
	}
	if i := index(evs, "t-c:blocked"); i < 0 || !strings.Contains(evs[i].Detail, "depends on task t-a") {
		t.Fatalf("statuses %s, want t-c reported not run because of t-a", of(evs))
	}
}

// Two independent tasks that write the same file without declaring it are
// a conflicting write; declared in both their outputs, they run one after
// the other and the project is done.
func TestProjectDetectsConflictingWrites(t *testing.T) {
	for _, declared := range []bool{false, true} {
		t.Run(fmt.Sprint("declared=", declared), func(t *testing.T) {
			h := newExecHarness(t)
			f := newFlight(99)
			h.exec = f.exec(nil)
			a, b := parTask{id: "t-a", file: "same.txt"}, parTask{id: "t-b", file: "same.txt"}
			if declared {
				a.outputs, b.outputs = []string{"same.txt"}, []string{"same.txt"}
			}
			evs := h.runProject(t, h.approvedPlan(t, parallelProject(a, b)))
			last := evs[len(evs)-1]
			if declared {
				if _, most := f.inFlight(); last.Status != string(messages.StatusDone) || most != 1 {
					t.Fatalf("project %s: %q, %d at once; want done, one task at a time", last.Status, last.Detail, most)
				}
				return
			}
			if last.Status != string(messages.StatusFailed) || !strings.Contains(last.Detail, "both wrote same.txt") || !strings.Contains(last.Detail, "declare it in the outputs") {
				t.Fatalf("project %s: %q, want failed naming the conflicting write and the fix", last.Status, last.Detail)
			}
			if n := len(h.audited(t, "project_write_conflict")); n != 1 {
				t.Fatalf("%d project_write_conflict audit entries, want 1", n)
			}
		})
	}
}

// storeTasks stores the tasks of p as a restart left them: running, after
// one attempt.
func (h *execHarness) storeTasks(t *testing.T, p *messages.WorkItem, ids ...string) {
	t.Helper()
	tasks, err := plan.Tasks(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if !slices.Contains(ids, task.ID) {
			continue
		}
		task.Status, task.Attempts = messages.StatusRunning, 1
		task.BudgetUsed = messages.BudgetUsed{Attempts: 1}
		if err := h.d.DB.WorkItems().Put(t.Context(), "owner", task); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResumedProjectResumesEveryRunningTask(t *testing.T) {
	h := newExecHarness(t)
	f := newFlight(2)
	h.exec = f.exec(f.untilTogether)
	p := h.approvedPlan(t, parallelProject(parTask{id: "t-a", file: "a.txt"}, parTask{id: "t-b", file: "b.txt"}))
	p.Status = messages.StatusRunning
	if err := h.d.DB.WorkItems().Put(t.Context(), "owner", p); err != nil {
		t.Fatal(err)
	}
	h.storeTasks(t, p, "t-a", "t-b")
	evs := h.runProject(t, p)
	if last := evs[len(evs)-1]; last.Status != string(messages.StatusDone) {
		t.Fatalf("project ended %s: %s (%s)", last.Status, last.Detail, of(evs))
	}
	if _, most := f.inFlight(); most != 2 {
		t.Fatalf("at most %d tasks at work at once, want both resumed together", most)
	}
	if n := len(h.audited(t, "work_item_resumed")); n != 2 {
		t.Fatalf("%d work_item_resumed audit entries, want both tasks resumed from their records", n)
	}
}

// A project resumed after one of its tasks failed resumes the task that
// was running, starts nothing new, and fails.
func TestResumedFailingProjectFinishesOnlyWhatRan(t *testing.T) {
	h := newExecHarness(t)
	f := newFlight(99)
	h.exec = f.exec(nil)
	p := h.approvedPlan(t, parallelProject(
		parTask{id: "t-a", file: "a.txt"}, parTask{id: "t-b", file: "b.txt"}, parTask{id: "t-c", file: "c.txt"},
	))
	p.Status = messages.StatusRunning
	p.TaskStatus = map[string]messages.WorkItemStatus{"t-a": messages.StatusStuck}
	if err := h.d.DB.WorkItems().Put(t.Context(), "owner", p); err != nil {
		t.Fatal(err)
	}
	h.storeTasks(t, p, "t-b")
	evs := h.runProject(t, p)
	last := evs[len(evs)-1]
	if last.Status != string(messages.StatusFailed) || !strings.Contains(last.Detail, "task t-a ended stuck before the restart") || !strings.Contains(last.Detail, "not run: t-c") {
		t.Fatalf("project %s: %q, want failed naming t-a, t-c not run", last.Status, last.Detail)
	}
	if index(evs, "t-b:done") < 0 || index(evs, "t-c:running") >= 0 || index(evs, "t-a:running") >= 0 {
		t.Fatalf("statuses %s, want only t-b run", of(evs))
	}
}

func TestExecutorPoolLimits(t *testing.T) {
	var woken []string
	p := newExecutorPool(2, 1, func(pid *actor.PID) { woken = append(woken, pid.Id) })
	x, y := actor.NewPID("nonhost", "x"), actor.NewPID("nonhost", "y")
	if !p.acquire("s1", x) {
		t.Fatal("the first slot was refused")
	}
	if p.acquire("s1", x) {
		t.Fatal("a second slot of scope s1 was given, beyond the per-scope limit of 1")
	}
	if !p.acquire("s2", y) {
		t.Fatal("scope s2 was refused while the global limit had room")
	}
	if p.acquire("s3", y) || p.acquire("s3", y) {
		t.Fatal("a third slot was given, beyond the global limit of 2")
	}
	if n, total := p.inUse("s1"); n != 1 || total != 2 {
		t.Fatalf("in use %d in s1, %d in all, want 1 and 2", n, total)
	}
	p.release("s2")
	if !slices.Equal(woken, []string{"x", "y"}) {
		t.Fatalf("woken %v, want every waiter once, in order", woken)
	}
	if !p.acquire("s3", y) {
		t.Fatal("the slot given back was refused")
	}
	woken = nil
	p.acquire("s3", x) // waits: global limit
	p.forget(x)
	p.release("s1")
	p.release("s1") // a release without a slot changes nothing
	if len(woken) != 0 {
		t.Fatalf("woken %v, want none: x stopped waiting", woken)
	}
	if n, total := p.inUse("s3"); n != 1 || total != 1 {
		t.Fatalf("in use %d in s3, %d in all, want 1 and 1", n, total)
	}
}
