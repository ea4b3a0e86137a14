package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// OutboxConfig configures an Outbox. Zero fields take the defaults, which
// follow Telegram's published limits for bots.
type OutboxConfig struct {
	// PerChat is the least time between two messages to one private chat.
	// Default 1s.
	PerChat time.Duration
	// PerGroup is the same for groups (negative chat ids), where Telegram
	// allows 20 messages a minute. Default 3s.
	PerGroup time.Duration
	// PerSecond caps messages a second over all chats. Default 30.
	PerSecond int
	// MaxQueued bounds the messages waiting or in flight over all chats;
	// beyond it Enqueue fails with ErrOutboxFull. Default 1000.
	MaxQueued int
	// MaxInFlight bounds concurrent requests (one per chat at most, so that
	// a chat's messages keep their order). Default 4.
	MaxInFlight int
	// MaxBackoff caps the wait before resending after a network failure or
	// a 5xx. Default 30s.
	MaxBackoff time.Duration
	// Clock paces the outbox; nil is the system clock.
	Clock Clock
	// OnDelivered is called, from the outbox's goroutine, once Telegram
	// accepted a message (sendMessage or editMessageText returned). It must
	// not block: send the Delivery on to an actor.
	OnDelivered func(Delivery)
	// OnFailed is called, likewise, when Telegram refused a message for
	// good (a 4xx other than 429: blocked by the user, chat not found, bad
	// request). The message is not retried.
	OnFailed func(Message, error)
}

// Delivery reports a message Telegram accepted.
type Delivery struct {
	Message Message
	// MessageID is Telegram's id for the message: keep it to edit the
	// message later (a status line, a card's outcome).
	MessageID int
	// SentAt is when the accepted request began, on the outbox's clock.
	SentAt time.Time
	// Attempts counts the requests it took (more than one after a 429 or a
	// network failure).
	Attempts int
}

// Outbox sends messages for all chats in order per chat, paced under
// Telegram's limits, so a burst is delayed but never dropped. A 429 makes
// it wait the retry_after Telegram asks for and send the same message
// again; a network failure or 5xx, wait with exponential backoff and send
// again. Enqueue never blocks: a full outbox says so with ErrOutboxFull.
//
// The queue lives in memory. A message not yet delivered when the process
// dies is lost from the outbox; the runtime knows which messages it
// journaled and were not reported delivered, and enqueues them again after
// a restart. A message whose request reached Telegram but whose answer was
// lost is sent again, so at-least-once is what Telegram's API allows.
type Outbox struct {
	client *Client
	cfg    OutboxConfig
	clock  Clock
	gap    time.Duration // between two requests, over all chats
	wake   chan struct{}

	mu         sync.Mutex
	chats      map[int64]*chatQueue
	queued     int
	inFlight   int
	seq        uint64
	globalNext time.Time
	running    bool
}

type chatQueue struct {
	items   []*outItem
	next    time.Time // the head may be sent from then on
	busy    bool      // the head is in flight
	backoff time.Duration
}

type outItem struct {
	msg      Message
	seq      uint64
	attempts int
}

// NewOutbox returns an outbox that sends through c. Start it with Run.
func NewOutbox(c *Client, cfg OutboxConfig) *Outbox {
	if cfg.PerChat <= 0 {
		cfg.PerChat = time.Second
	}
	if cfg.PerGroup <= 0 {
		cfg.PerGroup = 3 * time.Second
	}
	if cfg.PerSecond <= 0 {
		cfg.PerSecond = 30
	}
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = 1000
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 4
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	return &Outbox{
		client: c,
		cfg:    cfg,
		clock:  clockOr(cfg.Clock),
		gap:    (time.Second + time.Duration(cfg.PerSecond) - 1) / time.Duration(cfg.PerSecond), // rounded up: never over PerSecond
		wake:   make(chan struct{}, 1),
		chats:  map[int64]*chatQueue{},
	}
}

// Enqueue queues msgs, in order, all or none: the chunks of one answer are
// never separated. It fails with ErrOutboxFull when they do not fit, and
// with ErrInvalidMessage for a message Telegram would refuse.
func (o *Outbox) Enqueue(msgs ...Message) error {
	for _, m := range msgs {
		if err := m.validate(); err != nil {
			return err
		}
	}
	o.mu.Lock()
	if o.queued+len(msgs) > o.cfg.MaxQueued {
		queued := o.queued
		o.mu.Unlock()
		return fmt.Errorf("%w (%d queued, %d more, limit %d)", ErrOutboxFull, queued, len(msgs), o.cfg.MaxQueued)
	}
	for _, m := range msgs {
		q := o.chats[m.ChatID]
		if q == nil {
			q = &chatQueue{}
			o.chats[m.ChatID] = q
		}
		o.seq++
		q.items = append(q.items, &outItem{msg: m, seq: o.seq})
	}
	o.queued += len(msgs)
	o.mu.Unlock()
	o.signal()
	return nil
}

