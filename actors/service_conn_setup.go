package actors

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/scheduler"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/review"
	"github.com/silas-ai/silas/skills/connection"
)

// setupState is the running setup conversation (spec 5.10.1 step 3).
type setupState struct {
	run    int
	handle *connection.Run // nil until the script started
	// card is the request id of the step card on show; step its step id.
	card string
	step string
	// awaiting is the step id the script waits on; secureRef the ref of
	// a secure input it waits for.
	awaiting  string
	secureRef string
	// done is the completion the script reported; failed its failure.
	done       *connection.Completion
	failed     *messages.ConnectionFailure
	broken     string // a protocol violation
	cancelling bool
	cancelStop scheduler.CancelFunc
}

// Messages of the setup goroutines. Each carries the run it belongs to.
type (
	setupStarted struct {
		run    int
		handle *connection.Run
		err    error
	}
	setupEvent struct {
		run    int
		ev     connection.SetupEvent
		broken string // set instead of ev for a line that breaks the protocol
	}
	setupEnded struct {
		run int
		out connection.Outcome
	}
	setupStored struct {
		run   int
		probe connection.ProbeResult
		out   connection.Outcome // the probe's
		err   error              // storing the credential
	}
	setupCancelDeadline struct{ run int }
)

// startSetup runs setup.py and relays its conversation.
func (s *ServiceConnection) startSetup(c actor.Context) {
	s.runs++
	st := &setupState{run: s.runs}
	s.setup = st
	s.closeCard(c, s.failureCard)
	s.failureCard = ""
	s.status(c, messages.ConnectionConnecting, "")
	s.audit("connection_setup_started", map[string]any{"auth_strategy": string(s.rec.AuthStrategy), "incremental_scopes": s.scopes})
	run, self, root, d, rec := st.run, c.Self(), s.d.sys.Root, s.d, s.rec
	hint, _ := s.rec.Settings["identity_hint"].(map[string]any)
	start := connection.NewStart(connection.Start{
		AuthStrategy: string(s.rec.AuthStrategy), InitialPermissions: s.rec.InitialPermissions,
		IncrementalScopes: slices.Clone(s.scopes), IdentityHint: hint, Settings: s.rec.Settings,
	})
	if start.IncrementalScopes == nil {
		start.IncrementalScopes = []string{}
	}
	ended := func(out connection.Outcome) { root.Send(self, &setupEnded{run: run, out: out}) }
	if !s.d.tasks.Go("connection setup", func(ctx context.Context) {
		r, cleanup, err := prepareRunner(ctx, d, rec)
		defer cleanup()
		if err != nil {
			root.Send(self, &setupStarted{run: run, err: err})
			ended(connection.Outcome{Err: err})
			return
		}
		h, err := r.Start(ctx, connection.Script{Path: "scripts/setup.py", Timeout: s.setupTimeout()})
		root.Send(self, &setupStarted{run: run, handle: h, err: err})
		if err != nil {
			ended(connection.Outcome{Err: err})
			return
		}
		if err := h.Send(start); err != nil {
			h.Stop()
		}
		for line := range h.Lines {
			ev, err := connection.DecodeSetupEvent(line)
			if err != nil {
				h.Stop()
				root.Send(self, &setupEvent{run: run, broken: err.Error()})
				continue
			}
			root.Send(self, &setupEvent{run: run, ev: ev})
		}
		ended(h.Wait())
	}, func(err error) { ended(connection.Outcome{Err: err}) }) {
		ended(connection.Outcome{Err: errShuttingDown})
	}
}

func (s *ServiceConnection) current(run int) *setupState {
	if s.setup == nil || s.setup.run != run || s.removing != nil {
		return nil
	}
	return s.setup
}

func (s *ServiceConnection) onSetupStarted(c actor.Context, m *setupStarted) {
	st := s.current(m.run)
	if st == nil {
		if m.handle != nil {
			m.handle.Stop()
		}
		return
	}
	st.handle = m.handle
	if st.cancelling && st.handle != nil {
		s.sendLine(st, connection.NewCancel("user_cancelled"))
	}
}

// sendLine writes one protocol line off the mailbox: a script that does
// not read its input must not block the actor.
func (s *ServiceConnection) sendLine(st *setupState, v any) {
	h := st.handle
	if h == nil {
		return
	}
	s.d.tasks.Go("connection setup input", func(context.Context) {
		if err := h.Send(v); err != nil {
			h.Stop()
		}
	}, nil)
}

