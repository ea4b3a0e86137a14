package actors

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/go-co-op/gocron/v2"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/review"
	"github.com/silas-ai/silas/skills/connection"
)

// healthRun is one health chain (spec 5.10.3, 5.10.4): health check,
// then refresh or recovery as its result asks, each at most once.
type healthRun struct {
	run       int
	refreshed bool
	recovered bool
	// unhealthy: the chain began with a failed health check, so a refresh
	// cures it only if the check passes again afterwards.
	unhealthy bool
	// reason is why the chain ended unhealthy so far.
	reason string
}

// Messages of the health goroutines.
type (
	healthDone struct {
		run int
		res messages.HealthCheckResult
		out connection.Outcome
	}
	refreshDone struct {
		run int
		res connection.RefreshResult
		out connection.Outcome
		err error // storing the new credential
	}
	recoverDone struct {
		run int
		res connection.RecoverResult
		out connection.Outcome
	}
)

// schedule registers the connection's health check on its cron and, when
// its token expiry is known, a refresh ahead of it (spec 5.10.3 step 4).
func (s *ServiceConnection) schedule(c actor.Context) {
	if s.cron != nil {
		_ = s.cron.Shutdown()
		s.cron = nil
	}
	cron, err := gocron.NewScheduler(gocron.WithLocation(time.UTC))
	if err != nil {
		s.d.Log.Error().Err(err).Str("connection", s.rec.ConnectionID).Msg("schedule the connection's health checks")
		return
	}
	self, root := c.Self(), s.d.sys.Root
	spec := s.rec.HealthCheck
	if spec == "" {
		spec = s.d.Config.Connections.HealthCheckDefault
	}
	if _, err := cron.NewJob(gocron.CronJob(spec, false), gocron.NewTask(func() { root.Send(self, &healthTick{}) }),
		gocron.WithSingletonMode(gocron.LimitModeReschedule)); err != nil {
		s.d.Log.Error().Err(err).Str("connection", s.rec.ConnectionID).Str("cron", spec).Msg("schedule the connection's health checks")
	}
	if t := s.rec.TokenExpiresAt; t != nil {
		at := t.Add(-refreshAhead)
		if at.Before(s.d.now()) {
			at = s.d.now().Add(time.Second)
		}
		if _, err := cron.NewJob(gocron.OneTimeJob(gocron.OneTimeJobStartDateTime(at)), gocron.NewTask(func() { root.Send(self, &refreshTick{}) })); err != nil {
			s.d.Log.Error().Err(err).Str("connection", s.rec.ConnectionID).Msg("schedule the connection's token refresh")
		}
	}
	cron.Start()
	s.cron = cron
}

// check runs the health chain, or joins the one running.
func (s *ServiceConnection) check(c actor.Context, from *actor.PID) {
	if from != nil {
		s.waiting = append(s.waiting, from)
	}
	if s.health != nil {
		return
	}
	if s.rec.Status != messages.ConnectionActive && s.rec.Status != messages.ConnectionFailed || s.setup != nil || s.removing != nil {
		s.answerChecks(c, fmt.Errorf("connection %s is %s: %w; only an active or failed connection is checked", s.rec.ConnectionID, s.rec.Status, ErrConnectionBusy))
		return
	}
	s.runs++
	s.health = &healthRun{run: s.runs}
	s.runHealth(c, s.health)
}

// runHealth runs health_check.py for chain h.
func (s *ServiceConnection) runHealth(c actor.Context, h *healthRun) {
	run := h.run
	s.script(c, "health check", func(r connection.Runner, ctx context.Context) any {
		m := &healthDone{run: run}
		m.out = r.Call(ctx, connection.Script{Path: "scripts/health_check.py", Timeout: s.scriptTimeout()}, nil, &m.res)
		return m
	}, func(err error) any { return &healthDone{run: run, out: connection.Outcome{Err: err}} })
}

// script runs fn with a prepared runner in a tracked goroutine and sends
// its result (or onErr's) to the actor.
func (s *ServiceConnection) script(c actor.Context, what string, fn func(connection.Runner, context.Context) any, onErr func(error) any) {
	self, root, d, rec := c.Self(), s.d.sys.Root, s.d, s.rec
	if !s.d.tasks.Go("connection "+what, func(ctx context.Context) {
		r, cleanup, err := prepareRunner(ctx, d, rec)
		defer cleanup()
		if err != nil {
			root.Send(self, onErr(err))
			return
		}
		root.Send(self, fn(r, ctx))
	}, func(err error) { root.Send(self, onErr(err)) }) {
		root.Send(self, onErr(errShuttingDown))
	}
}