// Len is the number of messages queued or in flight.
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.queued
}

// Run sends queued messages until ctx ends, then waits for requests in
// flight to finish (they are cancelled with ctx; their messages stay
// queued) and returns ctx's error. Messages stay queued for a later Run.
func (o *Outbox) Run(ctx context.Context) error {
	o.mu.Lock()
	if o.running {
		o.mu.Unlock()
		return ErrOutboxRunning
	}
	o.running = true
	o.mu.Unlock()
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		o.mu.Lock()
		o.running = false
		o.mu.Unlock()
	}()
	for {
		wait, timed := o.dispatch(ctx, &wg)
		var timer <-chan time.Time
		if timed {
			timer = o.clock.After(wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-o.wake:
		case <-timer:
		}
	}
}

// dispatch starts every send that is due, oldest message first, and
// returns how long until the next one is due (timed false: nothing to wait
// for but a wake-up).
func (o *Outbox) dispatch(ctx context.Context, wg *sync.WaitGroup) (time.Duration, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ctx.Err() != nil {
		return 0, false
	}
	now := o.clock.Now()
	for o.inFlight < o.cfg.MaxInFlight {
		var best *chatQueue
		var bestChat int64
		var bestAt time.Time
		for chat, q := range o.chats {
			if q.busy {
				continue
			}
			if len(q.items) == 0 {
				if !q.next.After(now) {
					delete(o.chats, chat) // idle and past its pacing: forget it
				}
				continue
			}
			at := later(q.next, o.globalNext)
			if best == nil || at.Before(bestAt) || (at.Equal(bestAt) && q.items[0].seq < best.items[0].seq) {
				best, bestChat, bestAt = q, chat, at
			}
		}
		if best == nil {
			return 0, false
		}
		if bestAt.After(now) {
			return bestAt.Sub(now), true
		}
		best.busy = true
		o.inFlight++
		o.globalNext = now.Add(o.gap)
		item := best.items[0]
		item.attempts++
		wg.Add(1)
		go o.send(ctx, wg, bestChat, best, item, now)
	}
	return 0, false // at MaxInFlight: a finishing send wakes Run
}

// send makes one request for the head of chat's queue and decides, from
// the answer, what happens to it.
func (o *Outbox) send(ctx context.Context, wg *sync.WaitGroup, chat int64, q *chatQueue, item *outItem, at time.Time) {
	defer wg.Done()
	defer o.signal()
	id, err := o.client.Send(ctx, item.msg)
	if err != nil && item.msg.EditID != 0 && notModified(err) {
		id, err = item.msg.EditID, nil // the edit is there already (sent before a crash, say)
	}
	now := o.clock.Now()
	var delivered *Delivery
	var failed error

	o.mu.Lock()
	q.busy = false
	o.inFlight--
	ra, flood := retryAfter(err)
	switch {
	case err == nil:
		o.popLocked(q)
		q.backoff = 0
		q.next = now.Add(o.interval(chat))
		delivered = &Delivery{Message: item.msg, MessageID: id, SentAt: at, Attempts: item.attempts}
	case ctx.Err() != nil:
		// Shutting down: the message stays at the head for the next Run.
	case flood:
		q.next = now.Add(ra)
	case permanent(err):
		o.popLocked(q)
		q.backoff = 0
		q.next = now.Add(o.interval(chat))
		failed = err
	default:
		q.backoff = min(max(2*q.backoff, time.Second), o.cfg.MaxBackoff)
		q.next = now.Add(q.backoff)
	}
	o.mu.Unlock()

	if delivered != nil && o.cfg.OnDelivered != nil {
		o.cfg.OnDelivered(*delivered)
	}
	if failed != nil && o.cfg.OnFailed != nil {
		o.cfg.OnFailed(item.msg, failed)
	}
}

func (o *Outbox) popLocked(q *chatQueue) {
	q.items[0] = nil
	q.items = q.items[1:]
	o.queued--
}

func (o *Outbox) interval(chat int64) time.Duration {
	if chat < 0 {
		return o.cfg.PerGroup
	}
	return o.cfg.PerChat
}

func (o *Outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// notModified reports Telegram's refusal of an edit that changes nothing.
func notModified(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == 400 && strings.Contains(e.Description, "message is not modified")
}