func (s *ServiceConnection) onSetupEvent(c actor.Context, m *setupEvent) {
	st := s.current(m.run)
	if st == nil || st.cancelling {
		return
	}
	if m.broken != "" {
		st.broken = m.broken
		return
	}
	ev := m.ev
	switch ev.Type {
	case connection.EventSetupStep:
		s.onStep(c, st, ev)
	case connection.EventAwaitInput:
		st.awaiting = ev.StepID
		s.provideIfStored(c, st)
	case connection.EventCompletion:
		st.done = ev.Completion
	case connection.EventFailure:
		st.failed = ev.Failure
	case connection.EventLog:
		s.d.Log.Info().Str("connection", s.rec.ConnectionID).Str("level", ev.Level).Msg("connection setup: " + ev.Message)
	}
}

// onStep shows a setup step to the owner.
func (s *ServiceConnection) onStep(c actor.Context, st *setupState, ev connection.SetupEvent) {
	step := *ev.Step
	s.closeCard(c, st.card)
	st.card, st.step = "", ev.StepID
	s.audit("connection_setup_step", map[string]any{"step_id": ev.StepID, "step_type": step.Type})
	switch step.Type {
	case messages.StepSecureInput:
		if step.Request.RefID != s.rec.CredentialRef {
			st.broken = fmt.Sprintf("its secure_input step asks for ref_id %q, not this connection's %q", step.Request.RefID, s.rec.CredentialRef)
			st.handle.Stop()
			return
		}
		st.secureRef = step.Request.RefID
		s.requestSecret(c, st, *step.Request)
		return
	case messages.StepProgress:
		s.toOwner(c, s.stepEvent("", step))
		return
	case messages.StepCompletion, messages.StepFailure:
		// The script's completion and failure events decide the outcome;
		// a step of these types is only shown.
		s.toOwner(c, s.stepEvent("", step))
		return
	}
	st.card = newCardID()
	s.openCard(c, st.card, s.stepEvent(st.card, step))
}

func (s *ServiceConnection) stepEvent(requestID string, step messages.SetupStep) *messages.ConnectionSetupStepEvent {
	ev := &messages.ConnectionSetupStepEvent{
		Type: messages.EventConnectionSetupStep, RequestID: requestID, ConnectionID: s.rec.ConnectionID, Service: s.rec.Name,
		StepType: step.Type, SetupStep: step,
	}
	if step.Type == messages.StepDeviceCode && step.ExpiresIn > 0 {
		t := s.d.now().Add(time.Duration(step.ExpiresIn) * time.Second)
		ev.ExpiresAt = &t
	}
	// A setup step approves nothing by itself: the connection_manage card
	// before it did.
	risk := review.Assign(review.Action{})
	ev.RiskLevel = string(risk)
	if requestID != "" {
		ev.Card = setupContract(s.d.Log, ev, risk)
	}
	return ev
}

// requestSecret records the secure-input request, then shows its card:
// the app's secure form posts the value to /secrets/{ref_id}, never to the
// WebSocket.
func (s *ServiceConnection) requestSecret(c actor.Context, st *setupState, req messages.SecureInputRequest) {
	vault := s.d.Vault
	hint := ""
	if req.InputHint != nil {
		hint = *req.InputHint
	}
	rec := persistence.SecureInputRequest{
		RefID: req.RefID, Label: req.Label, InputHint: hint, Scope: s.d.Config.OwnerID, CreatedAt: s.d.now(),
		Guidance: persistence.SecureInputGuidance{Instructions: req.Guidance.Instructions, HelpURL: req.Guidance.HelpURL},
	}
	ev := &messages.SecureInputRequestEvent{Type: messages.EventSecureInputRequest, RefID: req.RefID, ConnectionID: s.rec.ConnectionID, Request: req}
	self, root, parent, id := c.Self(), s.d.sys.Root, c.Parent(), s.rec.ConnectionID
	s.d.tasks.Go("secure input request", func(ctx context.Context) {
		// A request left from an earlier, cancelled try goes first.
		_ = vault.Cancel(ctx, req.RefID)
		if err := vault.Request(ctx, rec); err != nil {
			root.Send(self, &setupEvent{run: st.run, broken: "the secure input request could not be recorded: " + err.Error()})
			return
		}
		root.Send(parent, &connCard{requestID: req.RefID, connID: id, event: ev})
		root.Send(parent, &connToOwner{events: []any{ev}})
	}, nil)
	st.card = req.RefID
	s.audit("secure_input_requested", map[string]any{"ref_id": req.RefID})
}

