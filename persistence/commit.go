package persistence

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// Group commit. Every write except Audit.Append is submitted to the DB's
// one committer goroutine as a staging function. The committer takes
// everything queued (up to maxGroupWrites writes and maxGroupBytes
// estimated bytes), stages all of it into ONE Badger transaction, commits
// once (one WAL sync with SyncWrites) and answers every caller. While it
// commits, new submissions queue up for the next group, so groups grow
// under load and a lone write commits at once.
//
// Badger has no savepoints, so isolation between the writes of a group
// rests on counting the writes each staging function made (wtxn.writes):
//
//   - A staging function that fails before writing anything (a duplicate,
//     a missing record, a failed check) leaves the transaction as it was:
//     its caller gets the error and the group goes on.
//   - One that fails after writing (a corrupt record met halfway, a value
//     over MaxValueBytes, a panic) has dirtied the transaction: it is
//     discarded and the group is staged again from scratch without the
//     failing write. Each such restart removes one write, so a group is
//     staged at most len(group)+1 times.
//   - badger.ErrTxnTooBig splits the group: the writes staged before the
//     one that did not fit commit, and the rest form the next group. Only a
//     write that does not fit into an empty transaction fails (ErrTooLarge).
//   - badger.ErrConflict (a concurrent transaction outside the committer)
//     re-stages the whole group, up to maxConflictRetries times, then
//     answers ErrBusy.
//
// Writes are staged in submission order into one transaction, which reads
// its own pending writes, so writes of one group that touch the same keys
// behave as if committed one after the other.

// defaultMaxGroupWrites bounds the number of writes in one group.
const defaultMaxGroupWrites = 1024

// defaultWriteSize is the size estimate of a write that gives none.
const defaultWriteSize = 256

// submitQueueLen is the capacity of the submission queue; a full queue
// makes callers wait (backpressure) until the committer catches up.
const submitQueueLen = 4096

// stageFunc stages one write into the group's transaction. It may run more
// than once (the group is re-staged after a conflict or after another
// write of the group failed), each time on a fresh transaction, so it must
// derive everything it writes from its inputs and what it reads in txn,
// and reset any result it reports before setting it.
type stageFunc func(txn *wtxn) error

// write is one caller's submission.
type write struct {
	ctx   context.Context
	stage stageFunc
	size  int64
	done  chan error // buffered: the committer never blocks on a caller
}

// wtxn is the group's shared Badger transaction as one staging function
// sees it. Set, SetEntry and Delete count the writes staged, so that the
// committer can tell a clean failure from one that dirtied the
// transaction; staging code must write only through these methods.
type wtxn struct {
	*badger.Txn
	writes int

	c *committer
	// chronicle holds, for every scope whose chronicle this transaction
	// appended to, the last sequence staged so far.
	chronicle map[string]uint64
	// usage holds the usage records this transaction staged, by key
	// (usage_cache.go).
	usage map[string]stagedUsage
}

// Set stages key=val.
func (t *wtxn) Set(key, val []byte) error {
	if err := t.Txn.Set(key, val); err != nil {
		return err
	}
	t.writes++
	return nil
}

// SetEntry stages e.
func (t *wtxn) SetEntry(e *badger.Entry) error {
	if err := t.Txn.SetEntry(e); err != nil {
		return err
	}
	t.writes++
	return nil
}

// Delete stages the deletion of key.
func (t *wtxn) Delete(key []byte) error {
	if err := t.Txn.Delete(key); err != nil {
		return err
	}
	t.writes++
	return nil
}

// groupStats counts what the committer did; tests read it to observe
// grouping.
type groupStats struct {
	groups  atomic.Int64 // Badger commits attempted
	writes  atomic.Int64 // writes answered nil
	restage atomic.Int64 // restarts after a dirty failure or a conflict
}

// committer owns the group-commit goroutine of one DB, and the chronicle
// sequence counters, which only that goroutine touches.
type committer struct {
	bdb       *badger.DB
	maxWrites int
	maxBytes  int64

	// mu makes "closed check + send" atomic against close: submitters hold
	// it shared while they send, close takes it exclusively before closing
	// queue, so no send can reach a closed or abandoned channel.
	mu     sync.RWMutex
	closed bool
	queue  chan *write
	exited chan struct{}

	chronicle map[string]*scopeCounter // owned by the committer goroutine
	usage     map[string]*usageCache   // by scope; owned by the committer goroutine
	stats     groupStats
}

// scopeCounter caches the last chronicle sequence of one scope.
type scopeCounter struct {
	loaded bool   // last is valid
	last   uint64 // last sequence committed, 0 if none
}

func newCommitter(bdb *badger.DB, o Options) *committer {
	c := &committer{
		bdb:       bdb,
		maxWrites: o.maxGroupWrites,
		maxBytes:  o.maxGroupBytes,
		queue:     make(chan *write, submitQueueLen),
		exited:    make(chan struct{}),
		chronicle: make(map[string]*scopeCounter),
		usage:     make(map[string]*usageCache),
	}
	if c.maxWrites <= 0 {
		c.maxWrites = defaultMaxGroupWrites
	}
	if c.maxBytes <= 0 {
		// Half of what Badger accepts in one transaction: estimates are
		// rough, and ErrTxnTooBig splits a group anyway.
		c.maxBytes = bdb.MaxBatchSize() / 2
	}
	return c
}

