package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/scheduler"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/approval"
	"github.com/silas-ai/silas/runtime/contextmgr"
	"github.com/silas-ai/silas/runtime/pipeline"
	"github.com/silas-ai/silas/runtime/plan"
	"github.com/silas-ai/silas/runtime/review"
	"github.com/silas-ai/silas/skills"
)

// standingTokenTTL is how long a goal's standing approval lasts; the
// owner is asked again after it.
const standingTokenTTL = 24 * time.Hour

// pendingApproval is the approval_request a scope's turn, or a WorkItem's
// re-plan, waits on.
type pendingApproval struct {
	requestID string
	turnID    string
	// replanOf is the actor asking on a work item's behalf (ownerWork);
	// nil for a turn's plan.
	replanOf *actor.PID
	standing bool // a goal's standing approval
	work     *messages.WorkItem
	event    *messages.ApprovalRequestEvent
	// expiresAt is when the timer declines it.
	expiresAt time.Time
	cancel    scheduler.CancelFunc
}

// approvalTimeout is how long the owner has to answer an approval_request
// before the plan counts as declined (spec 5.1.2, 8.1), and how long a plan
// asked while no owner connection is open waits for one.
func (s *Scope) approvalTimeout() time.Duration {
	return time.Duration(s.d.Config.Approval.RequestTimeoutSeconds) * time.Second
}

// approvalExpired is the scope's own timer message for a pending approval.
// Sender and receiver: the Scope.
type approvalExpired struct{ requestID string }

// approvalIssued carries the token minted and verified (consumed) for an
// approved plan. Sender: a scope IO goroutine. Receiver: the Scope.
type approvalIssued struct {
	turnID   string
	replanOf *actor.PID
	standing bool
	work     *messages.WorkItem
	token    *messages.ApprovalToken
	err      error
}

// workItemProgress carries a status of one of the scope's work items.
// Sender: a WorkItem actor. Receiver: its parent Scope, which sends the event
// to every attached connection.
type workItemProgress struct {
	event messages.WorkItemStatusEvent
	final bool
	// result is the finished work item's WorkItemResult (final only), and
	// taint the trust of what its tool calls brought in.
	result *messages.WorkItemResult
	taint  messages.TaintLevel
	title  string
}

// requestApproval performs a turn's ApprovalRequest: it asks every attached
// owner connection. With none attached it waits, within the same timeout,
// for one to attach (onAttach sends it the request): right after a restart
// the journaled turn is replayed before the owner's app has reconnected,
// and declining then would lose the plan. An owner who disconnects while
// asked still declines it (onOwnerGone).
func (s *Scope) requestApproval(c actor.Context, turnID string, w *messages.WorkItem) {
	resolve := func(out pipeline.ApprovalOutcome) {
		c.Send(c.Self(), &stepDone{turnID: turnID, result: pipeline.Result{Value: out}})
	}
	switch {
	case !s.d.canExecute():
		s.emitAudit("approval_declined", map[string]any{"work_item_id": w.ID, "reason": "execution not configured"})
		resolve(pipeline.ApprovalOutcome{Reason: "plan execution is not available in this process (no approval engine or sandbox); run plans through `silas serve`"})
		return
	case s.kind != messages.ScopeOwner:
		resolve(pipeline.ApprovalOutcome{Reason: "only the owner can approve plans"})
		return
	case s.draining:
		// Shutdown must not wait for the owner (onDrain).
		s.emitAudit("approval_declined", map[string]any{"work_item_id": w.ID, "reason": "shutdown"})
		resolve(pipeline.ApprovalOutcome{Reason: "shutdown"})
		return
	case s.approval != nil:
		// A re-plan or a goal's approval, asked outside any turn, holds the
		// scope's one approval slot; replacing it would leave its work item
		// waiting for a verdict that never comes.
		s.emitAudit("approval_declined", map[string]any{"work_item_id": w.ID, "reason": "another approval pending", "pending_request_id": s.approval.requestID})
		resolve(pipeline.ApprovalOutcome{Reason: "another approval is waiting for your answer; answer it in Review, then ask for this plan again"})
		return
	}
	if err := s.bindSkills(w); err != nil {
		s.emitAudit("approval_declined", map[string]any{"work_item_id": w.ID, "reason": "skills", "error": err.Error()})
		resolve(pipeline.ApprovalOutcome{Reason: "the plan cannot run: " + err.Error()})
		return
	}
	if why := goalPlanRefusal(w); why != "" {
		s.emitAudit("approval_declined", map[string]any{"work_item_id": w.ID, "reason": "goal", "error": why})
		resolve(pipeline.ApprovalOutcome{Reason: why})
		return
	}
	// A scheduled goal's approval is its standing approval (goals_scope.go).
	s.askApproval(c, &pendingApproval{requestID: uuid.NewString(), turnID: turnID, work: w, standing: scheduledGoal(w)})
}