func (s *ServiceConnection) onHealthDone(c actor.Context, m *healthDone) {
	h := s.health
	if h == nil || h.run != m.run {
		return
	}
	now := s.d.now()
	switch {
	case !m.out.OK():
		h.reason = "health_check.py did not work: " + m.out.Describe()
		s.recover(c)
		return
	case !m.res.Healthy:
		h.reason = "the service says the connection does not work"
		if m.res.Error != nil {
			h.reason += ": " + *m.res.Error
		}
		if tokenTrouble(m.res.Error) && !h.refreshed {
			h.unhealthy = true
			s.refresh(c, h)
			return
		}
		s.recover(c)
		return
	}
	s.rec.LastHealthCheck = &now
	if m.res.TokenExpiresAt != nil {
		s.rec.TokenExpiresAt = m.res.TokenExpiresAt
	}
	if m.res.RefreshExpiresAt != nil {
		s.rec.RefreshExpiresAt = m.res.RefreshExpiresAt
	}
	if t := s.rec.TokenExpiresAt; t != nil && t.Sub(now) < refreshAhead && !h.refreshed {
		s.refresh(c, h)
		return
	}
	if t := s.rec.RefreshExpiresAt; t != nil && t.Sub(now) < refreshTokenSoon && !h.refreshed {
		if s.rec.LastUsed == nil || now.Sub(*s.rec.LastUsed) > dormantAfter {
			// Dormant: refresh so the sliding window does not lapse.
			s.audit("proactive_refresh_dormant", map[string]any{"refresh_token_expires_at": t})
			s.refresh(c, h)
			return
		}
		s.suggestReconnect(c, *t)
	}
	s.recoveries = 0 // healthy on its own: the streak of recoveries ends
	s.healthy(c)
}

// tokenTrouble reports a health error that a refresh may cure.
func tokenTrouble(e *string) bool {
	if e == nil {
		return false
	}
	l := strings.ToLower(*e)
	return strings.Contains(l, "expired") || strings.Contains(l, "401") || strings.Contains(l, "token")
}

// healthy ends the chain with the connection active.
func (s *ServiceConnection) healthy(c actor.Context) {
	s.health = nil
	if s.rec.Status != messages.ConnectionActive {
		s.closeCard(c, s.failureCard)
		s.failureCard, s.failure = "", nil
		s.status(c, messages.ConnectionActive, "the connection works again")
	} else {
		s.changed(c)
	}
	s.schedule(c)
	s.answerChecks(c, nil)
}

func (s *ServiceConnection) answerChecks(c actor.Context, err error) {
	for _, pid := range s.waiting {
		c.Send(pid, &ConnectionAnswer{Connection: s.rec.Summary(), Err: err})
	}
	s.waiting = nil
}

// refresh runs refresh_token.py (spec 5.10.3 step 1); with h nil it is the
// scheduled refresh, a chain of its own.
func (s *ServiceConnection) refresh(c actor.Context, h *healthRun) {
	if h == nil {
		if s.health != nil || s.rec.Status != messages.ConnectionActive || s.removing != nil {
			return
		}
		s.runs++
		h = &healthRun{run: s.runs}
		s.health = h
	}
	h.refreshed = true
	run := h.run
	s.script(c, "refresh", func(r connection.Runner, ctx context.Context) any {
		m := &refreshDone{run: run}
		m.out = r.Call(ctx, connection.Script{Path: "scripts/refresh_token.py", Timeout: s.scriptTimeout()}, nil, &m.res)
		if m.out.OK() && m.res.Success && m.out.Changed {
			m.err = s.d.Vault.PutCredential(r.CredentialRef, m.out.Credential)
		}
		clear(m.out.Credential)
		return m
	}, func(err error) any { return &refreshDone{run: run, out: connection.Outcome{Err: err}} })
}

func (s *ServiceConnection) onRefreshDone(c actor.Context, m *refreshDone) {
	h := s.health
	if h == nil || h.run != m.run {
		return
	}
	switch {
	case m.out.OK() && m.res.Success && m.err == nil:
		now := s.d.now()
		s.rec.LastRefresh, s.rec.LastHealthCheck = &now, &now
		if m.res.NewExpiresAt != nil {
			s.rec.TokenExpiresAt = m.res.NewExpiresAt
		}
		if m.res.RefreshTokenExpiresAt != nil {
			s.rec.RefreshExpiresAt = m.res.RefreshTokenExpiresAt
		}
		s.audit("connection_refreshed", map[string]any{"token_expires_at": s.rec.TokenExpiresAt, "changed": m.out.Changed})
		if h.unhealthy {
			// A refresh that "succeeds" without curing anything (an API
			// key, a token that cannot be refreshed) must not turn a
			// failing connection healthy: check again.
			s.runHealth(c, h)
			return
		}
		s.healthy(c)
	case m.res.Failure != nil && m.res.Failure.Validate() == nil && m.res.Failure.FailureType == messages.FailureTokenRevoked:
		s.failHealth(c, m.res.Failure)
	default:
		h.reason = "refresh_token.py did not renew the token: " + m.out.Describe()
		if m.err != nil {
			h.reason = "the refreshed token could not be stored: " + m.err.Error()
		}
		s.recover(c)
	}
}

