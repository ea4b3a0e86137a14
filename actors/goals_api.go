package actors

import (
	"context"
	"fmt"
	"time"
)

// The Scheduler as the owner's HTTP endpoints call it (GET /goals,
// POST /goals/{id}/pause|resume, DELETE /goals/{id}; `silas goals`).

// goalCallTimeout bounds a call without a deadline: a change is one
// Badger write.
const goalCallTimeout = 30 * time.Second

func (s *System) askGoals(ctx context.Context, op *goalOp) (*goalOpReply, error) {
	if s.scheduler == nil {
		return nil, ErrGoalsUnavailable
	}
	timeout := goalCallTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if timeout <= 0 {
		return nil, context.DeadlineExceeded
	}
	op.via = "api"
	res, err := s.d.sys.Root.RequestFuture(s.scheduler, op, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("ask the goal scheduler: %w", err)
	}
	r, ok := res.(*goalOpReply)
	if !ok {
		return nil, fmt.Errorf("ask the goal scheduler: unexpected answer %T", res)
	}
	return r, r.err
}

// Goals lists the owner's scheduled goals, by id.
func (s *System) Goals(ctx context.Context) ([]GoalView, error) {
	r, err := s.askGoals(ctx, &goalOp{kind: opList})
	if err != nil {
		return nil, err
	}
	return r.goals, nil
}

// PauseGoal pauses goal id: no check or fix task starts until it is
// resumed. Pausing a paused goal changes nothing.
func (s *System) PauseGoal(ctx context.Context, id string) (GoalView, error) {
	return s.goalChange(ctx, opPause, id)
}

// ResumeGoal puts goal id back on its schedule.
func (s *System) ResumeGoal(ctx context.Context, id string) (GoalView, error) {
	return s.goalChange(ctx, opResume, id)
}

// RemoveGoal unschedules goal id and deletes it with its standing
// approval; it returns the goal as it was. The config goal is refused
// (ErrConfigGoal).
func (s *System) RemoveGoal(ctx context.Context, id string) (GoalView, error) {
	return s.goalChange(ctx, opRemove, id)
}

func (s *System) goalChange(ctx context.Context, kind goalOpKind, id string) (GoalView, error) {
	r, err := s.askGoals(ctx, &goalOp{kind: kind, id: id})
	if err != nil {
		return GoalView{}, err
	}
	return r.goal, nil
}