// onSecretStored hands the stored value to the waiting script.
func (s *ServiceConnection) onSecretStored(c actor.Context, m *SecretStored) {
	st := s.setup
	if st == nil || st.secureRef != m.RefID || s.removing != nil {
		return
	}
	s.provideIfStored(c, st)
}

// provideIfStored writes the owner's secret into the running script's work
// dir and answers its await_input, once both happened.
func (s *ServiceConnection) provideIfStored(c actor.Context, st *setupState) {
	if st.secureRef == "" || st.awaiting == "" || st.handle == nil {
		return
	}
	h, vault, ref, step := st.handle, s.d.Vault, st.secureRef, st.awaiting
	run, self, root := st.run, c.Self(), s.d.sys.Root
	s.d.tasks.Go("provide secure input", func(ctx context.Context) {
		value, err := vault.Value(ctx, ref)
		if err != nil {
			return // not stored yet: SecretStored comes when it is
		}
		defer clear(value)
		if err := h.Provide(value); err != nil {
			root.Send(self, &setupEvent{run: run, broken: "could not hand the secret to the setup script: " + err.Error()})
			h.Stop()
			return
		}
		if err := h.Send(connection.NewStepResult(step, map[string]any{"ref_id": ref, "success": true})); err != nil {
			h.Stop()
		}
	}, nil)
}

// onCardAnswer takes the owner's answer to a setup step or failure card.
func (s *ServiceConnection) onCardAnswer(c actor.Context, a *ConnectionCardAnswer) {
	if a.Type == messages.TypePermissionEscalationResponse && s.onPermissionAnswer(c, a) {
		return
	}
	switch {
	case s.setup != nil && a.RequestID == s.setup.card:
		switch a.Action {
		case messages.ConnectionSetupActionCancel:
			s.cancelSetup(c)
		case "trouble":
			s.toOwner(c, &messages.ConnectionStatusEvent{Type: messages.EventConnectionStatus, ConnectionID: s.rec.ConnectionID, Name: s.rec.Name,
				Status: s.rec.Status, Detail: "Still waiting for the service. If the code expired, cancel and connect again."})
		}
	case a.RequestID == s.failureCard && s.failure != nil:
		if a.SelectedAction != "skip" && refuseRung(s.d, a.Sink, a.Type, a.RequestID, string(optionRisk(s.failure, a.SelectedAction)), a.Confirmed) {
			return // the card stays pending: answer it again with its rung
		}
		s.onRecovery(c, a.SelectedAction)
	default:
		send(a.Sink, webError(messages.CodeBadRequest, "no connection card is pending with request_id "+quote(a.RequestID), a.Type))
	}
}

// cancelSetup asks the script to stop, and stops it after a grace period.
func (s *ServiceConnection) cancelSetup(c actor.Context) {
	st := s.setup
	if st == nil || st.cancelling {
		return
	}
	st.cancelling = true
	s.audit("connection_setup_cancelled", map[string]any{})
	s.sendLine(st, connection.NewCancel("user_cancelled"))
	st.cancelStop = scheduler.NewTimerScheduler(c).SendOnce(cancelGrace, c.Self(), &setupCancelDeadline{run: st.run})
}

// onSetupEnded decides the setup's outcome once the script is gone.
func (s *ServiceConnection) onSetupEnded(c actor.Context, m *setupEnded) {
	st := s.current(m.run)
	if st == nil {
		return
	}
	if st.cancelStop != nil {
		st.cancelStop()
	}
	s.closeCard(c, st.card)
	if st.secureRef != "" && st.secureRef != st.card {
		s.closeCard(c, st.secureRef)
	}
	out := m.out
	switch {
	case st.cancelling:
		s.setup = nil
		s.deleteCredential(c)
		s.scopes = nil
		s.status(c, messages.ConnectionProposed, "you cancelled the setup; nothing was stored")
	case st.broken != "" || out.Problem != "":
		why := st.broken
		if why == "" {
			why = out.Problem
		}
		s.setup = nil
		s.deleteCredential(c)
		s.fail(c, "setup", scriptFailure(s.rec.Name, "setup.py", connection.Outcome{Problem: why, Err: out.Err}))
	case st.failed != nil:
		s.setup = nil
		s.deleteCredential(c)
		s.fail(c, "setup", st.failed)
	case st.done != nil && st.done.Success && out.OK():
		s.store(c, st, out)
	default:
		s.setup = nil
		s.deleteCredential(c)
		if st.done != nil && !st.done.Success {
			out.Err = fmt.Errorf("it reported no success: %s", st.done.Summary)
		} else if out.OK() {
			out.Err = fmt.Errorf("it ended without a completion or failure event")
		}
		s.fail(c, "setup", scriptFailure(s.rec.Name, "setup.py", out))
	}
}

