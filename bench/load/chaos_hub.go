package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// chaosHub is what the chaos customers share with the goroutine that kills
// and restarts the daemon: where the daemon listens now, whether new
// messages may be sent, and the hook that times a kill right after a send.
type chaosHub struct {
	mu   sync.Mutex
	addr string
	gen  int           // restarts so far: connections are tagged with it
	up   chan struct{} // closed while the daemon of gen is ready

	// trigger, when set, takes the id of the next new message sent, so the
	// killer can strike right after it.
	trigger atomic.Pointer[chan string]

	sending atomic.Bool
	stop    chan struct{} // closed when customers stop sending new messages

	// firstAnswer[g] is when the first answer arrived on a connection of
	// generation g (unix nanoseconds; 0: none yet).
	firstAnswer []atomic.Int64
	// answers counts first answers, for the progress notes.
	answers atomic.Int64
}

func newChaosHub(addr string, kills int) *chaosHub {
	h := &chaosHub{addr: addr, up: make(chan struct{}), stop: make(chan struct{}),
		firstAnswer: make([]atomic.Int64, kills+1)}
	close(h.up)
	h.sending.Store(true)
	return h
}

// current waits until the daemon is ready and returns its address and
// generation.
func (h *chaosHub) current(ctx context.Context) (string, int, error) {
	h.mu.Lock()
	up := h.up
	h.mu.Unlock()
	select {
	case <-up:
	case <-ctx.Done():
		return "", 0, ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.addr, h.gen, nil
}

// down marks the daemon as gone: customers that lose their connection
// wait for the next generation instead of dialing a dead address.
func (h *chaosHub) down() {
	h.mu.Lock()
	h.up = make(chan struct{})
	h.mu.Unlock()
}

// ready publishes the restarted daemon's address as the next generation.
func (h *chaosHub) ready(addr string) {
	h.mu.Lock()
	h.addr = addr
	h.gen++
	close(h.up)
	h.mu.Unlock()
}

// stopSending tells customers to send no new message; they still resend
// and wait for what is unanswered.
func (h *chaosHub) stopSending() {
	if h.sending.Swap(false) {
		close(h.stop)
	}
}

// arm makes the next new message sent report its id on the returned
// channel.
func (h *chaosHub) arm() <-chan string {
	ch := make(chan string, 1)
	h.trigger.Store(&ch)
	return ch
}

// disarm drops an armed trigger nobody fired.
func (h *chaosHub) disarm() { h.trigger.Store(nil) }

// sent fires the armed trigger, if any, with a new message's id.
func (h *chaosHub) sent(id string) {
	if ch := h.trigger.Swap(nil); ch != nil {
		*ch <- id
	}
}

// answered notes a first answer received on a connection of generation
// gen.
func (h *chaosHub) answered(gen int, at time.Time) {
	h.answers.Add(1)
	if gen >= 0 && gen < len(h.firstAnswer) {
		h.firstAnswer[gen].CompareAndSwap(0, at.UnixNano())
	}
}

// firstAnswerAt returns when the first answer arrived on generation gen,
// or the zero time.
func (h *chaosHub) firstAnswerAt(gen int) time.Time {
	if gen < 0 || gen >= len(h.firstAnswer) {
		return time.Time{}
	}
	if n := h.firstAnswer[gen].Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}