// start runs the committer goroutine, labelled for pprof.
func (c *committer) start() {
	go pprof.Do(context.Background(), pprof.Labels("silas", "persistence.committer"), func(context.Context) {
		defer close(c.exited)
		c.run()
	})
}

// close stops accepting writes, waits until every write already submitted
// was committed and answered, and returns once the goroutine has exited.
func (c *committer) close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.queue)
	}
	c.mu.Unlock()
	<-c.exited
}

// submit hands stage to the committer and waits for its outcome. It
// returns ErrClosed after close, and ctx.Err() if ctx ends first; the
// write may then still be committed (see the package doc).
func (c *committer) submit(ctx context.Context, size int64, stage stageFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w := &write{ctx: ctx, stage: stage, size: size, done: make(chan error, 1)}
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return ErrClosed
	}
	select {
	case c.queue <- w:
		c.mu.RUnlock()
	case <-ctx.Done():
		c.mu.RUnlock()
		return ctx.Err()
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run commits groups until the queue is closed and drained.
func (c *committer) run() {
	var carry *write // taken from the queue but over the last group's bounds
	group := make([]*write, 0, c.maxWrites)
	for {
		first := carry
		carry = nil
		if first == nil {
			var ok bool
			if first, ok = <-c.queue; !ok {
				return
			}
		}
		group = append(group[:0], first)
		size := first.size
	fill:
		for len(group) < c.maxWrites {
			select {
			case w, ok := <-c.queue:
				if !ok {
					break fill
				}
				if size+w.size > c.maxBytes {
					carry = w
					break fill
				}
				group = append(group, w)
				size += w.size
			default:
				break fill
			}
		}
		c.commitGroup(group)
		clear(group)
	}
}

// answer delivers err to w's caller.
func (c *committer) answer(w *write, err error) {
	if err == nil {
		c.stats.writes.Add(1)
	}
	w.done <- err
}

// commitGroup commits ws, splitting it when Badger's transaction limit is
// reached, and answers every write exactly once.
func (c *committer) commitGroup(ws []*write) {
	rest := ws
	for len(rest) > 0 {
		rest = c.commitSegment(rest)
	}
}

// commitSegment commits as much of ws as fits into one transaction, in
// order, and returns the writes left for the next transaction.
func (c *committer) commitSegment(ws []*write) []*write {
	var later []*write // split off by ErrTxnTooBig, in order
	conflicts := 0
	for {
		txn := &wtxn{Txn: c.bdb.NewTransaction(true), c: c}
		staged, next, dirty := c.stageAll(txn, ws)
		if len(next) > 0 {
			later = slices.Concat(next, later)
		}
		if dirty {
			txn.Discard()
			c.stats.restage.Add(1)
			ws = staged
			continue
		}
		if len(staged) == 0 {
			txn.Discard()
			return later
		}
		c.stats.groups.Add(1)
		err := txn.Commit()
		txn.Discard()
		if errors.Is(err, badger.ErrConflict) && conflicts < maxConflictRetries {
			// Nothing was written: stage the same writes again on a
			// transaction that reads the conflicting commit.
			conflicts++
			c.stats.restage.Add(1)
			ws = staged
			continue
		}
		switch {
		case err == nil:
			c.settleChronicle(txn.chronicle, true)
			c.settleUsage(txn.usage, true)
		case errors.Is(err, badger.ErrConflict):
			err = ErrBusy
		default:
			// The commit may or may not have reached the disk.
			c.settleChronicle(txn.chronicle, false)
			c.settleUsage(txn.usage, false)
			err = fmt.Errorf("commit %d grouped writes: %w", len(staged), mapBadgerErr(err))
		}
		for _, w := range staged {
			c.answer(w, err)
		}
		return later
	}
}

// stageAll stages ws into txn in order and returns the staged writes and
// the writes that did not fit (ErrTxnTooBig) and wait for a later
// transaction. When a failing write (already answered) dirtied txn, it
// reports dirty, and staged holds the writes to stage again, in order, on
// a fresh transaction.
func (c *committer) stageAll(txn *wtxn, ws []*write) (staged, next []*write, dirty bool) {
	for i, w := range ws {
		if err := w.ctx.Err(); err != nil {
			// The caller has given up and nothing of it is staged: drop it.
			c.answer(w, err)
			continue
		}
		before := txn.writes
		err := stageOne(txn, w.stage)
		if err == nil {
			staged = append(staged, w)
			continue
		}
		dirty := txn.writes != before
		if errors.Is(err, badger.ErrTxnTooBig) && len(staged) > 0 {
			// w does not fit after the others: commit those now, w and
			// the rest in the next transaction.
			return staged, ws[i:], dirty
		}
		c.answer(w, mapBadgerErr(err))
		if dirty {
			return append(staged, ws[i+1:]...), nil, true
		}
	}
	return staged, nil, false
}

// stageOne runs stage, turning a panic into an error that marks the
// transaction dirty.
func stageOne(txn *wtxn, stage stageFunc) (err error) {
	defer func() {
		if r := recover(); r != nil {
			txn.writes++ // whatever it did, do not trust the transaction
			err = fmt.Errorf("persistence: staging a write panicked: %v", r)
		}
	}()
	return stage(txn)
}
