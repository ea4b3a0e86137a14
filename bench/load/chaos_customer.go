package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fasthttp/websocket"
)

// chaosMsg is what one chaos customer knows about one of its messages.
type chaosMsg struct {
	id   string
	text string
	// firstSent is when it was first sent; lastSent when last (re)sent.
	firstSent, lastSent time.Time
	sends               int
	// ackedAt is when the first ack arrived (zero: never).
	ackedAt time.Time
	// answer is the first answer frame, answeredAt when it arrived and
	// answerGen the daemon generation that delivered it.
	answer     []byte
	answerText string
	answeredAt time.Time
	// redelivered lists the generation of each later copy with the same
	// bytes; conflicts holds later copies whose bytes differ.
	redelivered []int
	conflicts   [][]byte
}

func (m *chaosMsg) acked() bool    { return !m.ackedAt.IsZero() }
func (m *chaosMsg) answered() bool { return m.answer != nil }

// chaosLedger is one customer's record of a chaos run. Only the customer's
// goroutine touches it until the run ends.
type chaosLedger struct {
	customer int
	token    string
	msgs     map[string]*chaosMsg
	order    []*chaosMsg // in the order first sent
	// unanswered are the messages without an answer, in send order.
	unanswered []*chaosMsg

	unexpected      int            // acks or answers naming no message of ours
	errors          map[string]int // error events by code
	reconnects      int            // sessions resumed after the first
	connectFailures int
	// resumeErr is why the session could not be resumed; the customer
	// stopped there.
	resumeErr string
}

func newChaosLedger(customer int) *chaosLedger {
	return &chaosLedger{customer: customer, msgs: map[string]*chaosMsg{}, errors: map[string]int{}}
}

// chaosPlan is what every chaos customer does.
type chaosPlan struct {
	run    string // distinguishes message ids across runs
	window int    // unanswered messages kept in flight
	// resendAfter is how long a sent message may wait for its ack before
	// it is sent again on the same connection.
	resendAfter time.Duration
	bufSize     int
}

// chaosResendCheck is how often a customer looks for unacknowledged
// messages to send again.
const chaosResendCheck = 250 * time.Millisecond

// chaosRetry is the pause before dialing again after a failed connection.
const chaosRetry = 50 * time.Millisecond

// runChaosCustomer talks to whichever daemon the hub names until the hub
// stops sending and every message is answered, or ctx ends. Each time the
// connection breaks it reconnects, resumes its session with its token and
// sends every unanswered message again with the same message_id.
func runChaosCustomer(ctx context.Context, hub *chaosHub, l *chaosLedger, p chaosPlan) {
	d := newDialer(p.bufSize)
	for ctx.Err() == nil {
		if !hub.sending.Load() && len(l.unanswered) == 0 {
			return
		}
		addr, gen, err := hub.current(ctx)
		if err != nil {
			return
		}
		c, err := l.open(ctx, d, addr, hub, gen)
		if err != nil {
			if l.resumeErr != "" {
				return // the conversation is gone; the report says why
			}
			l.connectFailures++
			if wait(ctx, chaosRetry) != nil {
				return
			}
			continue
		}
		done := l.session(ctx, hub, c, gen, p)
		if done {
			l.drain(hub, c, gen)
		}
		c.close()
		if done {
			return
		}
	}
}

// open connects and, after the first connection, resumes the session.
// Events other than the session's that come first are noted.
func (l *chaosLedger) open(ctx context.Context, d *websocket.Dialer, addr string, hub *chaosHub, gen int) (*customer, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, ev, err := dialSession(dctx, d, addr)
	if err != nil {
		return nil, err
	}
	if l.token == "" {
		if ev.SessionToken == "" {
			c.close()
			l.resumeErr = "the first session event carries no session_token"
			return nil, errors.New(l.resumeErr)
		}
		l.token = ev.SessionToken
		return c, nil
	}
	if err := c.resume(l.token); err != nil {
		c.close()
		return nil, err
	}
	for {
		select {
		case ev := <-c.events:
			switch {
			case ev.Type == "session" && ev.Resumed && ev.SessionToken == l.token:
				l.reconnects++
				return c, nil
			case ev.Type == "session":
				c.close()
				l.resumeErr = fmt.Sprintf("resume answered with a session that is not the old one (resumed=%v, same token=%v)", ev.Resumed, ev.SessionToken == l.token)
				return nil, errors.New(l.resumeErr)
			case ev.Type == "error" && ev.Code == "unauthorized":
				c.close()
				l.resumeErr = "resume refused: " + string(ev.Raw)
				return nil, errors.New(l.resumeErr)
			default:
				l.note(hub, ev, gen)
			}
		case <-c.gone:
			l.drainRead(hub, c, gen)
			c.close()
			return nil, fmt.Errorf("connection closed while resuming: %w", c.readErr)
		case <-dctx.Done():
			c.close()
			return nil, fmt.Errorf("resume: %w", dctx.Err())
		}
	}
}

