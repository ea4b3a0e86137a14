package persistence

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// maxConflictRetries bounds how often a commit group is re-staged after
// badger.ErrConflict before its writes get ErrBusy.
const maxConflictRetries = 32

// sequenceBandwidth is how many numbers a Badger Sequence leases per disk
// write. Unused numbers of a lease are skipped after a restart, which is
// fine for the FIFO and outbox numbers it produces (order, not density).
const sequenceBandwidth = 1024

// DB is Silas's system of record: one Badger database holding every store.
// Open it once per process; all methods are safe for concurrent use.
type DB struct {
	bdb  *badger.DB
	opts Options

	queueSeq  *badger.Sequence
	outboxSeq *badger.Sequence

	commit *committer
	audit  auditHead
	space  *spaceMonitor // nil InMemory

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the database described by o, applies
// pending schema migrations and recovers the in-memory counters. It refuses
// a data dir written by a newer or different silas build (ErrSchemaTooNew,
// ErrSchemaMismatch).
func Open(ctx context.Context, o Options) (*DB, error) {
	return open(ctx, o, migrations())
}

// memTableSize is Badger's memtable size. Each memtable has a write-ahead
// log file of twice its size, mapped in memory; with SyncWrites every
// group commit msyncs the whole mapping, and on Linux (ext4, large page
// cache folios) the bytes that writes back grow with how far the log has
// filled: with Badger's default of 64 MB, a steady stream of 10 KB
// commits wrote about 100 times its data to disk near the end of each
// log (6.9 GB for 63 MB), and the disk, not the CPU, capped the turns a
// second a few minutes into a sustained load. At 32 MB the same stream
// writes about a tenth of that, and the memtables take half the memory;
// one transaction may still hold about 50,000 entries (15% of the
// memtable), far more than a turn writes.
//
// Memory: a memtable's arena is 1.3 times its size, and each flush builds
// its level-0 table in buffers that Badger's allocator pool keeps (up to
// eight of them, each as large as the largest table it built) while writes
// go on; both scale with this size. At 16 MB, a transaction still holds
// 2.4 MB, two values of MaxValueBytes; peak RSS at 1,000 customers fell
// from about 790 to 670 MB against 32 MB with the options below (the
// rest is per-scope state), see memOptions.
const memTableSize = 16 << 20

// numMemTables is how many memtables exist at once: the one written and
// one being flushed. Badger's default of 5 holds four full arenas while the
// disk catches up, which is memory this workload (small turns, a flush of
// 16 MB in well under a second) never needs; with two, writes wait for the
// flush instead, as they would anyway once five were full.
const numMemTables = 2

// numCompactors is Badger's minimum: one compactor for level 0, one for
// the others. Each runs table builders whose buffers stay pooled, and the
// data of one assistant never needs Badger's default of 4 to keep up.
const numCompactors = 2

// valueLogFileSize bounds Badger's value log files. Badger maps each one
// at twice this size as a sparse file and writes values of 1 MB and more
// into it (smaller ones stay in the LSM tree); Badger's default of 1 GB
// would leave a 2 GB hole whose pages another process filling the disk
// could deny, which is a SIGBUS, not an error. Values over MaxValueBytes
// are refused before they reach Badger, so the value log stays small.
const valueLogFileSize = 16 << 20

// badgerOptions are the Badger options of o.
func badgerOptions(o Options) badger.Options {
	bo := badger.DefaultOptions(o.Dir).
		WithInMemory(o.InMemory).
		WithSyncWrites(o.SyncWrites).
		WithLogger(newBadgerLogger(o.Logger, o.VerboseStorageLog)).
		WithMemTableSize(memTableSize).
		WithValueLogFileSize(valueLogFileSize)
	bo = memOptions(bo)
	if o.memTableSize > 0 {
		// Badger refuses a value threshold above its batch size (15% of
		// the memtable).
		bo = bo.WithMemTableSize(o.memTableSize).WithValueThreshold(o.memTableSize / 16)
	}
	return bo
}

// memOptions sizes Badger's memory for one assistant's data rather than
// for a database server: two memtables and two compactors (see
// numMemTables, numCompactors), and no compression, hence no block cache.
// With Snappy, every block read was decompressed into a 256 MB cache and
// every table written was compressed through buffers as large as the table;
// uncompressed, blocks are read in place from the mapped table files, whose
// pages the kernel can drop under pressure. Tables written compressed by
// earlier versions stay readable (each table records its compression) and
// are rewritten uncompressed by compaction. The disk holds about twice the
// bytes for text, which the free-space watermark (persistence.min_free_mb)
// accounts for; no durability setting changes.
func memOptions(bo badger.Options) badger.Options {
	return bo.WithNumMemtables(numMemTables).
		WithNumCompactors(numCompactors).
		WithCompression(options.None).
		WithBlockCacheSize(0).
		WithIndexCacheSize(0)
}

func open(ctx context.Context, o Options, ms []migration) (*DB, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open persistence: %w", err)
	}
	switch {
	case o.InMemory && o.Dir != "":
		return nil, fmt.Errorf("open persistence: Dir must be empty with InMemory: %w", ErrInvalid)
	case !o.InMemory && o.Dir == "":
		return nil, fmt.Errorf("open persistence: Dir is empty: %w", ErrInvalid)
	}
	bdb, err := badger.Open(badgerOptions(o))
	if err != nil {
		return nil, fmt.Errorf("open badger at %q: %w", o.Dir, err)
	}
	d := &DB{bdb: bdb, opts: o, commit: newCommitter(bdb, o)}
	if !o.InMemory {
		d.space = newSpaceMonitor(o)
		d.space.start()
	}
	d.commit.start()
	if err := d.start(ctx, ms); err != nil {
		if cerr := d.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, err
	}
	return d, nil
}