// bindSkills sets w's skill_hashes (and its tasks', for a project) to the
// skill hashes the install approvals bound, from the daemon's in-memory
// snapshot: what the owner approves then names the exact skill files, and
// a skill changed or removed since stops the work item (INV-06). A planner
// that wrote skill_hashes itself is overruled.
func (s *Scope) bindSkills(w *messages.WorkItem) error {
	var snap *skills.Snapshot
	if s.d.Skills != nil {
		snap = s.d.Skills()
	}
	hashes, err := snap.Bind(w.Skills)
	if err != nil {
		return err
	}
	w.SkillHashes = hashes
	return nil
}

// askApproval sends p's approval_request to every attached connection and
// waits for the verdict or the timeout.
func (s *Scope) askApproval(c actor.Context, p *pendingApproval) {
	w := p.work
	timeout := s.approvalTimeout()
	p.expiresAt = s.d.now().Add(timeout)
	p.cancel = scheduler.NewTimerScheduler(c).SendOnce(timeout, c.Self(), &approvalExpired{requestID: p.requestID})
	p.event = &messages.ApprovalRequestEvent{
		Type: messages.EventApprovalRequest, RequestID: p.requestID, WorkItemID: w.ID, Title: w.Title, Body: w.Body,
		Budget: w.Budget, Verify: w.Verify, ExpiresAt: p.expiresAt.UTC(), Plan: plan.Card(w),
	}
	if p.standing {
		p.event.Title = "Standing approval: " + w.Title
		if w.FailureContext != nil {
			p.event.Body += "\n\n# Fix tasks this approves when a check fails\n" + *w.FailureContext
		}
	}
	// The risk is the runtime's, from the scope and the plan's reach
	// (spec 0.5.2); the answer must climb its rung (onApprovalResponse).
	effects := s.planEffects(&p.event.Plan)
	risk := review.Assign(review.PlanAction(&p.event.Plan, p.standing, effects))
	p.event.RiskLevel = string(risk)
	p.event.Card = planContract(s.d.Log, p.event, risk, p.standing, effects)
	s.approval = p
	for _, sink := range s.sinks {
		sink.Send(p.event)
	}
	s.emitAudit("approval_requested", map[string]any{"work_item_id": w.ID, "request_id": p.requestID, "owner_connections": len(s.sinks)})
	s.notifyAway(p) // push.go
}

// onOwnerWork asks the owner to approve a WorkItem's re-plan (spec
// 19.4.2), a goal's standing approval or a goal's fix task (spec 5.2.3): a
// fresh approval_request, outside any turn. The scope asks one thing at a
// time: while another approval is pending the sender is told to ask again.
// Like a turn's plan (requestApproval) it waits, within the request
// timeout, for an owner connection when none is attached; shutdown
// declines it at once. A fix task the goal's standing token authorized is
// journaled and started at once.
func (s *Scope) onOwnerWork(c actor.Context, m *ownerWork) {
	verdict := func(v *ownerVerdict) { v.workID = m.work.ID; c.Send(c.Sender(), v) }
	switch {
	case c.Sender() == nil:
		return
	case !s.d.canExecute() || s.kind != messages.ScopeOwner:
		verdict(&ownerVerdict{reason: "plan execution is not available in this scope"})
	case s.draining:
		s.emitAudit("approval_declined", map[string]any{"work_item_id": m.work.ID, "reason": "shutdown"})
		verdict(&ownerVerdict{shutdown: true, reason: "shutdown"})
	case m.authorized:
		s.startAuthorized(c, m.work, c.Sender())
	case s.approval != nil:
		verdict(&ownerVerdict{busy: true})
	default:
		if err := s.bindSkills(m.work); err != nil {
			s.emitAudit("approval_declined", map[string]any{"work_item_id": m.work.ID, "reason": "skills", "error": err.Error()})
			verdict(&ownerVerdict{reason: "the plan cannot run: " + err.Error()})
			return
		}
		if m.replaces != "" {
			s.emitAudit("replan_approval_requested", map[string]any{"work_item_id": m.work.ID, "replaces": m.replaces})
		}
		s.askApproval(c, &pendingApproval{requestID: uuid.NewString(), replanOf: c.Sender(), standing: m.standing, work: m.work})
	}
}