// session sends and listens on one connection. It reports true when the
// hub stopped sending and every message is answered, false when the
// connection ended or ctx did.
func (l *chaosLedger) session(ctx context.Context, hub *chaosHub, c *customer, gen int, p chaosPlan) bool {
	for _, m := range l.unanswered {
		if l.send(c, m) != nil {
			return false
		}
	}
	tick := time.NewTicker(chaosResendCheck)
	defer tick.Stop()
	stop := hub.stop
	for {
		for hub.sending.Load() && len(l.unanswered) < p.window {
			m := l.next(p.run)
			if l.send(c, m) != nil {
				return false
			}
			hub.sent(m.id)
		}
		if !hub.sending.Load() && len(l.unanswered) == 0 {
			return true
		}
		select {
		case ev := <-c.events:
			l.note(hub, ev, gen)
		case <-c.gone:
			l.drainRead(hub, c, gen)
			return false
		case <-stop:
			stop = nil
		case now := <-tick.C:
			for _, m := range l.unanswered {
				if !m.acked() && now.Sub(m.lastSent) >= p.resendAfter {
					if l.send(c, m) != nil {
						return false
					}
				}
			}
		case <-ctx.Done():
			return false
		}
	}
}

// drain keeps counting late copies of answers for a moment after the last
// answer, so that a redelivery behind it is seen.
func (l *chaosLedger) drain(hub *chaosHub, c *customer, gen int) {
	t := time.NewTimer(drainGrace)
	defer t.Stop()
	for {
		select {
		case ev := <-c.events:
			l.note(hub, ev, gen)
		case <-c.gone:
			l.drainRead(hub, c, gen)
			return
		case <-t.C:
			return
		}
	}
}

// drainRead notes the events the reader passed on before the connection
// ended. The reader closes gone only after its last event is in the
// channel, but a select that sees both may pick gone first: an answer
// that arrived just before a kill would be missed, and its message, resent
// after the restart, would look lost.
func (l *chaosLedger) drainRead(hub *chaosHub, c *customer, gen int) {
	for {
		select {
		case ev := <-c.events:
			l.note(hub, ev, gen)
		default:
			return
		}
	}
}

// next makes the customer's next new message.
func (l *chaosLedger) next(run string) *chaosMsg {
	i := len(l.order)
	m := &chaosMsg{id: fmt.Sprintf("%s-c%d-m%d", run, l.customer, i), text: messageText(l.customer, i)}
	l.msgs[m.id] = m
	l.order = append(l.order, m)
	l.unanswered = append(l.unanswered, m)
	return m
}

// send writes m, a first time or again with the same message_id.
func (l *chaosLedger) send(c *customer, m *chaosMsg) error {
	now := time.Now()
	if err := c.send(m.id, m.text); err != nil {
		return err
	}
	if m.sends == 0 {
		m.firstSent = now
	}
	m.lastSent = now
	m.sends++
	return nil
}

// note records an event received on a connection of generation gen.
func (l *chaosLedger) note(hub *chaosHub, ev event, gen int) {
	now := time.Now()
	switch ev.Type {
	case "ack":
		m, ok := l.msgs[ev.MessageID]
		if !ok {
			l.unexpected++
			return
		}
		if !m.acked() {
			m.ackedAt = now
		}
	case "message":
		m, ok := l.msgs[ev.ReplyTo]
		if !ok {
			l.unexpected++
			return
		}
		if !m.answered() {
			m.answer, m.answerText, m.answeredAt = ev.Raw, ev.Text, now
			l.unanswered = removeMsg(l.unanswered, m)
			hub.answered(gen, now)
			return
		}
		if bytes.Equal(m.answer, ev.Raw) {
			m.redelivered = append(m.redelivered, gen)
		} else {
			m.conflicts = append(m.conflicts, ev.Raw)
		}
	case "error":
		l.errors[ev.Code]++
	}
}

func removeMsg(ms []*chaosMsg, m *chaosMsg) []*chaosMsg {
	for i, x := range ms {
		if x == m {
			return append(ms[:i], ms[i+1:]...)
		}
	}
	return ms
}

// fromModel reports whether an answer text is the mock model's echo rather
// than the daemon's apology for a failed turn.
func fromModel(text string) bool { return strings.HasPrefix(text, mockAnswerPrefix) }
