package actors

import (
	"encoding/json"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// handedOut is a committed answer handed only to connections that confirm
// receipt (Attach.Confirms, or a client that sent {"type":"received"}),
// and not confirmed by any yet: its outbox record stays in the store.
type handedOut struct {
	rec   persistence.OutboxRecord
	conns []string // the confirming connections it was handed to
}

// flushOutbox hands committed answers to the attached connections, in
// commit order, and records their delivery. An answer counts as delivered
// once a connection that does not confirm receipts accepted it, or one
// that does confirmed it (onReceived); a crash before its deletion is
// written re-delivers it, and clients drop duplicates by reply_to.
func (s *Scope) flushOutbox(c actor.Context) {
	defer s.persistDelivered(c)
	if len(s.sinks) == 0 || len(s.outbox) == 0 {
		return
	}
	for _, rec := range s.outbox {
		plain := false
		var waiting []string
		for id, sink := range s.sinks {
			if !sink.Send(json.RawMessage(rec.Payload)) {
				continue
			}
			if s.confirming[id] {
				waiting = append(waiting, id)
			} else {
				plain = true
			}
		}
		if !plain && len(waiting) == 0 {
			return
		}
		s.outbox = s.outbox[1:]
		if plain {
			s.delivered = append(s.delivered, rec.ID)
			continue
		}
		s.unconfirmed = append(s.unconfirmed, &handedOut{rec: rec, conns: waiting})
	}
}

// onReceived records a client's receipt of an answer, or turns receipts on
// for its connection.
func (s *Scope) onReceived(c actor.Context, m *messages.Received) {
	if _, attached := s.sinks[m.ConnID]; !attached {
		return
	}
	if m.ReplyTo == "" {
		if s.confirming == nil {
			s.confirming = make(map[string]bool)
		}
		s.confirming[m.ConnID] = true
		return
	}
	i := slices.IndexFunc(s.unconfirmed, func(h *handedOut) bool {
		return h.rec.ReplyTo == m.ReplyTo && slices.Contains(h.conns, m.ConnID)
	})
	if i < 0 {
		return // delivered already, or not this connection's
	}
	s.delivered = append(s.delivered, s.unconfirmed[i].rec.ID)
	s.unconfirmed = slices.Delete(s.unconfirmed, i, i+1)
	s.persistDelivered(c)
}

// takeBackUnconfirmed forgets a connection that is gone: the answers only
// it held unconfirmed go back to the front of the outbox, in the order they
// were committed, for the next connection.
func (s *Scope) takeBackUnconfirmed(c actor.Context, connID string) {
	if !s.confirming[connID] {
		return
	}
	delete(s.confirming, connID)
	var back []persistence.OutboxRecord
	kept := s.unconfirmed[:0]
	for _, h := range s.unconfirmed {
		h.conns = slices.DeleteFunc(h.conns, func(id string) bool { return id == connID })
		if len(h.conns) == 0 {
			back = append(back, h.rec)
			continue
		}
		kept = append(kept, h)
	}
	clear(s.unconfirmed[len(kept):])
	s.unconfirmed = kept
	if len(back) > 0 {
		s.outbox = append(back, s.outbox...)
		s.flushOutbox(c)
	}
}
