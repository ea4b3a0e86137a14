package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/scheduler"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/approval"
	"github.com/silas-ai/silas/runtime/plan"
	"github.com/silas-ai/silas/runtime/verify"
)

// cycle is a goal's state of its cycle in flight (spec 5.2.3): check,
// then on failure a fix task authorized by the goal's standing token, or by
// the owner when the token cannot authorize it.
type cycle struct {
	running bool
	// token is the goal's standing token; Verify updates a copy, which
	// replaces it when the verification succeeds.
	token *messages.ApprovalToken
	// standingRefused: the owner declined the standing approval; every
	// fix task is then approved on its own.
	standingRefused bool
	// fix is the fix task being authorized.
	fix *messages.WorkItem
	// outcome collapses the audit of repeated cycle outcomes.
	outcome outcomeStreak
}

// outcomeStreak is the last audited outcome of a goal cycle and how many
// cycles since ended the same way unaudited. On a short schedule a goal
// that keeps failing (the owner away, a check broken for hours) would
// otherwise write the same entries every cycle; the first of a run and the
// change that ends it (a recovery, another failure) are audited, the
// latter with the count of the repeats. What a cycle spawns, authorizes or
// blocks is audited every time.
type outcomeStreak struct {
	key     string
	repeats int
}

// auditOutcome audits a cycle's outcome of g, named key, with the events
// unless it repeats the last audited outcome.
func (s *Scheduler) auditOutcome(g *goalRun, key string, events ...cycleAudit) {
	g.lastOutcome = key
	if key == g.outcome.key {
		g.outcome.repeats++
		return
	}
	for i, e := range events {
		if i == 0 && g.outcome.repeats > 0 {
			e.data["previous_outcome"] = g.outcome.key
			e.data["previous_outcome_repeats"] = g.outcome.repeats
		}
		s.audit(g.goal.ID, e.event, e.data)
	}
	g.outcome = outcomeStreak{key: key}
}

// cycleAudit is one audit entry of a cycle's outcome.
type cycleAudit struct {
	event string
	data  map[string]any
}

// goalChecked carries a cycle's check results. Sender: a Scheduler IO
// goroutine. Receiver: the Scheduler. fixActive: a fix task of the goal is
// still active, so the cycle was skipped.
type goalChecked struct {
	id        string
	gen       int
	report    verify.Report
	err       error
	fixActive bool
}

// standingVerified carries the consuming verification of the standing
// token for a fix task. Sender: a Scheduler IO goroutine. Receiver: the
// Scheduler.
type standingVerified struct {
	id    string
	gen   int
	fix   *messages.WorkItem
	token *messages.ApprovalToken // the verified copy
	err   error
	// storeErr: the verified copy could not be stored (or a dead token
	// deleted); the token in memory is still right.
	storeErr error
}

// ownerRetry is the Scheduler's timer message to ask the owner scope again
// after it was busy with another approval.
type ownerRetry struct{ msg *ownerWork }

// run returns the goal a cycle message belongs to, nil when that goal was
// removed (or replaced by a new goal of its id) since.
func (s *Scheduler) run(id string, gen int) *goalRun {
	if g := s.goals[id]; g != nil && g.gen == gen {
		return g
	}
	return nil
}

func (s *Scheduler) onTick(c actor.Context, m *goalTick) {
	g := s.run(m.id, m.gen)
	if g == nil || g.rec.Paused || g.running {
		return
	}
	g.running = true
	g.runs++
	g.lastRun = s.d.now()
	self, root, db, owner, goal, gen := c.Self(), s.d.sys.Root, s.d.DB, s.d.Config.OwnerID, g.goal, g.gen
	mgr, runner := s.d.Sandbox, s.d.Verifier
	reply := func(m *goalChecked) { m.id, m.gen = goal.ID, gen; root.Send(self, m) }
	if !s.d.tasks.Go("goal cycle check", func(ctx context.Context) {
		active, err := db.WorkItems().List(ctx, owner)
		if err != nil {
			reply(&goalChecked{err: fmt.Errorf("list active work items: %w", err)})
			return
		}
		if slices.ContainsFunc(active, func(w *messages.WorkItem) bool { return w.Parent != nil && *w.Parent == goal.ID }) {
			reply(&goalChecked{fixActive: true})
			return
		}
		// The checks run in an empty sandbox of their own: a goal's
		// checks look at the world, not at a work dir.
		in, err := mgr.Create(ctx, messages.DefaultSandboxConfig())
		if err != nil {
			reply(&goalChecked{err: fmt.Errorf("create the check's sandbox: %w", err)})
			return
		}
		defer func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_ = in.Destroy(dctx)
		}()
		rep, err := runner.Run(ctx, goal.Verify, in.WorkDir())
		reply(&goalChecked{report: rep, err: err})
	}, func(err error) { reply(&goalChecked{err: err}) }) {
		g.running = false
	}
}

