package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/access"
	"github.com/silas-ai/silas/runtime/contextmgr"
	"github.com/silas-ai/silas/runtime/pipeline"
	"github.com/silas-ai/silas/runtime/ratelimit"
	"github.com/silas-ai/silas/skills"
)

// Scope runs the turns of one scope (the owner, or one chatbot customer), one
// at a time, in the order their messages arrived.
//
// States:
//
//	loading  rehydrating from Badger; messages are journaled and queued
//	idle     no turn in flight
//	busy     a turn waits on IO; new messages queue (bounded), results and
//	         control messages are handled at once
//
// Supervision: a panic inside a turn's stages is caught by the pipeline and
// answered as a failed turn; a panic elsewhere restarts the actor, which
// reloads its state from Badger (journaled messages are not lost).
type Scope struct {
	id   string
	kind messages.ScopeKind
	d    *shared

	behavior actor.Behavior
	loaded   bool // rehydration finished: turns may start
	// loadTries counts the failed loads in a row (scope_load.go).
	loadTries int
	window    *contextmgr.Window
	persona   messages.PersonaState
	// waitingPersona holds persona requests that came while loading.
	waitingPersona []waitingPersona
	env            *pipeline.Env
	// skillSnap is the skills snapshot the prompts in env were built from.
	skillSnap *skills.Snapshot
	turnNo    int
	// noKeywordMemory is true while the scope is known to hold no
	// keyword-indexed memory (read at load, see Memory.HasKeywordIndex):
	// keyword queries then come back empty without a read. Any write of
	// the scope that may index an item clears it for the scope's life.
	noKeywordMemory bool

	queue   []*queued
	current *run
	sinks   map[string]messages.Sink
	// outbox holds committed answers not yet handed to a connection.
	outbox []persistence.OutboxRecord
	// delivered are outbox ids handed to a connection whose deletion is not
	// yet written; deliveredWriting is true while a write of earlier ids is
	// on its way, and delivered goes out when it returns (persistDelivered).
	delivered        []string
	deliveredWriting bool
	// confirming are the attached connections that confirm receipts, and
	// unconfirmed the answers handed only to such connections and not yet
	// confirmed (scope_receipts.go).
	confirming  map[string]bool
	unconfirmed []*handedOut
	// answered are the message ids of the last turns committed.
	answered recentAnswered

	proxy, planner *actor.PID
	scorer         *actor.PID
	// breaker guards the scorer model (spec 5.7): 3 failures open it for 5
	// minutes, during which eviction runs its deterministic tier.
	breaker      contextmgr.Breaker
	policy, qual *actor.PID
	wsLimit      ratelimit.Bucket
	llmLimit     ratelimit.Bucket
	memLimit     ratelimit.Bucket

	// access is the scope's own access controller (spec 5.6), set once
	// the scope is loaded.
	access *access.Controller

	// approval is the approval_request the current turn waits on; workers
	// are the scope's running work items by id.
	approval *pendingApproval
	workers  map[string]*actor.PID
	// gateApproval is the gate_approval the current turn waits on;
	// toOwner are a customer scope's approvals waiting for the owner
	// scope's address, relayed (owner scope) the customers' approvals put
	// to the owner, by request id.
	gateApproval *pendingGateApproval
	toOwner      []*relayGateApproval
	relayed      map[string]*actor.PID

	draining   bool
	drainReply *actor.PID
}

type queued struct {
	msg       *messages.UserMessage
	journaled bool
	slot      slot // its admission slot, passed on to its run
}

type run struct {
	turn    *pipeline.Turn
	msg     *messages.UserMessage
	slot    slot // its admission slot, given back by endTurn
	started time.Time
	failed  bool
	// answer is the outbox record of the turn's commit, sent once durable.
	answer persistence.OutboxRecord
	// A turn starts while its message is still being journaled, so that
	// the journal's disk sync overlaps the model call instead of adding to
	// the turn's latency. journaled and acked track that write; lost means
	// it failed or found the message already processed, and the turn is
	// dropped before its commit.
	journaled, acked, lost bool
	// commitWaiting marks a turn that reached its commit before its
	// message's journal write settled; the commit follows that write, so
	// that an answer is never durable before the message it answers.
	commitWaiting bool
	// research is the planner's research in flight (scope_research.go).
	research researchRuns
}

func newScope(d *shared, id string, kind messages.ScopeKind) *Scope {
	s := &Scope{id: id, kind: kind, d: d, sinks: make(map[string]messages.Sink), workers: make(map[string]*actor.PID)}
	s.behavior.Become(s.loading)
	return s
}

// Receive dispatches to the current state.
func (s *Scope) Receive(c actor.Context) { s.behavior.Receive(c) }

