package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
)

// ownerBroadcast asks the owner scope to send events to every owner
// connection attached to it: the skill_install cards and their outcomes,
// which the SkillInstaller owns while the owner's connections attach to
// the owner scope. Sender: the SkillInstaller. Receiver: the owner Scope.
type ownerBroadcast struct{ events []any }

// onOwnerBroadcast sends m's events to the owner's connections. A scope
// with none drops them: a connection that attaches later asks the
// SkillInstaller for the cards still pending (onAttach).
func (s *Scope) onOwnerBroadcast(m *ownerBroadcast) {
	if s.kind != messages.ScopeOwner {
		return
	}
	for _, sink := range s.sinks {
		for _, ev := range m.events {
			sink.Send(ev)
		}
	}
}

// askSkillCards has the SkillInstaller send its pending cards to a newly
// attached owner connection.
func (s *Scope) askSkillCards(c actor.Context, sink messages.Sink) {
	if s.kind == messages.ScopeOwner && s.d.skills != nil {
		c.Send(s.d.skills, &skillCardsFor{sink: sink})
	}
	if s.kind == messages.ScopeOwner && s.d.connections != nil {
		c.Send(s.d.connections, &connCardsFor{sink: sink})
	}
}

// forwardApproval hands an approval_response the scope did not ask for to
// whoever put its card out: the ConnectionManager for connection cards
// (request ids conn-...), else the SkillInstaller, which answers
// skill_install cards (or tells the connection that nothing is pending
// under that id). It reports whether it did.
func (s *Scope) forwardApproval(c actor.Context, m *messages.ApprovalResponse) bool {
	if s.kind == messages.ScopeOwner && s.d.connections != nil && isConnCard(m.RequestID) {
		c.Send(s.d.connections, m)
		return true
	}
	if s.kind != messages.ScopeOwner || s.d.skills == nil {
		return false
	}
	c.Send(s.d.skills, m)
	return true
}

// onSkillRemoved tells the scope's running work items that a skill is
// gone; those that use it end blocked (WorkItem).
func (s *Scope) onSkillRemoved(c actor.Context, m *messages.SkillRemoved) {
	for _, pid := range s.workers {
		c.Send(pid, m)
	}
}
