package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/plan"
	"github.com/silas-ai/silas/runtime/verify"
)

// Project runs an approved project (spec 5.2.2, 19.7): its tasks, each as
// a WorkItem child actor under the project's approval (checkProjectTask),
// then the project's own checks on the files its tasks produced.
//
// Tasks run in parallel (project_schedule.go): every task whose
// dependencies are done starts, unless one of its declared outputs
// overlaps those of a running task (such tasks never run at the same time)
// or the executor pool (project_pool.go: limits.max_parallel_executors_per_scope,
// limits.max_parallel_executors) has no slot; a task waiting for a slot
// starts when one is given back. Each task works in sandboxes of its own;
// its files reach the project's files when it is done, and another task
// only through input_artifacts_from. Two independent tasks that both
// produce a file not declared in both their outputs are a conflicting
// write: which copy the project keeps would depend on timing, so the
// project fails and says how to declare it.
//
// States: checking -> running tasks (each finished task journaled before
// any new one starts) -> verifying -> finished. A task that does not end
// done stops the project: no task starts after it, the tasks still running
// finish, the tasks never started are reported as not run, and the
// project fails naming every task that did not end done. A task's
// statuses and result go to the scope as they come, so the owner follows
// every task; the project reports its own around them.
//
// Persistence: the scope stored the project with its token when it was
// approved. The project records the final status of each finished task in
// its TaskStatus (and the artifacts of a done one in TaskArtifacts), one
// write at a time, before it starts another task, and each task journals
// itself like any work item; a finished project records its token's
// execution as spent, then leaves the store with its tasks' records. It
// does that only once every task actor it started has terminated and no
// write of its own is in flight: a task that finished stops only when its
// own journal has drained, so no write of a task can land after the
// project's delete and leave an orphan record that nothing resumes. A
// resumed project skips the tasks that are done and resumes every task
// that was running (those with a stored record) from its stored state,
// with a fresh attempt; a project resumed after a task failed starts only
// those, then fails.
//
// Supervision: the default strategy restarts a task that panics; the new
// instance resumes from the task's journaled record (projectTaskProps). A
// task actor holds its pool slot until it has terminated, also when the
// project stops or restarts.
type Project struct {
	d     *shared
	scope string
	w     *messages.WorkItem
	tasks []*messages.WorkItem // dependency order
	// stored are the tasks' persisted states (a resumed project), by id.
	stored map[string]*messages.WorkItem
	// running are the tasks started and without a final status yet, by id.
	running map[string]*actor.PID
	// slots are the task actors started and not yet terminated, each
	// holding a slot of the executor pool: task id by PID id.
	slots   map[string]string
	used    messages.BudgetUsed
	results []string            // one line per finished task, for the final detail
	kept    map[string]string   // artifacts of the tasks, by path in dir
	keptBy  map[string]string   // the task that produced each kept artifact
	taint   messages.TaintLevel // weakest of the tasks'
	dir     string              // the tasks' kept artifacts, for the project's checks
	// stops are why the project stops (a task that did not end done, a
	// conflicting write), and stopIDs the tasks concerned, in order.
	stops     []string
	stopIDs   []string
	checked   bool
	verifying bool // every task is done; the project's checks run
	done      bool
	// halting is set once the actor is stopping or restarting: it starts
	// no task any more.
	halting bool
	// The journal: one write in flight (jBusy), another wanted (jDirty).
	jBusy, jDirty bool
	// ending is set once the project finished; its final journal (sent
	// once, final) waits for every task actor to terminate and for the
	// write in flight.
	ending, final bool
}

// projectChecked carries the project's approval check and its tasks'
// stored states. Sender: a Project IO goroutine. Receiver: the Project.
type projectChecked struct {
	stored []*messages.WorkItem
	err    error
}

// projectJournaled says the project's state was written. Sender: a
// Project IO goroutine. Receiver: the Project.
type projectJournaled struct {
	final bool
	err   error
}

// projectVerified carries the project's own checks. Sender: a Project IO
// goroutine. Receiver: the Project.
type projectVerified struct {
	report verify.Report
	err    error
}

func newProject(d *shared, scope string, w *messages.WorkItem) *Project {
	return &Project{d: d, scope: scope, w: w, used: w.BudgetUsed, kept: map[string]string{}, keptBy: map[string]string{},
		running: map[string]*actor.PID{}, slots: map[string]string{},
		taint: messages.TaintOwner, dir: d.Config.DataPath("projects", scope, w.ID)}
}

