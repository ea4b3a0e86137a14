package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/pipeline"
	"github.com/silas-ai/silas/runtime/plan"
)

// goalAddTimeout bounds how long a turn waits for the Scheduler to store
// an approved goal.
const goalAddTimeout = 30 * time.Second

// scheduledGoal reports whether w, a plan the planner proposed, is a goal
// to schedule: a goal with a schedule other than always_on. Approving it
// grants its standing approval, and the Scheduler runs it on its schedule
// instead of running it once (spec 5.2.3).
func scheduledGoal(w *messages.WorkItem) bool {
	return w.Type == messages.WorkGoal && scheduled(w)
}

// goalPlanRefusal says why a scheduled goal the planner proposed cannot be
// scheduled ("" when it can), before the owner is asked about it.
func goalPlanRefusal(w *messages.WorkItem) string {
	if !scheduledGoal(w) {
		return ""
	}
	if err := plan.CheckGoal(w); err != nil {
		return "the goal cannot be scheduled: " + err.Error()
	}
	return ""
}

// scheduleGoal hands an approved goal and its standing token to the
// Scheduler, which stores and schedules it, and then lets the turn answer.
func (s *Scope) scheduleGoal(c actor.Context, m *approvalIssued) {
	self, root, turnID, w, tok := c.Self(), s.d.sys.Root, m.turnID, m.work, m.token
	reply := func(r pipeline.Result) { root.Send(self, &stepDone{turnID: turnID, result: r}) }
	pid := s.d.sys.NewLocalPID(schedulerName)
	if !s.d.tasks.Go("schedule approved goal", func(context.Context) {
		res, err := root.RequestFuture(pid, &goalOp{kind: opAdd, id: w.ID, goal: w, token: tok, via: "plan"}, goalAddTimeout).Result()
		if err != nil {
			reply(pipeline.Result{Err: fmt.Errorf("schedule the goal: %w", err)})
			return
		}
		r, ok := res.(*goalOpReply)
		switch {
		case !ok:
			reply(pipeline.Result{Err: fmt.Errorf("schedule the goal: unexpected answer %T", res)})
		case r.err != nil:
			reply(pipeline.Result{Err: r.err})
		default:
			reply(pipeline.Result{Value: pipeline.ApprovalOutcome{Approved: true, Scheduled: *w.Schedule}})
		}
	}, func(err error) { reply(pipeline.Result{Err: err}) }) {
		reply(pipeline.Result{Err: errShuttingDown})
	}
}
