package actors

import "runtime"

// workers runs functions on long-lived goroutines when one is idle, and on
// a new goroutine otherwise, so that handing work over never blocks and
// never waits for a busy worker.
//
// Why: a turn's steps run deep stacks (JSON, the gates, Badger, the model
// client). A new goroutine starts with a small stack and copies it each
// time it doubles; protoactor starts one for every mailbox that goes from
// empty to busy, and the Scope's IO starts one per step. Profiles of a
// whole turn put stack copying at about a tenth of its CPU. A worker keeps
// its grown stack from one run to the next (until the GC shrinks an idle
// one).
//
// workers is a protoactor Dispatcher (the mailboxes' batches) and backs
// tasks.Go (the actors' IO).
type workers struct {
	work       chan func()
	done       chan struct{}
	throughput int
}

// dispatchThroughput is how many messages a mailbox processes before it
// yields its goroutine, protoactor's default.
const dispatchThroughput = 300

// newWorkers starts n workers; n < 1 means four per CPU.
func newWorkers(n int) *workers {
	if n < 1 {
		n = 4 * runtime.GOMAXPROCS(0)
	}
	w := &workers{work: make(chan func()), done: make(chan struct{}), throughput: dispatchThroughput}
	for range n {
		go w.loop()
	}
	return w
}

func (w *workers) loop() {
	for {
		select {
		case fn := <-w.work:
			fn()
		case <-w.done:
			return
		}
	}
}

// Schedule runs fn on an idle worker, or on a new goroutine when none is
// idle or the workers have stopped.
func (w *workers) Schedule(fn func()) {
	select {
	case w.work <- fn:
	default:
		go fn()
	}
}

// Throughput is the mailbox batch size (protoactor's Dispatcher).
func (w *workers) Throughput() int { return w.throughput }

// Stop ends the idle workers; a busy one ends when its function returns.
// Schedule keeps working, on new goroutines.
func (w *workers) Stop() { close(w.done) }
