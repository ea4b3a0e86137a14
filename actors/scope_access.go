package actors

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/access"
	"github.com/silas-ai/silas/runtime/pipeline"
	"github.com/silas-ai/silas/runtime/plan"
)

// coreTools are the tools of Silas itself that every owner toolset holds
// (spec 5.1 step 6, SkillToolset); executors add theirs. Only tools this
// build provides are listed, so the model is never told of one it lacks.
var coreTools = []string{pipeline.ToolMemorySearch, pipeline.ToolContextInspect, pipeline.ToolTellUser}

// ReadGoal reads and parses the goal file of config active_goal. A goal
// defines the chatbot lane: its access_levels decide the tools customers
// get and its gates join every customer turn's active gate set. The owner
// wrote it, so its gates may run host commands (plan.ParseOwner).
func ReadGoal(path string) (*messages.WorkItem, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("active_goal: %w", err)
	}
	w, err := plan.ParseOwner(string(b))
	if err != nil {
		return nil, fmt.Errorf("active_goal %s: %w", path, err)
	}
	if w.Type != messages.WorkGoal {
		return nil, fmt.Errorf("active_goal %s: type is %q; the active goal must be a plan of type goal", path, w.Type)
	}
	return w, nil
}

// accessPolicy compiles the access levels of the active goal against the
// owner's toolset: the core tools and every registered executor.
func accessPolicy(d Deps) (*access.Policy, error) {
	owner := append([]string(nil), coreTools...)
	if d.Executors != nil {
		owner = append(owner, d.Executors.Names()...)
	}
	cfg := access.Config{OwnerTools: owner}
	if d.Goal != nil {
		cfg.Levels = d.Goal.AccessLevels
	}
	p, err := access.Compile(cfg)
	if err != nil {
		return nil, fmt.Errorf("active goal access_levels: %w", err)
	}
	return p, nil
}

// newAccess gives the scope its own controller (spec 5.1: one per
// connection scope), restored from the snapshot when one was saved. A state
// saved under other levels, or a corrupt one, resets the customer to the
// base level (fail closed) and is audited.
func (s *Scope) newAccess(saved *access.State) {
	c, err := s.d.access.NewController(s.kind == messages.ScopeOwner, s.d.now)
	if err != nil {
		// Only a nil clock fails, and shared.now is never nil.
		panic(fmt.Sprintf("scope %s: access controller: %v", s.id, err))
	}
	s.access = c
	if saved == nil {
		return
	}
	if err := c.Restore(*saved); err != nil {
		reason := "invalid_state"
		if errors.Is(err, access.ErrPolicyChanged) {
			reason = "policy_changed"
		}
		s.emitAudit("access_state_reset", map[string]any{"reason": reason, "error": err.Error()})
	}
}

// accessState is the controller's state to persist with the scope's
// snapshot; expired grants are dropped first so they are not stored.
func (s *Scope) accessState() *access.State {
	if s.access == nil || s.access.Owner() {
		return nil
	}
	s.access.Expire(s.d.now())
	st := s.access.State()
	return &st
}

// onLoadAccess answers step 6, at once when the view needs no customer
// context (the owner, or the base level). The customer context is a file
// read, so it runs off the mailbox on a copy of the controller, which the
// actor alone may touch.
func (s *Scope) onLoadAccess(c actor.Context, turnID string) {
	now := s.d.now()
	ctrl := s.access
	expired := ctrl.Expire(now)
	view := pipeline.AccessView{Level: ctrl.Level(now), Tools: ctrl.AllowedTools(), Expired: expired}
	if ctrl.Owner() || view.Level == ctrl.Policy().BaseLevel() {
		s.resumeNow(c, turnID, pipeline.Result{Value: view})
		return
	}
	snap, err := ctrl.Policy().NewController(false, s.d.now)
	if err == nil {
		err = snap.Restore(ctrl.State())
	}
	if err != nil {
		view.ContextErr = err.Error()
		s.resumeNow(c, turnID, pipeline.Result{Value: view})
		return
	}
	dir, customer := s.d.Config.Sandbox.CustomerContextDir, s.id
	s.io(c, turnID, "customer context", func(context.Context) pipeline.Result {
		cust, err := snap.CustomerContext(dir, customer)
		if err != nil {
			view.ContextErr = err.Error()
		}
		view.CustomerContext = cust
		return pipeline.Result{Value: view}
	})
}

// onUpdateAccess applies step 14 and persists the new state at once, so
// that a level the customer earned survives a crash before the next turn.
func (s *Scope) onUpdateAccess(c actor.Context, turnID string, r *pipeline.UpdateAccess) {
	now := s.d.now()
	trs := make([]access.Transition, 0, len(r.Gates))
	for _, g := range r.Gates {
		trs = append(trs, s.access.GatePassed(g, now))
	}
	st := s.accessState()
	snap, err := encodeSnapshot(snapshot{Turn: s.current.turn.Number, Access: st})
	if err != nil {
		c.Send(c.Self(), &stepDone{turnID: turnID, result: pipeline.Result{Err: err}})
		return
	}
	db, scope := s.d.DB, s.id
	s.io(c, turnID, "save access state", func(ctx context.Context) pipeline.Result {
		if err := db.Snapshots().Save(ctx, scope, snap); err != nil {
			return pipeline.Result{Value: trs, Err: fmt.Errorf("save access state of scope %s: %w", scope, err)}
		}
		return pipeline.Result{Value: trs}
	})
}
