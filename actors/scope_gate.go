package actors

import (
	"encoding/json"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/scheduler"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/pipeline"
)

// Gate approval verdicts of a gate_response frame.
const (
	gateVerdictApproved = "approved"
	gateVerdictDeclined = "declined"
)

// pendingGateApproval is the gate_approval a scope's turn waits on.
type pendingGateApproval struct {
	requestID string
	turnID    string
	gate      string
	cancel    scheduler.CancelFunc
}

// gateResponse is the owner's answer to a gate_approval.
// Sender: the owner's Connection, to its Scope; the owner Scope, to the
// customer Scope whose approval it relayed. Sink is the connection that
// answered, for errors (nil when the owner scope answers for the owner).
// reason, when set, says why the owner could not answer.
type gateResponse struct {
	requestID string
	approved  bool
	reason    string
	sink      messages.Sink
}

// relayGateApproval asks the owner scope to put a customer's gate approval
// to the owner: only the owner approves, and the owner's connections are
// attached to the owner scope. Sender: a customer Scope. Receiver: the
// owner Scope, which answers with a *gateResponse to from.
type relayGateApproval struct {
	requestID string
	gate      string
	payload   json.RawMessage
	from      *actor.PID
}

// maxRelayedApprovals bounds the customer approvals the owner scope keeps
// waiting for an answer; beyond it a customer's gate is refused at once.
const maxRelayedApprovals = 1024

// gateApprovalExpired is the scope's own timer message for a pending gate
// approval. Sender and receiver: the Scope.
type gateApprovalExpired struct{ requestID string }

// requestGateApproval performs a turn's GateApprovalRequest: it sends a
// gate_approval to every connection of the owner (a customer scope relays
// it through the owner scope) and waits, off the mailbox, for the
// gate_response, the timeout or the owner's leaving. Where the owner
// cannot be asked the answer is "not approved" at once: a gate that needs
// approval fails closed, never hangs.
func (s *Scope) requestGateApproval(c actor.Context, turnID string, r *pipeline.GateApprovalRequest) {
	resolve := func(out pipeline.GateApprovalOutcome) {
		s.emitAudit("gate_approval_unavailable", map[string]any{"gate": r.Gate, "reason": out.Reason})
		c.Send(c.Self(), &stepDone{turnID: turnID, result: pipeline.Result{Value: out}})
	}
	if s.kind == messages.ScopeOwner && len(s.sinks) == 0 {
		resolve(pipeline.GateApprovalOutcome{Reason: "no_owner_connection"})
		return
	}
	// Encoded once, now: the connections send it later, from their own
	// goroutines, and the turn's context must not be shared with them.
	id := uuid.NewString()
	payload, err := json.Marshal(&messages.GateApprovalEvent{
		Type: messages.EventGateApproval, RequestID: id, GateName: r.Gate, Value: r.Value, Context: r.Context,
	})
	if err != nil {
		resolve(pipeline.GateApprovalOutcome{Reason: "the approval request could not be encoded"})
		return
	}
	p := &pendingGateApproval{requestID: id, turnID: turnID, gate: r.Gate}
	timeout := time.Duration(s.d.Config.Gates.ApprovalTimeoutSeconds * float64(time.Second))
	p.cancel = scheduler.NewTimerScheduler(c).SendOnce(timeout, c.Self(), &gateApprovalExpired{requestID: p.requestID})
	s.gateApproval = p
	s.emitAudit("gate_approval_requested", map[string]any{"gate": r.Gate, "request_id": p.requestID, "trigger": string(r.Trigger)})
	if s.kind == messages.ScopeOwner {
		for _, sink := range s.sinks {
			sink.Send(json.RawMessage(payload))
		}
		return
	}
	s.toOwner = append(s.toOwner, &relayGateApproval{requestID: id, gate: r.Gate, payload: payload, from: c.Self()})
	c.Request(s.d.stream, &messages.ScopeFor{ScopeID: s.d.Config.OwnerID, Kind: messages.ScopeOwner})
}