// Receive handles the project's lifecycle messages.
func (p *Project) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		p.onStarted(c)
	case *projectChecked:
		p.onChecked(c, m)
	case *workItemProgress:
		p.onTaskProgress(c, m)
	case *projectJournaled:
		p.onJournaled(c, m)
	case *projectVerified:
		p.onVerified(c, m)
	case *actor.Terminated:
		p.onTerminated(c, m)
	case *executorSlotFreed:
		p.schedule(c)
	case *actor.Stopping, *actor.Restarting:
		p.halting = true
	case *actor.Stopped:
		p.onStopped(c)
	case *messages.SkillRemoved:
		for _, task := range c.Children() {
			c.Send(task, m)
		}
	case *ownerWork:
		// A task's re-plan would change what the owner approved with the
		// project: the task stays stuck, and so the project fails.
		c.Send(c.Sender(), &ownerVerdict{workID: m.work.ID, reason: "a task of a project is not re-planned on its own; ask for a new plan of the whole project"})
	}
}

// io runs fn in a tracked goroutine and sends its result to the project.
func (p *Project) io(c actor.Context, name string, fn func(ctx context.Context) any, failed func(error) any) {
	self, root := c.Self(), p.d.sys.Root
	if !p.d.tasks.Go(name, func(ctx context.Context) { root.Send(self, fn(ctx)) },
		func(err error) { root.Send(self, failed(err)) }) {
		root.Send(self, failed(errShuttingDown))
	}
}

func (p *Project) onStarted(c actor.Context) {
	eng, db, scope, w := p.d.Approval, p.d.DB, p.scope, p.w
	p.io(c, "project approval check", func(ctx context.Context) any {
		if w.ApprovalToken == nil {
			return &projectChecked{err: errors.New("the project carries no approval token")}
		}
		if err := eng.Check(ctx, w.ApprovalToken, w); err != nil {
			if ctx.Err() != nil {
				err = errShuttingDown
			}
			return &projectChecked{err: err}
		}
		all, err := db.WorkItems().List(ctx, scope)
		if err != nil {
			return &projectChecked{err: fmt.Errorf("load the project's tasks: %w", err)}
		}
		var mine []*messages.WorkItem
		for _, t := range all {
			if t.Parent != nil && *t.Parent == w.ID && t.ApprovalToken == nil {
				mine = append(mine, t)
			}
		}
		return &projectChecked{stored: mine}
	}, func(err error) any { return &projectChecked{err: err} })
}

func (p *Project) onChecked(c actor.Context, m *projectChecked) {
	if errors.Is(m.err, errShuttingDown) {
		p.done = true // the stored project resumes on the next start
		c.Stop(c.Self())
		return
	}
	if m.err != nil {
		p.audit("execution_blocked_no_approval", map[string]any{"reason": m.err.Error()})
		p.finish(c, messages.StatusBlocked, "execution blocked: the approval of this project could not be verified ("+m.err.Error()+"); propose the project again to approve it")
		return
	}
	p.checked = true
	tasks, err := plan.Tasks(p.w)
	if err != nil {
		p.finish(c, messages.StatusBlocked, "the project's tasks cannot be read: "+err.Error())
		return
	}
	p.tasks = tasks
	p.stored = make(map[string]*messages.WorkItem, len(m.stored))
	for _, t := range m.stored {
		p.stored[t.ID] = t
	}
	if p.w.TaskStatus == nil {
		p.w.TaskStatus = map[string]messages.WorkItemStatus{}
	}
	if p.w.TaskArtifacts == nil {
		p.w.TaskArtifacts = map[string][]string{}
	}
	// A resumed project reports the tasks finished before the restart too;
	// one that did not end done had stopped the project.
	for _, t := range tasks {
		st := p.w.TaskStatus[t.ID]
		if st == "" {
			continue
		}
		p.results = append(p.results, fmt.Sprintf("%s: %s", t.ID, st))
		if st != messages.StatusDone {
			p.stopIDs = append(p.stopIDs, t.ID)
			p.stops = append(p.stops, fmt.Sprintf("task %s ended %s before the restart", t.ID, st))
			continue
		}
		for _, rel := range p.w.TaskArtifacts[t.ID] {
			if _, ok := p.kept[rel]; !ok {
				p.kept[rel] = filepath.Join(p.dir, rel)
				p.keptBy[rel] = t.ID
			}
		}
	}
	p.audit("project_started", map[string]any{"tasks": len(tasks)})
	p.status(c, messages.StatusRunning, fmt.Sprintf("project started: %d tasks (%s)", len(tasks), strings.Join(taskIDs(tasks), ", ")))
	p.schedule(c)
}

// doneArtifacts are the artifacts of the tasks that finished done, by task
// id: what a follow-up task may import.
func (p *Project) doneArtifacts() map[string][]string {
	out := make(map[string][]string, len(p.w.TaskArtifacts))
	for id, names := range p.w.TaskArtifacts {
		if p.w.TaskStatus[id] == messages.StatusDone {
			out[id] = slices.Clone(names)
		}
	}
	return out
}