func (s *Scheduler) onChecked(c actor.Context, m *goalChecked) {
	g := s.run(m.id, m.gen)
	if g == nil {
		return
	}
	switch {
	case g.rec.Paused:
		// Paused while the check ran: nothing starts from it.
		g.running = false
	case m.fixActive:
		g.lastOutcome = "skipped: a fix task is still running"
		g.running = false
	case m.err != nil:
		s.auditOutcome(g, "check error: "+m.err.Error(), cycleAudit{"goal_check_error", map[string]any{"error": m.err.Error()}})
		g.running = false
	case m.report.Passed:
		s.auditOutcome(g, "passed", cycleAudit{"goal_cycle", map[string]any{"passed": true, "status": string(messages.StatusHealthy)}})
		g.running = false
	default:
		failed := failedChecks(m.report)
		entry := cycleAudit{"goal_cycle", map[string]any{"passed": false, "failed": failed}}
		key := "failed: " + failed
		if g.goal.OnFailure != plan.OnFailureSpawnTask {
			s.auditOutcome(g, key, entry, cycleAudit{"goal_failed", map[string]any{"on_failure": g.goal.OnFailure, "failed": failed}})
			g.running = false
			return
		}
		s.auditOutcome(g, key, entry)
		g.fix = plan.FixTask(g.goal, g.goal.ID+"-fix-"+uuid.NewString()[:8], failed)
		hash, _ := messages.WorkItemPlanHash(g.fix)
		s.audit(g.goal.ID, "goal_fix_spawned", map[string]any{"work_item_id": g.fix.ID, "spawned_task_hash": hash})
		switch {
		case g.token != nil:
			s.verifyStanding(c, g)
		case g.standingRefused:
			s.askOwner(c, g.fix)
		default:
			s.sendToOwner(c, &ownerWork{work: g.goal, standing: true})
		}
	}
}

// verifyStanding authorizes g.fix with the goal's standing token: the
// consuming Verify of spec 5.2.3 step 4, on a copy of the token.
// The verified copy is stored before the fix task starts, so that a
// restart continues from its execution count; a token that can never verify
// again is deleted.
func (s *Scheduler) verifyStanding(c actor.Context, g *goalRun) {
	self, root, eng, goal, fix, tok, gen := c.Self(), s.d.sys.Root, s.d.Approval, g.goal, g.fix, cloneToken(g.token), g.gen
	db, owner := s.d.DB, s.d.Config.OwnerID
	reply := func(m *standingVerified) { m.id, m.gen = goal.ID, gen; root.Send(self, m) }
	if !s.d.tasks.Go("verify standing token", func(ctx context.Context) {
		m := &standingVerified{fix: fix, token: tok, err: eng.Verify(ctx, tok, goal, fix)}
		switch {
		case m.err == nil:
			m.storeErr = db.WorkItems().PutStanding(ctx, owner, goal.ID, tok)
		case deadToken(m.err):
			m.storeErr = db.WorkItems().DeleteStanding(ctx, owner, goal.ID)
		}
		reply(m)
	}, func(err error) { reply(&standingVerified{fix: fix, err: err}) }) {
		g.fix, g.running = nil, false
	}
}