// onOwnerScope hands the relays waiting for the owner scope's address to it.
func (s *Scope) onOwnerScope(c actor.Context, m *messages.ScopeRef) {
	if m.ScopeID != s.d.Config.OwnerID || m.PID == nil {
		return
	}
	for _, r := range s.toOwner {
		c.Send(m.PID, r)
	}
	s.toOwner = nil
}

// onRelayGateApproval puts a customer's gate approval to the owner's
// connections and remembers whom to answer.
func (s *Scope) onRelayGateApproval(c actor.Context, m *relayGateApproval) {
	refuse := func(reason string) {
		s.emitAudit("gate_approval_unavailable", map[string]any{"gate": m.gate, "request_id": m.requestID, "reason": reason})
		c.Send(m.from, &gateResponse{requestID: m.requestID, reason: reason})
	}
	switch {
	case s.kind != messages.ScopeOwner:
		refuse("not_owner_scope")
		return
	case len(s.sinks) == 0:
		refuse("no_owner_connection")
		return
	case len(s.relayed) >= maxRelayedApprovals:
		refuse("owner_busy")
		return
	}
	if s.relayed == nil {
		s.relayed = make(map[string]*actor.PID)
	}
	s.relayed[m.requestID] = m.from
	for _, sink := range s.sinks {
		sink.Send(m.payload)
	}
}

// onGateResponse handles the owner's verdict at once, whatever the scope is
// doing.
func (s *Scope) onGateResponse(c actor.Context, m *gateResponse) {
	p := s.gateApproval
	if p == nil || p.requestID != m.requestID {
		if to, ok := s.relayed[m.requestID]; ok {
			// A customer's approval: its scope decides whether it still
			// waits, and tells the owner's connection if not.
			delete(s.relayed, m.requestID)
			c.Send(to, m)
			return
		}
		send(m.sink, webError(messages.CodeBadRequest, "no gate approval is pending with request_id "+quote(m.requestID)+"; it was already answered or timed out", messages.TypeGateResponse))
		return
	}
	reason := m.reason
	switch {
	case reason != "":
	case m.approved:
		reason = gateVerdictApproved
	default:
		reason = gateVerdictDeclined
	}
	s.resolveGateApproval(c, pipeline.GateApprovalOutcome{Approved: m.approved && m.reason == "", Reason: reason})
}

func (s *Scope) onGateApprovalExpired(c actor.Context, m *gateApprovalExpired) {
	if p := s.gateApproval; p != nil && p.requestID == m.requestID {
		s.resolveGateApproval(c, pipeline.GateApprovalOutcome{Reason: "timeout"})
	}
}

// onGateOwnerGone refuses the pending gate approvals, the owner's own and
// those relayed for customers, when the last owner connection that could
// answer them went away: a disconnected owner means block.
func (s *Scope) onGateOwnerGone(c actor.Context) {
	if s.kind != messages.ScopeOwner || len(s.sinks) > 0 {
		return
	}
	if s.gateApproval != nil {
		s.resolveGateApproval(c, pipeline.GateApprovalOutcome{Reason: "no_owner_connection"})
	}
	s.refuseRelayed(c, "no_owner_connection")
}

// cancelGateApproval refuses the pending gate approvals at shutdown, which
// must not wait for the owner.
func (s *Scope) cancelGateApproval(c actor.Context) {
	if s.gateApproval != nil {
		s.resolveGateApproval(c, pipeline.GateApprovalOutcome{Reason: "shutdown"})
	}
	s.refuseRelayed(c, "shutdown")
}

func (s *Scope) refuseRelayed(c actor.Context, reason string) {
	for id, to := range s.relayed {
		c.Send(to, &gateResponse{requestID: id, reason: reason})
	}
	s.relayed = nil
}

// resolveGateApproval ends the pending gate approval with out and hands it
// to the turn that waits on it.
func (s *Scope) resolveGateApproval(c actor.Context, out pipeline.GateApprovalOutcome) {
	p := s.gateApproval
	p.cancel()
	s.gateApproval = nil
	s.emitAudit("gate_approval_answered", map[string]any{"gate": p.gate, "request_id": p.requestID, "approved": out.Approved, "reason": out.Reason})
	c.Send(c.Self(), &stepDone{turnID: p.turnID, result: pipeline.Result{Value: out}})
}