// onTaskProgress passes a task's status on to the scope, and on its final
// status records the task's outcome and journals it; the tasks it let
// start start once that is written.
func (p *Project) onTaskProgress(c actor.Context, m *workItemProgress) {
	c.Send(c.Parent(), m)
	id := m.event.WorkItemID
	if _, running := p.running[id]; !m.final || p.done || !running {
		return
	}
	delete(p.running, id)
	st := messages.WorkItemStatus(m.event.Status)
	p.w.TaskStatus[id] = st
	if r := m.result; r != nil {
		p.used.Merge(r.BudgetUsed)
		if st == messages.StatusDone {
			p.merge(id, r.Artifacts)
			p.w.TaskArtifacts[id] = artifactNames(r.Artifacts)
		} else {
			maps.Copy(p.kept, r.Artifacts)
		}
	}
	p.taint = messages.Weakest(p.taint, m.taint)
	p.results = append(p.results, fmt.Sprintf("%s: %s", id, st))
	p.audit("project_task_finished", map[string]any{"task": id, "status": string(st)})
	if st != messages.StatusDone {
		p.stopIDs = append(p.stopIDs, id)
		p.stops = append(p.stops, fmt.Sprintf("task %s ended %s: %s", id, st, m.event.Detail))
	}
	p.journalState(c)
}

// onTerminated gives back the pool slot of a task actor that stopped;
// a finishing project then writes its end, a running one may start a task.
func (p *Project) onTerminated(c actor.Context, m *actor.Terminated) {
	if _, ok := p.slots[m.Who.Id]; !ok {
		return
	}
	delete(p.slots, m.Who.Id)
	p.d.pool.release(p.scope)
	if p.ending {
		p.endJournal(c)
		return
	}
	p.schedule(c)
}

// onStopped gives back what the project still holds of the pool.
func (p *Project) onStopped(c actor.Context) {
	for pid := range p.slots {
		delete(p.slots, pid)
		p.d.pool.release(p.scope)
	}
	p.d.pool.forget(c.Self())
}

// stopAt ends the project once no task runs any more (spec 5.2.2 step 4):
// the tasks that have not run are reported as not run, and the project
// ends failed, naming why.
func (p *Project) stopAt(c actor.Context) {
	first := p.stopIDs[0]
	var skipped []string
	for _, t := range p.tasks {
		if p.w.TaskStatus[t.ID] != "" || slices.Contains(p.stopIDs, t.ID) {
			continue
		}
		skipped = append(skipped, t.ID)
		reason := "not run: project " + p.w.ID + " stopped after task " + first + " did not finish"
		for _, id := range p.stopIDs {
			if p.dependsOn(t.ID, id) {
				reason = "not run: it depends on task " + id + ", which did not finish"
				break
			}
		}
		c.Send(c.Parent(), &workItemProgress{event: messages.WorkItemStatusEvent{
			Type: messages.EventWorkItemStatus, WorkItemID: t.ID, Status: string(messages.StatusBlocked), Detail: reason,
		}})
	}
	why := strings.Join(p.stops, "; ")
	if len(skipped) > 0 {
		why += "; not run: " + strings.Join(skipped, ", ")
	}
	p.audit("project_failed", map[string]any{"task": first, "tasks": p.stopIDs, "not_run": orNone(skipped)})
	p.finish(c, messages.StatusFailed, why)
}

// journalState writes the project's state, one write at a time: a write
// asked for while one is in flight follows it, with the state then.
func (p *Project) journalState(c actor.Context) {
	if p.jBusy {
		p.jDirty = true
		return
	}
	p.jBusy = true
	p.journal(c, false)
}

// endJournal writes the project's end once it finished, every task actor
// has terminated and no write of its own is in flight.
func (p *Project) endJournal(c actor.Context) {
	if !p.ending || p.final || len(p.slots) > 0 || p.jBusy {
		return
	}
	p.final = true
	p.journal(c, true)
}

// journal writes the project's state: after each finished task (then more
// tasks may start), or, final, records the token's execution as spent and
// deletes the project (then the actor stops).
func (p *Project) journal(c actor.Context, final bool) {
	snap := *p.w
	snap.BudgetUsed, snap.Status = p.used, messages.StatusRunning
	snap.TaskStatus = maps.Clone(p.w.TaskStatus)
	snap.TaskArtifacts = maps.Clone(p.w.TaskArtifacts)
	db, eng, scope, dir, checked := p.d.DB, p.d.Approval, p.scope, p.dir, p.checked
	p.io(c, "journal project", func(ctx context.Context) any {
		var err error
		switch {
		case !final:
			err = db.WorkItems().Put(ctx, scope, &snap)
		default:
			if checked && snap.ApprovalToken != nil {
				err = eng.Complete(ctx, snap.ApprovalToken, &snap)
			}
			if err == nil {
				err = db.WorkItems().Delete(ctx, scope, snap.ID)
			}
			// A task stopped with the project must not linger in the store.
			for _, id := range snap.Tasks {
				if err == nil {
					err = db.WorkItems().Delete(ctx, scope, id)
				}
			}
			if rmErr := os.RemoveAll(dir); err == nil && rmErr != nil {
				err = fmt.Errorf("remove the project's artifacts: %w", rmErr)
			}
		}
		if err != nil && ctx.Err() != nil {
			err = errShuttingDown
		}
		return &projectJournaled{final: final, err: err}
	}, func(err error) any { return &projectJournaled{final: final, err: err} })
}

