package actors

import (
	"fmt"
	"path/filepath"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/plan"
)

// schedule starts, in dependency order, every task that may start now: it
// has not run, what it depends on is done (spec 5.2.2 step 3), its
// declared outputs overlap none of a running task's, and the executor pool
// gives it a slot. A stopping project (a task did not end done) starts only
// the tasks a restart interrupted, and ends once none runs; a project whose
// tasks are all done is verified.
func (p *Project) schedule(c actor.Context) {
	if p.done || p.halting || p.verifying || !p.checked || p.jBusy || p.jDirty {
		return
	}
	waiting := false
	for _, t := range p.tasks {
		if !p.mayStart(t) {
			continue
		}
		if !p.d.pool.acquire(p.scope, c.Self()) {
			waiting = true // woken by executorSlotFreed
			break
		}
		p.start(c, t)
	}
	if len(p.running) > 0 || waiting {
		return
	}
	if len(p.stops) > 0 {
		p.stopAt(c)
		return
	}
	for _, t := range p.tasks {
		if p.w.TaskStatus[t.ID] != messages.StatusDone {
			// Not reached while Tasks orders the tasks: the first task not
			// done always has its dependencies done.
			p.stopIDs, p.stops = append(p.stopIDs, t.ID), append(p.stops, "task "+t.ID+" cannot start: what it depends on is not done")
			p.stopAt(c)
			return
		}
	}
	p.verifying = true
	p.verify(c)
}

// mayStart reports whether t may start now, slot aside.
func (p *Project) mayStart(t *messages.WorkItem) bool {
	if p.w.TaskStatus[t.ID] != "" || p.running[t.ID] != nil {
		return false
	}
	if len(p.stops) > 0 && p.stored[t.ID] == nil {
		return false // stopping: only what was running resumes
	}
	for _, dep := range t.DependsOn {
		if p.w.TaskStatus[dep] != messages.StatusDone {
			return false
		}
	}
	for _, o := range p.tasks {
		if p.running[o.ID] == nil {
			continue
		}
		if _, _, clash := plan.OutputsOverlap(t.Outputs, o.Outputs); clash {
			return false
		}
	}
	return true
}

// start spawns task t's WorkItem, from its stored state when a restart
// interrupted it.
func (p *Project) start(c actor.Context, t *messages.WorkItem) {
	w := p.stored[t.ID]
	if w == nil {
		cp := *t
		w = &cp
	}
	project, d, scope, keep, prior := p.w, p.d, p.scope, p.dir, p.doneArtifacts()
	p.audit("project_task_started", map[string]any{"task": t.ID, "running": len(p.running) + 1})
	pid := c.Spawn(projectTaskProps(d, scope, w, func(a *WorkItem) {
		a.project, a.keepDir, a.prior = project, keep, prior
	}))
	p.running[t.ID] = pid
	p.slots[pid.Id] = t.ID
}

// merge adds the artifacts of task id, done, to the project's files. A
// file that an independent task (neither depends on the other) produced
// too is a conflicting write, unless both declared it in their outputs (so
// they never overlapped): it stops the project.
func (p *Project) merge(id string, artifacts map[string]string) {
	outputs := p.outputs(id)
	for _, rel := range artifactNames(artifacts) {
		other, ok := p.keptBy[rel]
		if ok && other != id && !p.dependsOn(id, other) && !p.dependsOn(other, id) &&
			!(plan.Covers(outputs, rel) && plan.Covers(p.outputs(other), rel)) {
			p.audit("project_write_conflict", map[string]any{"tasks": []string{other, id}, "path": rel})
			p.stopIDs = append(p.stopIDs, id)
			p.stops = append(p.stops, fmt.Sprintf("tasks %s and %s both wrote %s, and neither depends on the other, "+
				"so which copy the project keeps depends on timing; declare it in the outputs of both (then they never run at the same time) or make one depend on the other",
				other, id, rel))
		}
		p.kept[rel] = filepath.Join(p.dir, rel)
		p.keptBy[rel] = id
	}
}

// outputs are the declared outputs of task id.
func (p *Project) outputs(id string) []string {
	for _, t := range p.tasks {
		if t.ID == id {
			return t.Outputs
		}
	}
	return nil
}

// dependsOn reports whether task id depends on task dep, directly or
// through other tasks.
func (p *Project) dependsOn(id, dep string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(x string) bool {
		if seen[x] {
			return false
		}
		seen[x] = true
		for _, t := range p.tasks {
			if t.ID != x {
				continue
			}
			for _, d := range t.DependsOn {
				if d == dep || walk(d) {
					return true
				}
			}
		}
		return false
	}
	return walk(id)
}