// store keeps the credential the setup left, then probes the connection
// (spec 5.10.1 steps 4-5).
func (s *ServiceConnection) store(c actor.Context, st *setupState, out connection.Outcome) {
	cred := out.Credential
	run, self, root, d, rec := st.run, c.Self(), s.d.sys.Root, s.d, s.rec
	reply := func(m *setupStored) { m.run = run; root.Send(self, m) }
	vault, ref := s.d.Vault, s.rec.CredentialRef
	if !s.d.tasks.Go("store connection credential", func(ctx context.Context) {
		defer clear(cred)
		if cred == nil {
			// A secure-input credential is already in the vault; a
			// flow that stored nothing has nothing to probe with.
			if _, err := vault.Credential(ref); err != nil {
				reply(&setupStored{err: fmt.Errorf("the setup script finished without leaving a credential in %s", connection.SecretsDirName)})
				return
			}
		} else if err := vault.PutCredential(ref, cred); err != nil {
			reply(&setupStored{err: err})
			return
		}
		r, cleanup, err := prepareRunner(ctx, d, rec)
		defer cleanup()
		if err != nil {
			reply(&setupStored{err: err})
			return
		}
		m := &setupStored{}
		m.out = r.Call(ctx, connection.Script{Path: "scripts/probe.py", Timeout: s.scriptTimeout()}, nil, &m.probe)
		reply(m)
	}, func(err error) { reply(&setupStored{err: err}) }) {
		reply(&setupStored{err: errShuttingDown})
	}
}

func (s *ServiceConnection) onSetupStored(c actor.Context, m *setupStored) {
	st := s.current(m.run)
	if st == nil {
		return
	}
	s.setup = nil
	switch {
	case m.err != nil:
		s.deleteCredential(c)
		s.fail(c, "setup", scriptFailure(s.rec.Name, "setup.py", connection.Outcome{Err: m.err}))
		return
	case !m.out.OK():
		s.deleteCredential(c)
		s.fail(c, "setup", scriptFailure(s.rec.Name, "probe.py", m.out))
		return
	case !m.probe.OK:
		s.deleteCredential(c)
		f := m.probe.Failure
		if f == nil || f.Validate() != nil {
			f = scriptFailure(s.rec.Name, "probe.py", connection.Outcome{Err: fmt.Errorf("the probe found the connection not working")})
		}
		s.fail(c, "setup", f)
		return
	}
	done := st.done
	if len(done.PermissionsGranted) > 0 {
		s.rec.PermissionsGranted = slices.Clone(done.PermissionsGranted)
	} else if len(s.scopes) > 0 {
		s.rec.PermissionsGranted = append(s.rec.PermissionsGranted, s.scopes...)
	}
	if s.rec.InitialPermissions == nil || s.rec.LastHealthCheck == nil && len(s.scopes) == 0 {
		s.rec.InitialPermissions = slices.Clone(s.rec.PermissionsGranted)
	}
	s.scopes = nil
	s.rec.Account = done.Account
	s.rec.TokenExpiresAt, s.rec.RefreshExpiresAt = done.TokenExpiresAt, done.RefreshTokenExpiresAt
	now := s.d.now()
	s.rec.LastHealthCheck = &now
	summary := done.Summary
	if m.probe.Summary != "" {
		summary += " " + m.probe.Summary
	}
	s.audit("connection_active", map[string]any{"permissions_granted": s.rec.PermissionsGranted, "account": s.rec.Account})
	s.toOwner(c, s.stepEvent("", messages.SetupStep{Type: messages.StepCompletion, Success: true, Summary: summary, PermissionsGranted: s.rec.PermissionsGranted}))
	s.status(c, messages.ConnectionActive, summary)
	s.schedule(c)
}