// start runs migrations and prepares sequences and the audit head.
func (d *DB) start(ctx context.Context, ms []migration) error {
	if err := migrate(ctx, d.bdb, ms); err != nil {
		return fmt.Errorf("open persistence: %w", err)
	}
	var err error
	if d.queueSeq, err = d.bdb.GetSequence([]byte(keySeqQueue), sequenceBandwidth); err != nil {
		return fmt.Errorf("open queue sequence: %w", err)
	}
	if d.outboxSeq, err = d.bdb.GetSequence([]byte(keySeqOutbox), sequenceBandwidth); err != nil {
		return fmt.Errorf("open outbox sequence: %w", err)
	}
	if err := d.audit.load(ctx, d); err != nil {
		return fmt.Errorf("open persistence: %w", err)
	}
	return nil
}

// Close stops accepting writes (they fail with ErrClosed), waits until every
// write already submitted is committed and answered, then releases the
// sequences and closes Badger, flushing memtables. On a disk with no room
// for that flush it leaves Badger open instead and returns ErrDiskFull
// (space.go): every write is in the write-ahead log, replayed at the next
// Open. It is safe to call more than once; later calls return the first
// result.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		d.closed.Store(true)
		d.commit.close()
		if d.space != nil {
			d.space.close()
			if err := d.space.noRoomToFlush(); err != nil {
				d.closeErr = err
				return
			}
		}
		var errs []error
		for _, s := range []*badger.Sequence{d.queueSeq, d.outboxSeq} {
			if s != nil {
				if err := s.Release(); err != nil {
					errs = append(errs, fmt.Errorf("release sequence: %w", err))
				}
			}
		}
		if err := d.bdb.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close badger: %w", err))
		}
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}

// Chronicle returns the per-scope chronicle store.
func (d *DB) Chronicle() Chronicle { return Chronicle{d: d} }

// Snapshots returns the scope snapshot store.
func (d *DB) Snapshots() Snapshots { return Snapshots{d: d} }

// Sessions returns the session token store.
func (d *DB) Sessions() Sessions { return Sessions{d: d} }

// Audit returns the hash-chained audit log.
func (d *DB) Audit() Audit { return Audit{d: d} }

// Queue returns the durable inbound queue.
func (d *DB) Queue() Queue { return Queue{d: d} }

// Outbox returns the outbound delivery store.
func (d *DB) Outbox() Outbox { return Outbox{d: d} }

// WorkItems returns the store of active work items.
func (d *DB) WorkItems() WorkItems { return WorkItems{d: d} }

// Nonces returns the replay-protection nonce store.
func (d *DB) Nonces() Nonces { return Nonces{d: d} }

// Memory returns the per-scope memory store.
func (d *DB) Memory() Memory { return Memory{d: d} }

// Usage returns the per-scope usage accounting store.
func (d *DB) Usage() Usage { return Usage{d: d} }

// check returns ErrClosed after Close and ctx's error once it is done.
func (d *DB) check(ctx context.Context) error {
	if d.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// update stages fn into the next commit group (commit.go) and waits for
// the group's commit. fn may run more than once (the group is re-staged
// after a conflict or after another write of the group failed), so it may
// only derive its writes from its inputs and what it reads in txn, and
// must reset any result it reports.
func (d *DB) update(ctx context.Context, fn func(txn *wtxn) error) error {
	return d.updateSized(ctx, defaultWriteSize, fn)
}

// updateSized is update for a write of about size bytes, so that groups
// stay within their byte bound.
func (d *DB) updateSized(ctx context.Context, size int64, fn func(txn *wtxn) error) error {
	if err := d.check(ctx); err != nil {
		return err
	}
	if err := d.Space().criticalRefusal(); err != nil {
		return err
	}
	return d.commit.submit(ctx, size, fn)
}

// view runs fn in a read-only transaction.
func (d *DB) view(ctx context.Context, fn func(txn *badger.Txn) error) error {
	if err := d.check(ctx); err != nil {
		return err
	}
	return mapBadgerErr(d.bdb.View(fn))
}

// mapBadgerErr translates Badger errors callers must act on into sentinels.
func mapBadgerErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, badger.ErrTxnTooBig):
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	case errors.Is(err, badger.ErrDBClosed):
		return fmt.Errorf("%w: %w", ErrClosed, err)
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	return err
}

// reader is what lookups need of a transaction: a read-only *badger.Txn
// or a group's *wtxn.
type reader interface {
	Get(key []byte) (*badger.Item, error)
}

// getValue returns a copy-free decode of key's value through fn, or
// ErrNotFound.
func getValue(txn reader, key []byte, fn func(v []byte) error) error {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	return item.Value(fn)
}

// exists reports whether key is present (and not expired) in txn.
func exists(txn reader, key []byte) (bool, error) {
	_, err := txn.Get(key)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, badger.ErrKeyNotFound):
		return false, nil
	}
	return false, err
}

// ttlEntry returns a Set entry that Badger drops after ttl.
func ttlEntry(key, val []byte, ttl time.Duration) *badger.Entry {
	return badger.NewEntry(key, val).WithTTL(ttl)
}

// scanJSON decodes every JSON value under prefix, in key order; what names
// the records in errors.
func scanJSON[T any](ctx context.Context, d *DB, prefix []byte, what string) ([]T, error) {
	var out []T
	err := d.view(ctx, func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 100})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			var v T
			if err := it.Item().Value(func(b []byte) error { return decodeJSON(b, &v) }); err != nil {
				return fmt.Errorf("%s %x: %w", what, it.Item().Key(), err)
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}
