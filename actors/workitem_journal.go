package actors

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
)

// The WorkItem's journal: every write of the work item to the store (the
// state before an attempt, a consult or a re-plan, the spend of the running
// attempt, the final delete) goes through one queue and runs one at a time,
// in order, in a tracked goroutine. Without the queue a slow write of an
// older state could land after a newer one, or after the final delete and
// bring a finished work item back.

// journalOp is one write.
type journalOp struct {
	snap *messages.WorkItem // the state to put; nil for the final delete
	// spent is the finished work item whose token's execution the final
	// delete first records as spent (approval.Engine.Complete); nil when
	// its approval check never passed.
	spent *messages.WorkItem
	// progress: the running attempt's spend; a newer one replaces one that
	// is still queued.
	progress bool
	// then builds the message the WorkItem gets once the write is done; nil
	// for none.
	then func(err error) any
}

// journalDone says the write in flight finished. Sender: the journal
// goroutine. Receiver: the WorkItem.
// owner is the instance that queued the write: a write that finishes after
// a restart belongs to the instance that panicked and is ignored.
type journalDone struct {
	then  any
	owner *WorkItem
}

// attemptSpend carries the spend of the running attempt after each model
// call, so that a crash does not forget it. Sender: an Attempt. Receiver:
// its WorkItem.
type attemptSpend struct {
	attempt int
	used    messages.BudgetUsed // this attempt's spend so far
}

// journal queues op and starts the writer when it is idle.
func (a *WorkItem) journal(c actor.Context, op journalOp) {
	if n := len(a.jq); op.progress && n > 0 && a.jq[n-1].progress {
		a.jq[n-1] = op
		return
	}
	a.jq = append(a.jq, op)
	if !a.jBusy {
		a.writeNext(c)
	}
}

// writeNext starts the next queued write; once the queue is empty after the
// work item finished, the actor stops.
func (a *WorkItem) writeNext(c actor.Context) {
	if len(a.jq) == 0 {
		a.jBusy = false
		if a.finished {
			c.Stop(c.Self())
		}
		return
	}
	op := a.jq[0]
	a.jq = a.jq[1:]
	a.jBusy = true
	self, root, db, eng, log, scope, id := c.Self(), a.d.sys.Root, a.d.DB, a.d.Approval, a.d.Log, a.scope, a.w.ID
	done := func(err error) {
		var then any
		if op.then != nil {
			then = op.then(err)
		}
		root.Send(self, &journalDone{then: then, owner: a})
	}
	if !a.d.tasks.Go("journal work item", func(ctx context.Context) {
		var err error
		switch {
		case op.snap != nil:
			err = db.WorkItems().Put(ctx, scope, op.snap)
		case op.spent != nil && op.spent.ApprovalToken != nil:
			// The item stays stored when this fails: it resumes, and a
			// finished run is not worth more than the token it spent.
			if err = eng.Complete(ctx, op.spent.ApprovalToken, op.spent); err == nil {
				err = db.WorkItems().Delete(ctx, scope, id)
			}
		default:
			err = db.WorkItems().Delete(ctx, scope, id)
		}
		if err != nil && ctx.Err() != nil {
			err = errShuttingDown
		}
		if err != nil && op.then == nil {
			log.Error().Err(err).Str("scope", scope).Str("work_item", id).Msg("journal work item")
		}
		done(err)
	}, done) {
		if op.snap == nil {
			log.Warn().Str("scope", scope).Str("work_item", id).Msg("finished work item not deleted: shutting down; it resumes on the next start")
		}
		a.jq = nil
		done(errShuttingDown)
	}
}

func (a *WorkItem) onJournalDone(c actor.Context, m *journalDone) {
	if m.owner != a {
		return
	}
	if m.then != nil {
		c.Send(c.Self(), m.then)
	}
	a.writeNext(c)
}

// onAttemptSpend journals the budget with the running attempt's spend.
func (a *WorkItem) onAttemptSpend(c actor.Context, m *attemptSpend) {
	if a.done || m.attempt != a.attempt {
		return
	}
	a.spend = m.used
	a.journalProgress(c)
}

// onAttemptLedger keeps the running attempt's ledger entries and journals
// them, so that a resumed work item still knows what its tool calls did.
func (a *WorkItem) onAttemptLedger(c actor.Context, m *attemptLedger) {
	if a.done || m.attempt != a.attempt {
		return
	}
	a.ledger = append(a.ledger, m.entries...)
	a.journalProgress(c)
}

// journalProgress journals the running state: the budget with the running
// attempt's spend, and the ledger.
func (a *WorkItem) journalProgress(c actor.Context) {
	snap := a.record(messages.StatusRunning)
	snap.BudgetUsed.Tokens += a.spend.Tokens
	snap.BudgetUsed.CostUSD += a.spend.CostUSD
	snap.BudgetUsed.WallTimeSeconds += a.spend.WallTimeSeconds
	snap.BudgetUsed.ExecutorRuns += a.spend.ExecutorRuns
	a.journal(c, journalOp{snap: snap, progress: true})
}

// errJournal wraps a failed journal write for the step that needed it.
func errJournal(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("journal %s: %w", what, err)
}
