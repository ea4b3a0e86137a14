package actors

import (
	"context"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
)

// workItemProps are the props of a work item that a scope runs. The first
// instance starts from w; an instance made by a restart (the WorkItem
// panicked) starts from the work item's journaled record instead: what
// reached the store is what the work item promised, not whatever the
// panicking instance had changed in memory since.
func workItemProps(d *shared, scope string, w *messages.WorkItem) *actor.Props {
	var restarted atomic.Bool
	return actor.PropsFromProducer(func() actor.Actor {
		a := newWorkItem(d, scope, w)
		a.reload = restarted.Swap(true)
		return a
	}, d.props...)
}

// projectTaskProps are the props of a project's task w; set gives each
// instance its project fields. Like workItemProps, an instance made by a
// restart starts from the task's journaled record: the project started the
// task from a copy of its plan and stored nothing of it itself.
func projectTaskProps(d *shared, scope string, w *messages.WorkItem, set func(*WorkItem)) *actor.Props {
	var restarted atomic.Bool
	return actor.PropsFromProducer(func() actor.Actor {
		a := newWorkItem(d, scope, w)
		set(a)
		a.reload = restarted.Swap(true)
		return a
	}, d.props...)
}

// workItemReloaded carries the journaled record of a restarted work item;
// w is nil when the store holds none (the item had finished). Sender: the
// WorkItem's IO goroutine. Receiver: the WorkItem.
type workItemReloaded struct {
	w   *messages.WorkItem
	err error
}

// reloadFromStore reads the work item's record off the mailbox.
func (a *WorkItem) reloadFromStore(c actor.Context) {
	self, root, db, scope, id := c.Self(), a.d.sys.Root, a.d.DB, a.scope, a.w.ID
	reply := func(m *workItemReloaded) { root.Send(self, m) }
	if !a.d.tasks.Go("reload work item", func(ctx context.Context) {
		all, err := db.WorkItems().List(ctx, scope)
		if err != nil {
			reply(&workItemReloaded{err: err})
			return
		}
		for _, w := range all {
			if w.ID == id {
				reply(&workItemReloaded{w: w})
				return
			}
		}
		reply(&workItemReloaded{})
	}, func(err error) { reply(&workItemReloaded{err: err}) }) {
		reply(&workItemReloaded{err: errShuttingDown})
	}
}

// onReloaded resumes from the record, or stops when there is none: the
// work item finished (its final status went out before the record was
// deleted) or Silas is stopping.
func (a *WorkItem) onReloaded(c actor.Context, m *workItemReloaded) {
	switch {
	case m.err != nil:
		a.d.Log.Error().Err(m.err).Str("work_item", a.w.ID).Msg("reload a restarted work item; it resumes at the next start")
		a.done = true
		c.Stop(c.Self())
		return
	case m.w == nil && a.project != nil:
		// A task that finished deleted its record after its final status
		// went out, and the project ignores a second one; a task that had
		// recorded nothing yet may have run a tool call: it is not run
		// again behind the owner's back.
		a.d.Log.Warn().Str("work_item", a.w.ID).Msg("a project task restarted before it recorded any progress; it fails instead of running again")
		a.finish(c, messages.StatusFailed, "the task crashed before it recorded any progress, so it is not run again on its own; ask for the project again to retry it")
		return
	case m.w == nil:
		a.done = true
		c.Stop(c.Self())
		return
	}
	fresh := newWorkItem(a.d, a.scope, m.w)
	a.w, a.attempt, a.used, a.results, a.ledger = fresh.w, fresh.attempt, fresh.used, fresh.results, fresh.ledger
	a.audit("work_item_restarted", map[string]any{"attempts": a.attempt, "tokens": a.used.Tokens})
	a.onStarted(c)
}
