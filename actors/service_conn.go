package actors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/keys"
	"github.com/silas-ai/silas/runtime/review"
	"github.com/silas-ai/silas/skills/connection"
)

// ServiceConnection is one service connection (spec 2.5): a child of the
// ConnectionManager that owns the connection's record and runs its
// skill's scripts, each in a fresh sandbox, from a tracked goroutine whose
// result comes back as a message tagged with the run it belongs to.
//
// Its lifecycle: proposed (discovery, then the owner's connection_manage
// card), connecting (setup.py's conversation), active (health checks on
// the connection's cron, refresh ahead of expiry, recovery once), failed
// (a failure card with the recovery options). The record is journaled on
// every change. A child that starts on a record left connecting (Silas
// stopped mid-setup) puts it back to proposed and removes the partial
// credential, so a connection is never half active.
type ServiceConnection struct {
	d     *shared
	rec   messages.Connection
	fresh bool
	cron  gocron.Scheduler

	// approval is the request id of the pending connection_manage card,
	// which may be answered until approvalBy.
	approval   string
	approvalBy time.Time
	// approvalRisk is the card's risk level, which its answer must meet.
	approvalRisk string
	provider     string
	scopes       []string // incremental scopes of a re-auth

	setup *setupState
	// failureCard is the request id of the pending failure card.
	failureCard string
	failure     *messages.ConnectionFailure

	// health is set while a health, refresh or recovery chain runs;
	// waiting are the CheckConnection senders to answer when it ends.
	health  *healthRun
	waiting []*actor.PID
	// recoveries counts the automatic recoveries since the connection was
	// last healthy on its own; at connections.recovery_max_attempts the
	// next failure goes to the owner instead (in memory: a restart starts
	// the count again).
	recoveries int
	runs       int // numbers every script run, to drop stale results

	// asks are the permission escalation cards on show.
	asks []pendingAsk
	// itRequest is the IT request work item on its way to the owner.
	itRequest *messages.WorkItem

	removing *actor.PID
}

func newServiceConnection(d *shared, rec messages.Connection, fresh bool) *ServiceConnection {
	return &ServiceConnection{d: d, rec: rec, fresh: fresh}
}

// Messages of the child's IO goroutines.
type (
	connSaved struct {
		err error
	}
	connDiscovered struct {
		run int
		res connection.DiscoverResult
		out connection.Outcome
	}
	connTokenIssued struct {
		run int
		err error
	}
	connRemoved struct{ err error }
)

// Receive handles the connection's lifecycle.
func (s *ServiceConnection) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		s.start(c)
	case *actor.Stopping, *actor.Restarting:
		s.stopAll()
		for _, p := range s.asks {
			p.ask.reply <- permissionVerdict{detail: "Silas is stopping"}
		}
		s.asks = nil
	case *permissionAsk:
		s.onPermissionAsk(c, m)
	case *messages.ScopeRef:
		s.onOwnerScope(c, m)
	case *ownerVerdict:
		s.onITVerdict(c, m)
	case *connSaved:
		if m.err != nil {
			s.d.Log.Error().Err(m.err).Str("connection", s.rec.ConnectionID).Msg("store the connection record")
		}
	case *connDiscovered:
		s.onDiscovered(c, m)
	case *messages.ApprovalResponse:
		s.onApproval(c, m)
	case *connTokenIssued:
		s.onTokenIssued(c, m)
	case *setupStarted:
		s.onSetupStarted(c, m)
	case *setupEvent:
		s.onSetupEvent(c, m)
	case *setupEnded:
		s.onSetupEnded(c, m)
	case *setupStored:
		s.onSetupStored(c, m)
	case *setupCancelDeadline:
		if s.setup != nil && s.setup.run == m.run && s.setup.handle != nil {
			s.setup.handle.Stop()
		}
	case *SecretStored:
		s.onSecretStored(c, m)
	case *ConnectionCardAnswer:
		s.onCardAnswer(c, m)
	case *CheckConnection:
		s.check(c, c.Sender())
	case *healthTick:
		s.check(c, nil)
	case *refreshTick:
		s.refresh(c, nil)
	case *healthDone:
		s.onHealthDone(c, m)
	case *refreshDone:
		s.onRefreshDone(c, m)
	case *recoverDone:
		s.onRecoverDone(c, m)
	case *RemoveConnection:
		s.onRemove(c)
	case *connUsed:
		now := s.d.now()
		s.rec.LastUsed = &now
		s.changed(c)
	case *connRemoved:
		s.onRemoved(c, m)
	}
}

