package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Passivation. A scope whose customer went away holds its window, persona,
// agent loops and gate lanes in memory although all of it is in Badger. After
// rehydration.scope_idle_timeout_seconds in the idle state (the actor's
// receive timeout, re-armed by every message), a scope that holds nothing
// only memory knows stops itself; the Stream forgets it on Terminated and
// spawns it afresh on its next message, which reloads it from Badger exactly
// as after a restart (scope_load.go).

// idleTimeout is how long an idle scope stays in memory.
func (s *Scope) idleTimeout() time.Duration {
	return s.d.Config.Rehydration.ScopeIdleTimeout()
}

// passivatable reports whether stopping the scope now loses nothing that is
// not in Badger and keeps no one waiting: no turn running or queued, no
// connection attached, no answer waiting for delivery or for its deletion to
// be written, no work item running, no approval waited on or relayed, and no
// persona request or owner relay pending.
func (s *Scope) passivatable() bool {
	return s.loaded && s.current == nil && len(s.queue) == 0 && len(s.sinks) == 0 &&
		len(s.outbox) == 0 && len(s.unconfirmed) == 0 && len(s.delivered) == 0 && !s.deliveredWriting &&
		len(s.workers) == 0 && s.approval == nil && s.gateApproval == nil &&
		len(s.toOwner) == 0 && len(s.relayed) == 0 && len(s.waitingPersona) == 0
}

// passivate stops the idle scope; its children (agent loops, gate lanes)
// stop with it.
func (s *Scope) passivate(c actor.Context) {
	s.d.metrics.ScopesPassivated.Inc()
	s.d.Log.Debug().Str("scope", s.id).Dur("idle", s.idleTimeout()).Msg("scope passivated")
	c.Stop(c.Self())
}