// recover runs recover.py once (spec 5.10.4), unless auto-recovery is off.
func (s *ServiceConnection) recover(c actor.Context) {
	h := s.health
	cfg := s.d.Config.Connections
	if h.recovered || !cfg.AutoRecoveryEnabled || s.recoveries >= cfg.RecoveryMaxAttempts {
		msg := h.reason
		if !h.recovered && cfg.AutoRecoveryEnabled {
			msg += fmt.Sprintf("; it was recovered automatically %d times in a row (connections.recovery_max_attempts), so Silas asks you now", s.recoveries)
		}
		s.failHealth(c, &messages.ConnectionFailure{FailureType: messages.FailureUnknown, Service: s.rec.Name, Message: msg,
			RecoveryOptions: reconnectOptions()})
		return
	}
	h.recovered = true
	run, reason := h.run, h.reason
	s.script(c, "recovery", func(r connection.Runner, ctx context.Context) any {
		m := &recoverDone{run: run}
		m.out = r.Call(ctx, connection.Script{Path: "scripts/recover.py", Args: []string{"--error=" + truncate(reason, 500)}, Timeout: s.scriptTimeout()}, nil, &m.res)
		return m
	}, func(err error) any { return &recoverDone{run: run, out: connection.Outcome{Err: err}} })
}

func (s *ServiceConnection) onRecoverDone(c actor.Context, m *recoverDone) {
	h := s.health
	if h == nil || h.run != m.run {
		return
	}
	if m.out.OK() && m.res.Success {
		s.recoveries++
		s.audit("connection_recovered", map[string]any{"after": h.reason, "in_a_row": s.recoveries})
		s.healthy(c)
		return
	}
	f := m.res.Failure
	if f == nil || f.Validate() != nil {
		f = &messages.ConnectionFailure{FailureType: messages.FailureUnknown, Service: s.rec.Name, Message: h.reason, RecoveryOptions: reconnectOptions()}
	}
	s.failHealth(c, f)
}

// failHealth ends a chain with the connection failed and a failure card;
// nothing retries on its own until the owner answers (spec 5.10.4 step 4).
func (s *ServiceConnection) failHealth(c actor.Context, f *messages.ConnectionFailure) {
	s.health = nil
	if len(f.RecoveryOptions) == 0 {
		f.RecoveryOptions = reconnectOptions()
	}
	s.fail(c, "health", f)
	s.answerChecks(c, nil)
}

func reconnectOptions() []messages.RecoveryOption {
	return []messages.RecoveryOption{
		// Reconnecting runs the setup again: connection_manage.
		{Action: "reconnect", Label: "Reconnect", Description: "Run the setup again to get a new authorization",
			RiskLevel: string(review.Assign(review.Action{Scope: messages.ApprovalConnectionManage}))},
		{Action: "skip", Label: "Skip", Description: "Leave the connection failed", RiskLevel: string(review.Low)},
	}
}

// suggestReconnect surfaces the low-friction card of spec 5.10.3 step 2.
func (s *ServiceConnection) suggestReconnect(c actor.Context, expires time.Time) {
	if s.failureCard != "" {
		return
	}
	days := int(time.Until(expires).Hours()/24) + 1
	s.failureCard = newCardID()
	s.failure = &messages.ConnectionFailure{FailureType: messages.FailureTokenRevoked, Service: s.rec.Name,
		Message: fmt.Sprintf("Your %s refresh token expires in %d days.", s.rec.Name, days),
		RecoveryOptions: []messages.RecoveryOption{
			// A reminder ahead of the expiry (spec 5.10.3): nothing failed
			// yet, so reconnecting now is the low-friction choice.
			{Action: "reconnect", Label: "Reconnect now", Description: "Run the setup again", RiskLevel: string(review.Low)},
			{Action: "skip", Label: "Remind me later", Description: "Ask again at the next health check", RiskLevel: string(review.Low)},
		}}
	risk := failureRisk(s.failure)
	ev := &messages.ConnectionFailureEvent{
		Type: messages.EventConnectionFailure, RequestID: s.failureCard, ConnectionID: s.rec.ConnectionID, ConnectionFailure: *s.failure, RiskLevel: string(risk),
	}
	ev.Card = failureContract(s.d.Log, ev, risk)
	s.openCard(c, s.failureCard, ev)
}

// onRecovery carries out the option the owner chose on a failure card.
func (s *ServiceConnection) onRecovery(c actor.Context, action string) {
	s.closeCard(c, s.failureCard)
	s.failureCard = ""
	f := s.failure
	s.failure = nil
	s.audit("connection_recovery_chosen", map[string]any{"action": action, "failure_type": f.FailureType})
	switch action {
	case "skip", "":
		return
	case "retry", "retry_later", "reconnect", "use_personal_account", "retry_fewer_permissions":
		if s.rec.Status == messages.ConnectionProposed && s.provider == "" {
			s.discover(c)
			return
		}
		// The owner tapped it on the card: that is the approval of the
		// re-authorization, recorded with its own connection_manage token.
		s.approveSetup(c)
	case actionDraftITRequest, actionRequestAdminApproval:
		s.draftITRequest(c, f)
	default:
		s.toOwner(c, &messages.ConnectionStatusEvent{Type: messages.EventConnectionStatus, ConnectionID: s.rec.ConnectionID, Name: s.rec.Name,
			Status: s.rec.Status, Detail: fmt.Sprintf("%q is not something Silas can do for this connection yet; choose Reconnect or Skip", action)})
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