func (s *ServiceConnection) start(c actor.Context) {
	switch {
	case s.fresh:
		s.fresh = false
		s.audit("connection_proposed", map[string]any{"skill": s.rec.SkillName, "name": s.rec.Name, "permissions": s.rec.Permissions})
		s.save(c)
		s.discover(c)
	case s.rec.Status == messages.ConnectionConnecting:
		// Silas stopped during the setup: its process is gone. Never half
		// active: back to proposed, without what the setup stored.
		wasActive := s.rec.Account != "" && s.rec.LastHealthCheck != nil
		s.rec.Status = messages.ConnectionProposed
		s.rec.LastError = "Silas stopped during the setup; connect again"
		if wasActive {
			s.rec.Status = messages.ConnectionFailed
			s.rec.LastError = "Silas stopped during a re-authorization; reconnect"
		} else {
			s.deleteCredential(c)
		}
		s.audit("connection_setup_interrupted", map[string]any{"status": string(s.rec.Status)})
		s.save(c)
	case s.rec.Status == messages.ConnectionActive:
		s.schedule(c)
		s.check(c, nil) // startup health check (spec 5.1 startup step 3)
	}
	c.Send(c.Parent(), &connChanged{rec: s.rec})
}

// changed journals the record and tells the manager.
func (s *ServiceConnection) changed(c actor.Context) {
	s.rec.UpdatedAt = s.d.now()
	s.save(c)
	c.Send(c.Parent(), &connChanged{rec: s.rec})
}

func (s *ServiceConnection) save(c actor.Context) {
	rec, db, self, root := s.rec, s.d.DB, c.Self(), s.d.sys.Root
	reply := func(err error) { root.Send(self, &connSaved{err: err}) }
	if !s.d.tasks.Go("save connection", func(ctx context.Context) { reply(db.Connections().Put(ctx, rec)) }, reply) {
		reply(errShuttingDown)
	}
}

// status changes the lifecycle state and tells the owner.
func (s *ServiceConnection) status(c actor.Context, st messages.ConnectionStatus, detail string) {
	s.rec.Status = st
	if st == messages.ConnectionFailed || detail != "" && st != messages.ConnectionActive {
		s.rec.LastError = detail
	}
	if st == messages.ConnectionActive {
		s.rec.LastError = ""
	}
	s.changed(c)
	s.toOwner(c, &messages.ConnectionStatusEvent{Type: messages.EventConnectionStatus, ConnectionID: s.rec.ConnectionID, Name: s.rec.Name, Status: st, Detail: detail})
}

func (s *ServiceConnection) toOwner(c actor.Context, events ...any) {
	c.Send(c.Parent(), &connToOwner{events: events})
}

// openCard registers a card with the manager (for routing and for owner
// connections that attach later) and sends it to the owner.
func (s *ServiceConnection) openCard(c actor.Context, requestID string, ev any) {
	c.Send(c.Parent(), &connCard{requestID: requestID, connID: s.rec.ConnectionID, event: ev})
	s.toOwner(c, ev)
}

func (s *ServiceConnection) closeCard(c actor.Context, requestID string) {
	if requestID != "" {
		c.Send(c.Parent(), &connCard{requestID: requestID})
	}
}

