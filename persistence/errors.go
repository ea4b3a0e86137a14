package persistence

import "errors"

// ErrNotFound means the requested record does not exist (never written,
// deleted, acked or expired). Callers treat it as "absent", not as a failure.
var ErrNotFound = errors.New("persistence: not found")

// ErrInvalid means the caller passed an argument the store cannot accept
// (empty or NUL-containing identifier, item failing Validate, negative
// limit). It is a bug in the caller: do not retry the same call.
var ErrInvalid = errors.New("persistence: invalid argument")

// ErrCorrupt means a stored value could not be decoded. Stop using the data
// dir, run `silas audit verify`, and restore from a backup if it fails.
var ErrCorrupt = errors.New("persistence: stored data is corrupt")

// ErrSchemaTooNew means the data dir was written by a newer silas. Upgrade
// silas or restore a backup taken with this version; never downgrade in place.
var ErrSchemaTooNew = errors.New("data dir was written by a newer silas; upgrade silas or restore a backup")

// ErrSchemaMismatch means a migration recorded in the data dir differs from
// the migration of the same version in this binary (a modified or foreign
// build). Run the silas build that created the data dir or restore a backup.
var ErrSchemaMismatch = errors.New("data dir migration checksum differs from this silas build; run the matching silas or restore a backup")

// ErrDuplicate means the message was already committed for this consumer
// (CommitTurn was called twice for one message). Ack the message and drop
// the turn: its effects are already durable (spec 19.2.3).
var ErrDuplicate = errors.New("persistence: message already processed")

// ErrNotLeased means a Heartbeat was sent for a queue record that is not
// leased (it was nacked, acked or never leased). The lease is lost: stop the
// work and let the record be leased again.
var ErrNotLeased = errors.New("persistence: queue record is not leased")

// ErrBusy means a transaction kept conflicting with concurrent writers and
// gave up after its retries. It is transient: retry later with backoff.
var ErrBusy = errors.New("persistence: too much write contention, retry later")

// ErrTooLarge means one value exceeds MaxValueBytes or one call tried to
// write more than fits in a single Badger transaction. Split the batch into
// smaller calls, or store a large blob elsewhere and keep a reference.
var ErrTooLarge = errors.New("persistence: value or batch too large; split it or store a reference")

// ErrClosed means the DB was closed. The process is shutting down: stop the
// work without retrying; unfinished messages are re-run from Queue.Pending
// on the next start.
var ErrClosed = errors.New("persistence: database is closed")

// ErrDiskFull means the data dir's file system has less free space than
// Options.MinFreeBytes (persistence.min_free_mb), or a write failed with
// ENOSPC. New messages are refused so that turns in flight can still
// finish; tell the sender to try again later, and the operator to free
// space. The store recovers by itself once space is freed.
var ErrDiskFull = errors.New("persistence: the disk is almost full")
