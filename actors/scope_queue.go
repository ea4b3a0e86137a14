package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/away"
)

// journaled reports that a user message is (or failed to be) durable.
// dup says the store had it already: pending when it still waits to run
// (journaled before a crash), else answered or dead-lettered. msg is the
// message, for an instance that lost track of it (restarted meanwhile).
type journaled struct {
	messageID string
	dup       bool
	pending   bool
	err       error
	msg       *messages.UserMessage
}

// queuedPayload is the journaled form of a user message: everything needed
// to run its turn after a crash, and nothing about the connection.
type queuedPayload struct {
	Channel       string    `json:"channel"`
	SenderID      string    `json:"sender_id"`
	Text          string    `json:"text"`
	Authenticated bool      `json:"authenticated"`
	Signature     []byte    `json:"signature,omitempty"`
	Nonce         string    `json:"nonce,omitempty"`
	Timestamp     string    `json:"timestamp,omitempty"`
	ReceivedAt    time.Time `json:"received_at"`
}

const consumerTurns = "scope-turns"

func decodeQueued(r *persistence.QueueRecord) (*messages.UserMessage, error) {
	var p queuedPayload
	if err := json.Unmarshal(r.Payload, &p); err != nil {
		return nil, fmt.Errorf("decode queued message %s: %w", r.MessageID, err)
	}
	return &messages.UserMessage{
		MessageID: r.MessageID, Channel: p.Channel, SenderID: p.SenderID, Text: p.Text,
		Authenticated: p.Authenticated, Signature: p.Signature, Nonce: p.Nonce, Timestamp: p.Timestamp,
		ReceivedAt: p.ReceivedAt,
	}, nil
}

func (s *Scope) find(id string) int {
	for i, q := range s.queue {
		if q.msg.MessageID == id {
			return i
		}
	}
	return -1
}

// onUserMessage accepts a message into the scope's queue and journals it;
// the client is acknowledged once the message is durable.
func (s *Scope) onUserMessage(c actor.Context, m *messages.UserMessage) {
	now := s.d.now()
	if r := s.current; r != nil && r.msg.MessageID == m.MessageID {
		if r.acked {
			send(m.Sink, &messages.AckEvent{Type: "ack", MessageID: m.MessageID})
		}
		return
	}
	if i := s.find(m.MessageID); i >= 0 {
		// A resend of a message we hold: acknowledge again once journaled.
		if s.queue[i].journaled {
			send(m.Sink, &messages.AckEvent{Type: "ack", MessageID: m.MessageID})
		}
		return
	}
	if s.answered.has(m.MessageID) {
		// A resend of a message answered a moment ago: the answer is in
		// the outbox or was delivered.
		send(m.Sink, &messages.AckEvent{Type: "ack", MessageID: m.MessageID})
		return
	}
	if s.refuseWhenDiskFull(m) {
		return
	}
	if !s.wsLimit.Allow(now) {
		s.reject(m, messages.CodeRateLimited, fmt.Sprintf("too many messages: this conversation allows %d a minute (limits.ws_messages_per_minute_per_scope); wait a moment and resend", s.d.Config.Limits.WSMessagesPerMinutePerScope))
		return
	}
	if s.kind == messages.ScopeOwner && isGoalCommand(m.Text) {
		s.onGoalCommand(c, m) // not a turn (goals_chat.go)
		return
	}
	if s.kind == messages.ScopeOwner && away.IsQuestion(m.Text) {
		s.onAwayQuestion(c, m) // not a turn (away_chat.go)
		return
	}
	if max := s.d.Config.Backpressure.MaxPendingTurnsPerScope; len(s.queue) >= max {
		s.reject(m, messages.CodeBusy, fmt.Sprintf("busy: %d messages are already waiting in this conversation (backpressure.max_pending_turns_per_scope); resend after the answers arrive", max))
		return
	}
	sl, refused := s.d.admit.acquire(s.kind == messages.ScopeOwner, m.ClientIP)
	if refused != nil {
		s.reject(m, messages.CodeBusy, refused.busyText())
		return
	}
	s.queue = append(s.queue, &queued{msg: m, slot: sl})
	s.d.metrics.QueueDepth.Inc()
	s.journal(c, m)
	// An idle scope starts the turn now: its journal write overlaps the
	// model call, and its commit waits for that write (see the Commit case of step).
	s.maybeStart(c)
}