func (s *ServiceConnection) audit(event string, data map[string]any) {
	data["connection_id"] = s.rec.ConnectionID
	s.d.sys.Root.Send(s.d.audit, &messages.AuditEvent{Time: s.d.now(), Event: event, Scope: s.d.Config.OwnerID, Data: data})
}

func newCardID() string { return connCardPrefix + uuid.NewString() }

// prepare builds the runner of one script run: it checks the connection
// skill against its install record (INV-06), writes the approved bytes
// under a fresh directory for the sandbox to mount read-only, and reads
// the credential. cleanup removes the copy.
//
// It runs in IO goroutines, so it takes the shared dependencies and a copy
// of the record, never the actor.
func prepareRunner(ctx context.Context, d *shared, rec messages.Connection) (connection.Runner, func(), error) {
	none := func() {}
	var r connection.Runner
	if d.Sandbox == nil || d.Vault == nil || d.Skills == nil {
		return r, none, fmt.Errorf("%w: it needs an isolating sandbox and the keystore", ErrConnectionsUnavailable)
	}
	snap := d.Skills()
	if snap == nil || snap.Catalog == nil {
		return r, none, fmt.Errorf("%w: no skills are loaded", ErrNotConnectionSkill)
	}
	e, ok := snap.Catalog.Get(rec.SkillName)
	if !ok || e.Skill.Connection == nil {
		return r, none, fmt.Errorf("skill %s: %w; install it again", rec.SkillName, ErrNotConnectionSkill)
	}
	sk, err := currentSkill(ctx, d.DB, e, "")
	if err != nil {
		return r, none, err
	}
	root := filepath.Join(d.Config.DataPath("sandbox", "skill-copies"), uuid.NewString())
	cleanup := func() { _ = os.RemoveAll(root) }
	dir := filepath.Join(root, sk.Name)
	if err := writeSkill(sk, dir); err != nil {
		cleanup()
		return r, none, err
	}
	cred, err := d.Vault.Credential(rec.CredentialRef)
	if errors.Is(err, keys.ErrNotFound) {
		cred, err = nil, nil
	}
	if err != nil {
		cleanup()
		return r, none, fmt.Errorf("read the credential: %w", err)
	}
	r = connection.Runner{
		Sandbox: d.Sandbox, SkillDir: dir, ConnectionID: rec.ConnectionID, CredentialRef: rec.CredentialRef,
		Settings: rec.Settings, Credential: cred,
	}
	return r, cleanup, nil
}

// discover runs discover.py, then puts the connection_manage card.
func (s *ServiceConnection) discover(c actor.Context) {
	s.runs++
	run, self, root, d, rec := s.runs, c.Self(), s.d.sys.Root, s.d, s.rec
	hint, _ := s.rec.Settings["identity_hint"].(map[string]any)
	req := connection.Discover{Type: "discover", IdentityHint: hint, Settings: s.rec.Settings}
	reply := func(m *connDiscovered) { m.run = run; root.Send(self, m) }
	if !s.d.tasks.Go("discover connection", func(ctx context.Context) {
		r, cleanup, err := prepareRunner(ctx, d, rec)
		defer cleanup()
		if err != nil {
			reply(&connDiscovered{out: connection.Outcome{Err: err}})
			return
		}
		m := &connDiscovered{}
		m.out = r.Call(ctx, connection.Script{Path: "scripts/discover.py", Timeout: s.scriptTimeout()}, req, &m.res)
		reply(m)
	}, func(err error) { reply(&connDiscovered{out: connection.Outcome{Err: err}}) }) {
		reply(&connDiscovered{out: connection.Outcome{Err: errShuttingDown}})
	}
}