// startAuthorized journals a work item whose token was verified elsewhere
// (a goal's fix task under its standing token) and starts it.
func (s *Scope) startAuthorized(c actor.Context, w *messages.WorkItem, requester *actor.PID) {
	self, root, db, scope := c.Self(), s.d.sys.Root, s.d.DB, s.id
	stored := *w
	stored.Status = messages.StatusPending
	reply := func(err error) {
		root.Send(self, &approvalIssued{replanOf: requester, work: w, token: w.ApprovalToken, err: err})
	}
	if !s.d.tasks.Go("store authorized work item", func(ctx context.Context) {
		if err := db.WorkItems().Put(ctx, scope, &stored); err != nil {
			reply(fmt.Errorf("store work item: %w", err))
			return
		}
		reply(nil)
	}, reply) {
		reply(errShuttingDown)
	}
}

// onApprovalResponse handles the owner's verdict at once, whatever the
// scope is doing.
func (s *Scope) onApprovalResponse(c actor.Context, m *messages.ApprovalResponse) {
	p := s.approval
	if p == nil || p.requestID != m.RequestID {
		if s.forwardApproval(c, m) {
			return
		}
		send(m.Sink, webError(messages.CodeBadRequest, "no approval is pending with request_id "+quote(m.RequestID)+"; it was already answered or timed out", messages.TypeApprovalResponse))
		return
	}
	if m.Verdict.Approves() && refuseRung(s.d, m.Sink, messages.TypeApprovalResponse, m.RequestID, p.event.RiskLevel, m.Confirmed) {
		return // the card stays pending: answer it again with its rung
	}
	p.cancel()
	s.approval = nil
	if m.Verdict != messages.VerdictApproved {
		s.declineApproval(c, p, "declined")
		return
	}
	s.emitAudit("approval_granted", map[string]any{"work_item_id": p.work.ID, "request_id": p.requestID, "risk_level": p.event.RiskLevel, "confirmation": confirmedRung(m.Confirmed)})
	w, eng, self, root, db, scope := p.work, s.d.Approval, c.Self(), s.d.sys.Root, s.d.DB, s.id
	reply := func(tok *messages.ApprovalToken, err error) {
		root.Send(self, &approvalIssued{turnID: p.turnID, replanOf: p.replanOf, standing: p.standing, work: w, token: tok, err: err})
	}
	standing, maxStanding := p.standing, s.d.Config.Autonomy.MaxStandingExecutions
	started := s.d.tasks.Go("issue approval token", func(ctx context.Context) {
		d := messages.ApprovalDecision{Verdict: messages.VerdictApproved, ApprovalStrength: messages.StrengthTap, Conditions: map[string]any{}}
		if standing {
			// Verified per fix task the goal spawns (spec 5.2.3), never here.
			tok, err := eng.IssueToken(w, d, messages.ApprovalStanding,
				approval.WithMaxExecutions(maxStanding), approval.WithTTL(standingTokenTTL))
			if err != nil {
				err = fmt.Errorf("issue standing approval token: %w", err)
			}
			reply(tok, err)
			return
		}
		tok, err := eng.IssueToken(w, d, messages.ApprovalFullPlan)
		if err != nil {
			reply(nil, fmt.Errorf("issue approval token: %w", err))
			return
		}
		if err := eng.Verify(ctx, tok, w, nil); err != nil {
			reply(nil, fmt.Errorf("verify approval token: %w", err))
			return
		}
		// Journal the approved work item before it runs, so that it
		// resumes after a crash.
		stored := *w
		stored.ApprovalToken, stored.Status = tok, messages.StatusPending
		if err := db.WorkItems().Put(ctx, scope, &stored); err != nil {
			reply(nil, fmt.Errorf("store approved work item: %w", err))
			return
		}
		reply(tok, nil)
	}, func(err error) { reply(nil, err) })
	if !started {
		reply(nil, errShuttingDown)
	}
}

func (s *Scope) declineApproval(c actor.Context, p *pendingApproval, reason string) {
	s.emitAudit("approval_declined", map[string]any{"work_item_id": p.work.ID, "request_id": p.requestID, "reason": reason})
	if p.replanOf != nil {
		c.Send(p.replanOf, &ownerVerdict{workID: p.work.ID, reason: reason, noOwner: reason == "no_owner_connection", shutdown: reason == "shutdown"})
		return
	}
	c.Send(c.Self(), &stepDone{turnID: p.turnID, result: pipeline.Result{Value: pipeline.ApprovalOutcome{Reason: reason}}})
}

// onApprovalExpired declines a pending approval at its timeout. With no
// owner connection attached, no owner ever saw it: one who had attached and
// left would have declined it already (onOwnerGone).
func (s *Scope) onApprovalExpired(c actor.Context, m *approvalExpired) {
	if p := s.approval; p != nil && p.requestID == m.requestID {
		s.approval = nil
		reason := "timeout"
		if len(s.sinks) == 0 {
			reason = "no_owner_connection"
		}
		s.declineApproval(c, p, reason)
	}
}