func (s *Scope) loading(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		s.onStarted(c)
	case *scopeLoaded:
		s.onLoaded(c, m)
	case *scopeLoadRetry:
		s.startLoad(c)
	default:
		s.common(c)
	}
}

func (s *Scope) idle(c actor.Context) {
	switch c.Message().(type) {
	case *actor.ReceiveTimeout:
		s.onIdleTimeout(c)
	default:
		s.common(c)
	}
}

func (s *Scope) busy(c actor.Context) {
	switch m := c.Message().(type) {
	case *stepDone:
		s.onStepDone(c, m)
	case *streamDelta:
		s.onStreamDelta(m)
	case *researchDone:
		s.onResearchDone(c, m)
	case *approvalExpired:
		s.onApprovalExpired(c, m)
	case *approvalIssued:
		s.onApprovalIssued(c, m)
	case *gateApprovalExpired:
		s.onGateApprovalExpired(c, m)
	default:
		s.common(c)
	}
}

// common handles what every state accepts.
func (s *Scope) common(c actor.Context) {
	switch m := c.Message().(type) {
	case *messages.UserMessage:
		s.onUserMessage(c, m)
	case *journaled:
		s.onJournaled(c, m)
	case *messages.Attach:
		s.onAttach(c, m)
	case *messages.Received:
		s.onReceived(c, m)
	case *messages.Detach:
		_, attached := s.sinks[m.ConnID]
		delete(s.sinks, m.ConnID)
		s.takeBackUnconfirmed(c, m.ConnID)
		if attached {
			s.onOwnerGone(c)
		}
		s.onGateOwnerGone(c)
	case *pendingApprovalsRequest:
		s.onPendingApprovals(c)
	case *gateResponse:
		s.onGateResponse(c, m)
	case *relayGateApproval:
		s.onRelayGateApproval(c, m)
	case *messages.ScopeRef:
		s.onOwnerScope(c, m)
	case *ownerBroadcast:
		s.onOwnerBroadcast(m)
	case *messages.SkillRemoved:
		s.onSkillRemoved(c, m)
	case *messages.ApprovalResponse:
		s.onApprovalResponse(c, m)
	case *workItemProgress:
		if m.final {
			s.noKeywordMemory = false // its result may evict context into stored episodes
		}
		s.onWorkItemProgress(m)
	case *ownerWork:
		s.onOwnerWork(c, m)
	case *approvalExpired: // a re-plan's approval, outside any turn
		s.onApprovalExpired(c, m)
	case *approvalIssued:
		s.onApprovalIssued(c, m)
	case *messages.Drain:
		s.onDrain(c)
	case *personaRequest:
		s.onPersona(c, m)
	case *stepDone, *streamDelta:
		// A result for a turn that is no longer current: drop it.
	case *deliveredWritten:
		s.onDeliveredWritten(c, m)
	case *actor.Stopping:
		s.leave()
	case *actor.Restarting:
		// This instance is dropped and a fresh one reloads from Badger:
		// what it holds in memory must not outlive it.
		s.leave()
	}
}

// leave gives back what the scope holds outside itself when this instance
// ends (stop or restart): the deletion of delivered answers is written,
// and the admission slots of its queue and of its turn in flight are
// released. Queued messages stay journaled and run when the scope comes
// back; the turn in flight runs again from its journaled message.
func (s *Scope) leave() {
	s.deliveredWriting = false // a write in flight answers a dead instance
	s.writeDelivered(nil)
	for _, q := range s.queue {
		s.d.admit.release(q.slot)
		s.d.metrics.QueueDepth.Dec()
	}
	s.queue = nil
	if r := s.current; r != nil {
		s.d.admit.release(r.slot)
		r.slot = slot{}
		r.research.stop()
	}
}

func (s *Scope) setState(c actor.Context) {
	switch {
	case s.current != nil:
		s.behavior.Become(s.busy)
		c.CancelReceiveTimeout()
	default:
		s.behavior.Become(s.idle)
		c.SetReceiveTimeout(s.idleTimeout())
	}
}

func (s *Scope) onIdleTimeout(c actor.Context) {
	if s.current == nil {
		s.persistDelivered(c)
	}
	// A pending approval asked outside any turn (onOwnerWork) keeps the
	// scope: its asker waits for the verdict.
	if s.passivatable() {
		s.passivate(c)
	}
}

func (s *Scope) onDrain(c actor.Context) {
	s.draining = true
	if p := s.approval; p != nil {
		// Shutdown must not wait for the owner until the request times out.
		p.cancel()
		s.approval = nil
		s.declineApproval(c, p, "shutdown")
	}
	s.cancelGateApproval(c)
	if s.current == nil {
		s.persistDelivered(c)
		c.Respond(&messages.Drained{})
		return
	}
	s.drainReply = c.Sender()
}