func (s *ServiceConnection) onDiscovered(c actor.Context, m *connDiscovered) {
	if m.run != s.runs || s.removing != nil {
		return
	}
	switch {
	case !m.out.OK():
		s.fail(c, "discovery", scriptFailure(s.rec.Name, "discover.py", m.out))
		return
	case m.res.Failure != nil:
		if err := m.res.Failure.Validate(); err != nil {
			s.fail(c, "discovery", scriptFailure(s.rec.Name, "discover.py", connection.Outcome{Err: err}))
			return
		}
		s.fail(c, "discovery", m.res.Failure)
		return
	}
	if m.res.AuthStrategy != "" && messages.AuthStrategy(m.res.AuthStrategy) != s.rec.AuthStrategy {
		s.fail(c, "discovery", scriptFailure(s.rec.Name, "discover.py", connection.Outcome{Err: fmt.Errorf(
			"it reports auth_strategy %q, but the skill declares %q", m.res.AuthStrategy, s.rec.AuthStrategy)}))
		return
	}
	s.provider = m.res.Provider
	if len(m.res.InitialPermissions) > 0 {
		s.rec.InitialPermissions = slices.Clone(m.res.InitialPermissions)
	}
	s.audit("connection_discovered", map[string]any{"provider": s.provider, "auth_strategy": string(s.rec.AuthStrategy)})
	s.askApproval(c, "")
}