func (s *Scope) reject(m *messages.UserMessage, code messages.Code, text string) {
	s.d.metrics.Errors.With(string(code)).Inc()
	send(m.Sink, webError(code, text, "message"))
}

func (s *Scope) journal(c actor.Context, m *messages.UserMessage) {
	payload, err := json.Marshal(queuedPayload{
		Channel: m.Channel, SenderID: m.SenderID, Text: m.Text, Authenticated: m.Authenticated,
		Signature: m.Signature, Nonce: m.Nonce, Timestamp: m.Timestamp, ReceivedAt: m.ReceivedAt,
	})
	if err != nil {
		c.Send(c.Self(), &journaled{messageID: m.MessageID, err: err})
		return
	}
	// The channel's taint; a signature can raise it to owner in step 2.
	taint := messages.TaintExternal
	if m.Authenticated {
		taint = messages.TaintAuth
	}
	rec := persistence.QueueRecord{
		MessageID: m.MessageID, ScopeID: s.id, TraceID: m.MessageID, Kind: "user_message",
		Taint: taint, Payload: payload, EnqueuedAt: m.ReceivedAt,
	}
	self, root, db := c.Self(), s.d.sys.Root, s.d.DB
	fail := func(err error) { root.Send(self, &journaled{messageID: m.MessageID, err: err, msg: m}) }
	if !s.d.tasks.Go("journal", func(ctx context.Context) {
		got, err := db.Queue().EnqueueResult(ctx, rec)
		root.Send(self, &journaled{messageID: m.MessageID, dup: got != persistence.Enqueued,
			pending: got == persistence.AlreadyPending, err: err, msg: m})
	}, fail) {
		fail(errShuttingDown)
	}
}

func (s *Scope) onJournaled(c actor.Context, m *journaled) {
	if r := s.current; r != nil && r.msg.MessageID == m.messageID {
		s.onCurrentJournaled(r, m)
		if r.commitWaiting {
			r.commitWaiting = false
			s.commit(c)
		}
		return
	}
	i := s.find(m.messageID)
	if i < 0 {
		s.adoptJournaled(c, m)
		return
	}
	q := s.queue[i]
	switch {
	case q.journaled:
		// The load found the message in the store before this result
		// came (onLoaded), and acknowledged it.
		return
	case m.dup && m.pending:
		// Journaled before a crash and not answered yet: a resend that
		// came before this instance learnt of it (the load read the store
		// before the first write landed). The entry is that message.
		q.journaled = true
		send(q.msg.Sink, &messages.AckEvent{Type: "ack", MessageID: m.messageID})
		s.maybeStart(c)
		return
	case m.err != nil:
		s.dequeue(i)
		s.rejectUnstored(q.msg, m.err)
		return
	case m.dup:
		// Already processed before (a resend after a reconnect): its answer
		// is in the outbox or was delivered.
		s.dequeue(i)
		send(q.msg.Sink, &messages.AckEvent{Type: "ack", MessageID: m.messageID})
		return
	}
	q.journaled = true
	send(q.msg.Sink, &messages.AckEvent{Type: "ack", MessageID: m.messageID})
	s.maybeStart(c)
}

// onCurrentJournaled settles the journal write of the turn in flight.
func (s *Scope) onCurrentJournaled(r *run, m *journaled) {
	switch {
	case r.journaled:
		// The load found the message in the store before this result
		// came (onLoaded), and acknowledged it: this turn runs it.
	case m.err != nil:
		r.lost = true
		s.rejectUnstored(r.msg, m.err)
	case m.dup && m.pending:
		// Journaled before a crash and not answered: this turn runs it.
		r.journaled, r.acked = true, true
		send(r.msg.Sink, &messages.AckEvent{Type: "ack", MessageID: m.messageID})
	case m.dup:
		// Processed before: its answer is in the outbox or was delivered.
		r.lost = true
		send(r.msg.Sink, &messages.AckEvent{Type: "ack", MessageID: m.messageID})
	case !r.acked:
		r.journaled, r.acked = true, true
		send(r.msg.Sink, &messages.AckEvent{Type: "ack", MessageID: m.messageID})
	}
}