func (s *Scheduler) onStandingVerified(c actor.Context, m *standingVerified) {
	g := s.run(m.id, m.gen)
	if g == nil || g.fix == nil || g.fix.ID != m.fix.ID {
		return
	}
	if m.storeErr != nil {
		// Costs at most a question to the owner after a restart.
		s.d.Log.Warn().Err(m.storeErr).Str("goal", g.goal.ID).Msg("store the goal's standing token")
	}
	if m.err != nil {
		// Exhausted, expired or otherwise invalid: the owner decides.
		s.audit(g.goal.ID, "standing_verification_failed", map[string]any{"work_item_id": m.fix.ID, "reason": m.err.Error()})
		if deadToken(m.err) {
			g.token = nil // the next failing cycle asks for a new standing approval
		}
		s.askOwner(c, m.fix)
		return
	}
	// A fix task authorized here runs even if the goal was paused
	// meanwhile: the execution it used is spent.
	g.token = m.token
	m.fix.NeedsApproval = false
	m.fix.ApprovalToken = cloneToken(m.token)
	s.audit(g.goal.ID, "goal_fix_authorized", map[string]any{"work_item_id": m.fix.ID, "standing": true,
		"executions_used": m.token.ExecutionsUsed, "max_executions": m.token.MaxExecutions})
	s.sendToOwner(c, &ownerWork{work: m.fix, authorized: true})
}

// deadToken reports whether a standing token's verification failure is
// final: expired, or a stale copy (a restart after a verification whose
// result was not stored) that the engine refuses as a replay.
func deadToken(err error) bool {
	return errors.Is(err, approval.ErrExpired) || errors.Is(err, approval.ErrReplay)
}

// askOwner falls back to an interactive approval of the fix task.
func (s *Scheduler) askOwner(c actor.Context, fix *messages.WorkItem) {
	fix.NeedsApproval, fix.ApprovalToken = true, nil
	s.sendToOwner(c, &ownerWork{work: fix})
}

// verdictGoal returns the goal an ownerVerdict is about: its own standing
// approval, or its fix task in flight.
func (s *Scheduler) verdictGoal(workID string) *goalRun {
	for _, g := range s.goals {
		if g.fix != nil && (g.goal.ID == workID || g.fix.ID == workID) {
			return g
		}
	}
	return nil
}

func (s *Scheduler) onVerdict(c actor.Context, m *ownerVerdict) {
	g := s.verdictGoal(m.workID)
	if g == nil {
		return
	}
	if m.busy {
		msg := &ownerWork{work: g.fix}
		if m.workID == g.goal.ID {
			msg = &ownerWork{work: g.goal, standing: true}
		} else if g.fix.ApprovalToken != nil {
			msg.authorized = true
		}
		scheduler.NewTimerScheduler(c).SendOnce(replanRetryAfter, c.Self(), &ownerRetry{msg: msg})
		return
	}
	switch {
	case m.shutdown:
		// Not a decline: the goal asks again once Silas runs again.
		g.fix, g.running = nil, false
	case m.workID == g.goal.ID && m.approved:
		g.token = m.token
		s.verifyStanding(c, g)
	case m.workID == g.goal.ID && m.noOwner:
		// Nobody answered within the request timeout: not a refusal of
		// the standing approval; the next failing cycle asks again.
		s.audit(g.goal.ID, "goal_fix_blocked", map[string]any{"work_item_id": g.fix.ID, "reason": m.reason})
		g.fix, g.running = nil, false
	case m.workID == g.goal.ID:
		g.standingRefused = true
		s.audit(g.goal.ID, "standing_approval_declined", map[string]any{"reason": m.reason})
		s.askOwner(c, g.fix)
	case m.approved:
		s.audit(g.goal.ID, "goal_fix_started", map[string]any{"work_item_id": g.fix.ID})
		g.fix, g.running = nil, false
	default:
		s.audit(g.goal.ID, "goal_fix_blocked", map[string]any{"work_item_id": g.fix.ID, "reason": m.reason})
		g.fix, g.running = nil, false
	}
}

// sendToOwner sends msg to the owner's scope, which the Stream spawns when
// it is not running.
func (s *Scheduler) sendToOwner(c actor.Context, msg *ownerWork) {
	s.owner = append(s.owner, msg)
	c.Request(s.d.stream, &messages.ScopeFor{ScopeID: s.d.Config.OwnerID, Kind: messages.ScopeOwner})
}

func (s *Scheduler) onScopeRef(c actor.Context, m *messages.ScopeRef) {
	for _, msg := range s.owner {
		c.Request(m.PID, msg)
	}
	s.owner = nil
}

// cloneToken copies t deeply enough that Verify on the copy leaves t alone.
func cloneToken(t *messages.ApprovalToken) *messages.ApprovalToken {
	if t == nil {
		return nil
	}
	cp := *t
	cp.ExecutionNonces = slices.Clone(t.ExecutionNonces)
	cp.Signature = slices.Clone(t.Signature)
	cp.Conditions = maps.Clone(t.Conditions)
	return &cp
}