// askApproval puts the connection_manage card (spec 5.10.1 step 2).
// reason, when set, says why (a reconnect).
func (s *ServiceConnection) askApproval(c actor.Context, reason string) {
	s.closeCard(c, s.approval)
	s.approval = newCardID()
	service := s.provider
	if service == "" {
		service = s.rec.Name
	}
	risk := connectRisk(s.rec.Permissions)
	s.approvalRisk = string(risk)
	asked := s.rec.InitialPermissions
	if len(s.scopes) > 0 {
		asked = s.scopes
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Connect Silas to %s through the %s skill (%s).", service, s.rec.SkillName, s.rec.AuthStrategy)
	if len(asked) > 0 {
		fmt.Fprintf(&b, " It asks the service for: %s.", strings.Join(asked, ", "))
	}
	fmt.Fprintf(&b, " Silas may: %s.", permissionWords(s.rec.Permissions))
	if reason != "" {
		b.WriteString(" " + reason)
	}
	sum := s.rec.Summary()
	sum.Provider, sum.RequestedScopes = service, asked
	s.approvalBy = s.d.now().Add(s.approvalTimeout())
	ev := &messages.ConnectionApprovalEvent{
		Type: messages.EventApprovalRequest, RequestID: s.approval, Scope: messages.ApprovalConnectionManage,
		Title: "Connect to " + service + "?", Body: b.String(), RiskLevel: string(risk),
		ExpiresAt: s.approvalBy, Connection: sum,
	}
	ev.Card = connectContract(s.d.Log, ev, risk)
	s.openCard(c, s.approval, ev)
}

// scriptTimeout and setupTimeout are the configured bounds of one run.
func (s *ServiceConnection) scriptTimeout() time.Duration {
	if t := s.d.Config.Connections.ScriptTimeout(); t > 0 {
		return t
	}
	return defaultScriptTimeout
}

func (s *ServiceConnection) setupTimeout() time.Duration {
	if t := s.d.Config.Connections.SetupTimeout(); t > 0 {
		return t
	}
	return defaultSetupTimeout
}

func (s *ServiceConnection) approvalTimeout() time.Duration {
	return time.Duration(s.d.Config.Approval.RequestTimeoutSeconds) * time.Second
}

func permissionWords(ps []messages.ConnectionPermission) string {
	words := map[messages.ConnectionPermission]string{
		messages.PermissionObserve: "read and summarize", messages.PermissionDraft: "prepare drafts for your review",
		messages.PermissionAct: "send, change and delete", messages.PermissionManage: "reconfigure the service",
	}
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if w, ok := words[p]; ok {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return "read and summarize"
	}
	return strings.Join(out, ", ")
}

// onApproval takes the owner's verdict on the connection_manage card.
func (s *ServiceConnection) onApproval(c actor.Context, m *messages.ApprovalResponse) {
	if m.RequestID != s.approval {
		send(m.Sink, webError(messages.CodeBadRequest, "no approval is pending with request_id "+quote(m.RequestID), messages.TypeApprovalResponse))
		return
	}
	if m.Verdict.Approves() && !s.d.now().After(s.approvalBy) &&
		refuseRung(s.d, m.Sink, messages.TypeApprovalResponse, m.RequestID, s.approvalRisk, m.Confirmed) {
		return // the card stays pending: answer it again with its rung
	}
	s.closeCard(c, s.approval)
	s.approval = ""
	if s.d.now().After(s.approvalBy) {
		send(m.Sink, webError(messages.CodeBadRequest, "the connection card expired; nothing was set up. Propose the connection again", messages.TypeApprovalResponse))
		s.status(c, messages.ConnectionProposed, "the connection card expired before it was answered")
		return
	}
	if !m.Verdict.Approves() {
		s.scopes = nil
		s.audit("connection_declined", map[string]any{})
		s.status(c, messages.ConnectionProposed, "you declined the connection; nothing was set up")
		return
	}
	s.approveSetup(c)
}

// approveSetup records the owner's connection_manage approval with a
// signed token, then starts the setup.
func (s *ServiceConnection) approveSetup(c actor.Context) {
	s.runs++
	run, self, root, eng, rec := s.runs, c.Self(), s.d.sys.Root, s.d.Approval, s.rec
	reply := func(err error) { root.Send(self, &connTokenIssued{run: run, err: err}) }
	if eng == nil {
		reply(fmt.Errorf("%w: no approval engine", ErrConnectionsUnavailable))
		return
	}
	if !s.d.tasks.Go("connection approval token", func(ctx context.Context) {
		subject := connectionSubject(rec)
		tok, err := eng.IssueToken(subject, messages.ApprovalDecision{
			Verdict: messages.VerdictApproved, ApprovalStrength: messages.StrengthTap,
			Conditions: map[string]any{"connection_id": rec.ConnectionID, "skill": rec.SkillName},
		}, messages.ApprovalConnectionManage)
		if err == nil {
			err = eng.Verify(ctx, tok, subject, nil)
		}
		if err == nil {
			auditFrom(s.d, "connection_approved", map[string]any{"connection_id": rec.ConnectionID, "token_id": tok.TokenID, "scope": string(tok.Scope)})
		}
		reply(err)
	}, reply) {
		reply(errShuttingDown)
	}
}

// connectionSubject is what a connection_manage token is bound to.
func connectionSubject(rec messages.Connection) *messages.WorkItem {
	return &messages.WorkItem{
		ID: "connection-" + rec.ConnectionID, Type: messages.WorkTask, Title: "Connect " + rec.Name,
		Body:   fmt.Sprintf("connection_manage connection=%s skill=%s strategy=%s permissions=%v", rec.ConnectionID, rec.SkillName, rec.AuthStrategy, rec.Permissions),
		Skills: []string{rec.SkillName},
	}
}

func (s *ServiceConnection) onTokenIssued(c actor.Context, m *connTokenIssued) {
	if m.run != s.runs || s.removing != nil {
		return
	}
	if m.err != nil {
		s.fail(c, "approval", &messages.ConnectionFailure{FailureType: messages.FailureUnknown, Service: s.rec.Name,
			Message: "The approval could not be recorded: " + m.err.Error() + ". Nothing was set up."})
		return
	}
	s.startSetup(c)
}

// onRemove stops everything, then removes the credential and the record.
func (s *ServiceConnection) onRemove(c actor.Context) {
	if s.removing != nil {
		c.Respond(&ConnectionAnswer{Err: fmt.Errorf("connection %s: %w: it is being removed", s.rec.ConnectionID, ErrConnectionBusy)})
		return
	}
	s.removing = c.Sender()
	s.stopAll()
	s.dropAsks(c, "the owner removed the connection")
	for _, id := range []string{s.approval, s.failureCard} {
		s.closeCard(c, id)
	}
	if s.setup != nil {
		s.closeCard(c, s.setup.card)
	}
	rec, db, vault, self, root := s.rec, s.d.DB, s.d.Vault, c.Self(), s.d.sys.Root
	reply := func(err error) { root.Send(self, &connRemoved{err: err}) }
	if !s.d.tasks.Go("remove connection", func(ctx context.Context) {
		var err error
		if vault != nil {
			err = vault.DeleteCredential(ctx, rec.CredentialRef)
		}
		if err == nil {
			err = db.Connections().Delete(ctx, rec.ConnectionID)
		}
		reply(err)
	}, reply) {
		reply(errShuttingDown)
	}
}

func (s *ServiceConnection) onRemoved(c actor.Context, m *connRemoved) {
	sum := s.rec.Summary()
	if m.err == nil {
		s.audit("connection_removed", map[string]any{"skill": s.rec.SkillName})
		sum.Status = "removed"
		s.toOwner(c, &messages.ConnectionStatusEvent{Type: messages.EventConnectionStatus, ConnectionID: s.rec.ConnectionID, Name: s.rec.Name, Status: "removed"})
		c.Send(c.Parent(), &connGone{id: s.rec.ConnectionID})
	}
	if s.removing != nil {
		c.Send(s.removing, &ConnectionAnswer{Connection: sum, Err: m.err})
	}
	if m.err != nil {
		s.removing = nil
	}
}

// deleteCredential removes the connection's credential and any pending
// secure input for it, in the background.
func (s *ServiceConnection) deleteCredential(c actor.Context) {
	vault, ref, log, id := s.d.Vault, s.rec.CredentialRef, s.d.Log, s.rec.ConnectionID
	if vault == nil {
		return
	}
	s.d.tasks.Go("delete connection credential", func(ctx context.Context) {
		if err := vault.DeleteCredential(ctx, ref); err != nil {
			log.Warn().Err(err).Str("connection", id).Msg("delete a connection's partial credential")
		}
	}, nil)
}

// stopAll stops the running setup and the schedules.
func (s *ServiceConnection) stopAll() {
	if s.setup != nil && s.setup.handle != nil {
		s.setup.handle.Stop()
	}
	if s.cron != nil {
		_ = s.cron.Shutdown()
		s.cron = nil
	}
}

// fail ends a step with a failure card and the failed status.
func (s *ServiceConnection) fail(c actor.Context, step string, f *messages.ConnectionFailure) {
	s.closeCard(c, s.failureCard)
	s.failureCard, s.failure = newCardID(), f
	s.audit("connection_failed", map[string]any{"step": step, "failure_type": f.FailureType, "message": f.Message})
	risk := failureRisk(f)
	ev := &messages.ConnectionFailureEvent{
		Type: messages.EventConnectionFailure, RequestID: s.failureCard, ConnectionID: s.rec.ConnectionID, ConnectionFailure: *f, RiskLevel: string(risk),
	}
	ev.Card = failureContract(s.d.Log, ev, risk)
	s.openCard(c, s.failureCard, ev)
	st := messages.ConnectionFailed
	if step == "discovery" || step == "approval" || step == "setup" && s.rec.Account == "" {
		st = messages.ConnectionProposed
	}
	s.status(c, st, f.Message)
}

// scriptFailure turns a script that did not answer as the contract says
// into a ConnectionFailure the owner can act on.
func scriptFailure(service, script string, out connection.Outcome) *messages.ConnectionFailure {
	why := out.Describe()
	if out.Problem != "" {
		why = "it was stopped because " + out.Problem + "; nothing it produced was stored"
	}
	return &messages.ConnectionFailure{
		FailureType: messages.FailureUnknown, Service: service,
		Message: fmt.Sprintf("The connection skill's %s did not work: %s.", script, why),
		RecoveryOptions: []messages.RecoveryOption{
			{Action: "retry", Label: "Try again", Description: "Run it again", RiskLevel: string(review.Low)},
			{Action: "skip", Label: "Skip", Description: "Leave the connection as it is", RiskLevel: string(review.Low)},
		},
	}
}
