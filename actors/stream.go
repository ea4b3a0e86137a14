package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
)

// Stream is the root supervisor of the scopes: it spawns each scope on first
// use under a stable name, restarts a scope that panics (the scope reloads
// from Badger), and drains them all at shutdown.
//
// Supervision of its children: one-for-one restart, at most 10 restarts of
// one scope a minute, after which that scope stops and is spawned afresh on
// its next message.
type Stream struct {
	d      *shared
	scopes map[string]*actor.PID
	ids    map[string]string // actor id -> scope id

	drainReply *actor.PID
	draining   int
}

// startScopes spawns scopes that have journaled work waiting.
// Sender: the system at start. Receiver: the Stream.
type startScopes struct {
	ids []string
}

func newStream(d *shared) *Stream {
	return &Stream{d: d, scopes: make(map[string]*actor.PID), ids: make(map[string]string)}
}

// Receive handles ScopeFor, startScopes, Drain and scope terminations.
func (s *Stream) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *messages.ScopeFor:
		c.Respond(&messages.ScopeRef{ScopeID: m.ScopeID, PID: s.scope(c, m.ScopeID, m.Kind)})
	case *startScopes:
		for _, id := range m.ids {
			s.scope(c, id, s.kindOf(id))
		}
	case *actor.Terminated:
		if id, ok := s.ids[m.Who.Id]; ok {
			delete(s.ids, m.Who.Id)
			if s.scopes[id].Equal(m.Who) {
				delete(s.scopes, id)
				s.d.metrics.ScopesActive.Set(float64(len(s.scopes)))
			}
		}
	case *messages.SkillRemoved:
		// Every scope hears it; those running a work item that uses the
		// skill block it.
		for _, pid := range s.scopes {
			c.Send(pid, m)
		}
	case *messages.Drain:
		s.onDrain(c)
	case *messages.Drained:
		s.draining--
		if s.draining == 0 && s.drainReply != nil {
			c.Send(s.drainReply, &messages.Drained{})
			s.drainReply = nil
		}
	}
}

func (s *Stream) kindOf(id string) messages.ScopeKind {
	if id == s.d.Config.OwnerID {
		return messages.ScopeOwner
	}
	return messages.ScopeCustomer
}

func (s *Stream) scope(c actor.Context, id string, kind messages.ScopeKind) *actor.PID {
	if pid, ok := s.scopes[id]; ok {
		return pid
	}
	props := actor.PropsFromProducer(func() actor.Actor { return newScope(s.d, id, kind) }, s.d.props...)
	pid, err := c.SpawnNamed(props, "scope/"+id)
	if err != nil {
		// The name is taken by a scope that is stopping; its Terminated
		// will arrive. Use the existing process: messages to a stopped
		// actor become dead letters and clients resend unacked messages.
		s.d.Log.Warn().Err(err).Str("scope", id).Msg("spawn scope")
	}
	s.scopes[id] = pid
	s.ids[pid.Id] = id
	s.d.metrics.ScopesActive.Set(float64(len(s.scopes)))
	return pid
}

func (s *Stream) onDrain(c actor.Context) {
	s.drainReply = c.Sender()
	s.draining = len(s.scopes)
	if s.draining == 0 {
		c.Respond(&messages.Drained{})
		return
	}
	for _, pid := range s.scopes {
		c.Request(pid, &messages.Drain{})
	}
}

func scopeSupervisor() actor.SupervisorStrategy {
	return actor.NewOneForOneStrategy(10, time.Minute, actor.DefaultDecider)
}