func (p *Project) onJournaled(c actor.Context, m *projectJournaled) {
	if m.final {
		if m.err != nil {
			p.d.Log.Error().Err(m.err).Str("scope", p.scope).Str("project", p.w.ID).Msg("finish project")
		}
		c.Stop(c.Self())
		return
	}
	if !p.jBusy {
		return // of an instance that restarted
	}
	p.jBusy = false
	switch {
	case p.ending:
		p.endJournal(c)
	case errors.Is(m.err, errShuttingDown):
		p.done = true // the stored project resumes on the next start
		c.Stop(c.Self())
	case m.err != nil:
		// Without the record a restart would run the tasks again: stop.
		p.finish(c, messages.StatusFailed, "the project's progress could not be stored: "+m.err.Error())
	case p.jDirty:
		p.jDirty = false
		p.journalState(c)
	default:
		p.schedule(c)
	}
}

// verify runs the project's own checks on the files its tasks produced
// (spec 5.2.2 step 5).
func (p *Project) verify(c actor.Context) {
	if len(p.w.Verify) == 0 {
		p.onVerified(c, &projectVerified{report: verify.Report{Passed: true}})
		return
	}
	runner, checks, dir := p.d.Verifier, p.w.Verify, p.dir
	p.io(c, "project verification", func(ctx context.Context) any {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return &projectVerified{err: err}
		}
		rep, err := runner.Run(ctx, checks, dir)
		if err != nil && ctx.Err() != nil {
			err = errShuttingDown
		}
		return &projectVerified{report: rep, err: err}
	}, func(err error) any { return &projectVerified{err: err} })
}

func (p *Project) onVerified(c actor.Context, m *projectVerified) {
	if p.done {
		return
	}
	summary := "tasks: " + strings.Join(p.results, ", ")
	switch {
	case errors.Is(m.err, errShuttingDown):
		p.done = true
		c.Stop(c.Self())
	case m.err != nil:
		p.audit("project_failed", map[string]any{"error": m.err.Error()})
		p.finish(c, messages.StatusFailed, "the project's checks could not run: "+m.err.Error()+"; "+summary)
	case !m.report.Passed:
		reasons := failedChecks(m.report)
		p.audit("project_verification_failed", map[string]any{"failed": reasons})
		p.finish(c, messages.StatusFailed, "every task is done, but the project's checks failed: "+reasons+"; "+summary)
	default:
		p.audit("project_done", map[string]any{"tasks": len(p.tasks), "tokens": p.used.Tokens})
		p.finish(c, messages.StatusDone, "project done; "+summary)
	}
}

// finish reports the project's final status and result, stops the tasks
// still running, and journals its end once its task actors have
// terminated.
func (p *Project) finish(c actor.Context, st messages.WorkItemStatus, detail string) {
	if p.done {
		return
	}
	p.done, p.ending = true, true
	for _, pid := range p.running {
		c.Stop(pid)
	}
	p.d.pool.forget(c.Self())
	r := &messages.WorkItemResult{WorkItemID: p.w.ID, Status: st, Summary: detail, VerificationResults: []map[string]any{},
		BudgetUsed: p.used, Artifacts: p.kept, NextSteps: []string{}}
	c.Send(c.Parent(), &workItemProgress{final: true, result: r, taint: p.taint, title: p.w.Title,
		event: messages.WorkItemStatusEvent{Type: messages.EventWorkItemStatus, WorkItemID: p.w.ID, Status: string(st), Detail: detail}})
	p.endJournal(c)
}

func (p *Project) status(c actor.Context, st messages.WorkItemStatus, detail string) {
	c.Send(c.Parent(), &workItemProgress{event: messages.WorkItemStatusEvent{
		Type: messages.EventWorkItemStatus, WorkItemID: p.w.ID, Status: string(st), Detail: detail,
	}})
}

func (p *Project) audit(event string, data map[string]any) {
	data["work_item_id"] = p.w.ID
	p.d.sys.Root.Send(p.d.audit, &messages.AuditEvent{Time: p.d.now(), Event: event, Scope: p.scope, Data: data})
}

func taskIDs(ts []*messages.WorkItem) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}