// onOwnerGone declines a pending approval when the last connection that
// could answer it went away: a disconnected owner never leaves a turn
// hanging. The caller calls it only when an attached connection detached,
// so an approval waiting for a first owner connection is not declined.
func (s *Scope) onOwnerGone(c actor.Context) {
	if p := s.approval; p != nil && len(s.sinks) == 0 {
		p.cancel()
		s.approval = nil
		s.declineApproval(c, p, "no_owner_connection")
	}
}

// onApprovalIssued attaches the verified token, starts the work item in the
// background and lets the turn answer.
func (s *Scope) onApprovalIssued(c actor.Context, m *approvalIssued) {
	if m.err != nil {
		s.d.Log.Error().Err(m.err).Str("scope", s.id).Str("work_item", m.work.ID).Msg("approve plan")
		s.emitAudit("approval_failed", map[string]any{"work_item_id": m.work.ID, "error": m.err.Error()})
		if m.replanOf != nil {
			c.Send(m.replanOf, &ownerVerdict{workID: m.work.ID, reason: "the approval could not be recorded: " + m.err.Error()})
			return
		}
		c.Send(c.Self(), &stepDone{turnID: m.turnID, result: pipeline.Result{Err: m.err}})
		return
	}
	if m.standing {
		s.emitAudit("standing_approval_granted", map[string]any{"work_item_id": m.work.ID, "max_executions": m.token.MaxExecutions})
		if m.replanOf == nil { // a turn's goal: the Scheduler runs it
			s.scheduleGoal(c, m)
			return
		}
		c.Send(m.replanOf, &ownerVerdict{workID: m.work.ID, approved: true, token: m.token})
		return
	}
	m.work.ApprovalToken, m.work.Status = m.token, messages.StatusPending
	s.startWorkItem(c, m.work)
	if m.replanOf != nil {
		c.Send(m.replanOf, &ownerVerdict{workID: m.work.ID, approved: true})
		return
	}
	c.Send(c.Self(), &stepDone{turnID: m.turnID, result: pipeline.Result{Value: pipeline.ApprovalOutcome{Approved: true}}})
}

// startWorkItem spawns the WorkItem actor of w unless it already runs; w is
// newly approved or a stored active work item being resumed.
func (s *Scope) startWorkItem(c actor.Context, w *messages.WorkItem) {
	if _, running := s.workers[w.ID]; running {
		return
	}
	if w.Type == messages.WorkTask && w.Parent != nil && w.ApprovalToken == nil {
		// A project's task, stored by its own journal: its project resumes it.
		return
	}
	props := workItemProps(s.d, s.id, w)
	if w.Type == messages.WorkProject {
		props = actor.PropsFromProducer(func() actor.Actor { return newProject(s.d, s.id, w) }, s.d.props...)
	}
	s.workers[w.ID] = c.Spawn(props)
}

// onWorkItemProgress sends a work item's status to every attached connection.
func (s *Scope) onWorkItemProgress(m *workItemProgress) {
	for _, sink := range s.sinks {
		sink.Send(&m.event)
	}
	if m.final {
		delete(s.workers, m.event.WorkItemID)
		s.addWorkResult(m)
	}
}

// addWorkResult puts a finished work item's result into the scope's
// context as a tool result with the taint of what the work brought in, so
// that the proxy can answer questions about it; like any tool result it is
// masked once it is old (spec 5.7). It is stored in the chronicle so that
// it survives a reload.
func (s *Scope) addWorkResult(m *workItemProgress) {
	if m.result == nil || s.window == nil {
		return
	}
	content := renderResult(m.title, m.result)
	if m.taint == messages.TaintExternal {
		content = contextmgr.ScrubInjection(content)
	}
	now := s.d.now()
	it := messages.ContextItem{
		CtxID: uuid.NewString(), Zone: messages.ZoneChronicle, Content: content,
		TokenCount: contextmgr.EstimateTokens(content), CreatedAt: now, TurnNumber: s.turnNo,
		Source: contextmgr.ToolSource(fmt.Sprintf("work_item(%q)", m.result.WorkItemID), m.result.Status != messages.StatusDone),
		Taint:  m.taint, Kind: messages.KindToolResult, Relevance: 1,
	}
	ev := contextmgr.EvictionResult{Evicted: s.window.Add(it)}
	episodes := ev.Episodes(uuid.NewString, s.id, now)
	db, log, scope := s.d.DB, s.d.Log, s.id
	s.d.tasks.Go("store work item result", func(ctx context.Context) {
		err := db.Chronicle().Append(ctx, scope, it)
		if err == nil && len(episodes) > 0 {
			err = db.Memory().Put(ctx, scope, episodes...)
		}
		if err != nil {
			log.Warn().Err(err).Str("scope", scope).Str("work_item", it.Source).Msg("store work item result in the chronicle")
		}
	}, nil)
}