// adoptJournaled takes in a message this instance does not hold but whose
// journal write just landed: the write of an instance that panicked and
// was restarted while it was in flight, after this instance's load had
// read the store. Without this, the message would wait in the store until
// the next start, acknowledged to no one and answered to no one.
func (s *Scope) adoptJournaled(c actor.Context, m *journaled) {
	if m.msg == nil || m.err != nil || (m.dup && !m.pending) || s.answered.has(m.messageID) {
		// A failed write stored nothing; an answered message is done.
		// While loading, the entry is taken: should the load find the
		// message too, it keeps this entry (onLoaded).
		return
	}
	sl, refused := s.d.admit.acquire(s.kind == messages.ScopeOwner, "")
	if refused != nil {
		return // it stays journaled and runs on a later start
	}
	msg := *m.msg
	msg.Sink = nil // the sink belonged to the old instance's attachment
	s.queue = append(s.queue, &queued{msg: &msg, journaled: true, slot: sl})
	s.d.metrics.QueueDepth.Inc()
	s.maybeStart(c)
}

func (s *Scope) dequeue(i int) {
	q := s.queue[i]
	s.queue = append(s.queue[:i], s.queue[i+1:]...)
	s.d.admit.release(q.slot)
	s.d.metrics.QueueDepth.Dec()
}

// send writes ev to sink when there is one: a recovered message has none.
func send(sink messages.Sink, ev any) {
	if sink != nil {
		sink.Send(ev)
	}
}

// onAttach registers a connection and hands it every waiting answer.
func (s *Scope) onAttach(c actor.Context, m *messages.Attach) {
	s.sinks[m.ConnID] = m.Sink
	if m.Confirms {
		if s.confirming == nil {
			s.confirming = make(map[string]bool)
		}
		s.confirming[m.ConnID] = true
	}
	if s.approval != nil {
		// An owner who reconnects sees the plan still waiting for them.
		m.Sink.Send(s.approval.event)
	}
	s.askSkillCards(c, m.Sink)
	s.flushOutbox(c)
}

// deliveredWritten reports the write of delivered outbox ids.
// Sender: the scope's write task. Receiver: the scope.
type deliveredWritten struct{}

// persistDelivered writes the deletion of the outbox records handed to a
// connection, at once: the write joins the store's next commit group, so
// it is on disk milliseconds after the answer went out and shares that
// group's sync instead of costing one of its own. A kill in between only
// means the answer is delivered again after the restart, with the same
// reply_to and bytes, and clients drop it.
//
// One write per scope is in flight at a time: ids delivered meanwhile are
// written together when it returns (onDeliveredWritten), so a burst of
// answers costs one write, not one each.
func (s *Scope) persistDelivered(c actor.Context) {
	if len(s.delivered) == 0 || s.deliveredWriting {
		return
	}
	s.deliveredWriting = true
	self, root := c.Self(), s.d.sys.Root
	if !s.writeDelivered(func() { root.Send(self, &deliveredWritten{}) }) {
		s.deliveredWriting = false
	}
}

func (s *Scope) onDeliveredWritten(c actor.Context, _ *deliveredWritten) {
	s.deliveredWriting = false
	s.persistDelivered(c)
}

// writeDelivered starts the write of s.delivered and calls done, if not
// nil, once it settled. It reports false when no write was started.
func (s *Scope) writeDelivered(done func()) bool {
	if len(s.delivered) == 0 {
		return false
	}
	ids, db, scope, log := s.delivered, s.d.DB, s.id, s.d.Log
	s.delivered = nil
	return s.d.tasks.Go("outbox delivered", func(ctx context.Context) {
		if err := db.Outbox().Delivered(context.WithoutCancel(ctx), scope, ids...); err != nil {
			log.Error().Err(err).Str("scope", scope).Msg("record delivered answers; they may be delivered again")
		}
		if done != nil {
			done()
		}
	}, func(error) {
		if done != nil {
			done()
		}
	})
}
