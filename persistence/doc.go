// Package persistence is Silas's system of record: one Badger database per
// process holding the chronicle, scope snapshots, sessions, the audit hash
// chain, the durable inbound queue, the outbox, nonces, memory, usage and the
// active work items.
// keys.go documents the whole key layout; values carry a leading encoding
// version byte (codec.go).
//
// Open returns a *DB whose store accessors (Chronicle, Queue, Audit, ...)
// are cheap values; every method takes a context, returns an error and is
// safe for concurrent use. Callers are actors that call these methods from
// goroutines, never inside Receive: a write blocks until its group is
// committed. A scope's turn is finished with one atomic DB.CommitTurn.
//
// # Group commit and durability
//
// Every write (DB.CommitTurn, Queue.Enqueue, Lease, Heartbeat, Nack, Ack,
// DeadLetter, MarkProcessed, Outbox.Add and Delivered, Nonces.Consume,
// Record and Prune, Memory.Put and Delete, Chronicle.Append,
// Snapshots.Save, Sessions.Put and Delete, Usage.Add, Persona.Save and
// AppendEvent, WorkItems.Put and Delete, Audit.Append) goes through the DB's commit combiner (commit.go). The caller validates
// and encodes its values in its own goroutine, then hands a staging
// function to one committer goroutine and waits. The committer takes
// everything queued, stages it in submission order into ONE Badger
// transaction and commits it once, so with SyncWrites one WAL sync covers
// the whole group; then it answers every caller. Groups form by
// themselves: while one group commits, new writes queue for the next, so
// under load groups grow, and a lone write commits at once (there is no
// timer). A group is bounded in writes and estimated bytes, and split when
// Badger reports the transaction too big.
//
// A write that fails in a group (a duplicate, a validation or corrupt
// record error, ErrTooLarge) fails alone: its caller gets the error and
// the other writes of the group commit, re-staged on a fresh transaction
// if the failure had already staged part of it. Writes of one group that
// touch the same keys apply in submission order (two turns of one scope
// get consecutive chronicle sequences; a turn acks a message enqueued
// earlier in its group).
//
// Audit.Append shares groups too, so the audit log costs no sync of its
// own; the audit mutex keeps one batch in flight, so the chain head it
// advances is never raced.
//
// What a nil error from a write means:
//
//   - SyncWrites=false (default): the write is atomic, isolated and
//     visible to every later read, and it is in the OS page cache through
//     Badger's memory-mapped write-ahead log, so it survives a crash or kill
//     of the silas process. It does not survive a kernel crash or power loss
//     that happens before the kernel writes the pages back (seconds).
//   - SyncWrites=true: additionally, the write-ahead log (and the value log
//     when large values were written) was synced to stable storage before
//     the write returned, so it survives power loss. The sync is shared by
//     every write of the group, which is what makes durable writes cheap
//     under concurrency (see the package benchmarks).
//
// A nil error never means a partial write: Badger replays only whole
// transactions on recovery, and a group is one transaction.
//
// What a context error means: a caller whose ctx ends while it waits gets
// ctx.Err() at once, but its write is not withdrawn. If the committer had
// not started staging it, the write is dropped; if it had, it commits with
// its group. So after a ctx error the write may or may not be stored:
// treat it like a lost reply and rely on idempotency (message ids,
// ErrDuplicate, Enqueue's dup) when retrying. After Close, writes fail
// with ErrClosed; Close itself commits and answers every write submitted
// before it.
//
// InMemory databases keep nothing after Close; they exist for tests and
// ephemeral runs.
//
// # Disk space
//
// With Options.MinFreeBytes set, the DB measures the free space of its
// directory's file system every second (space.go). Below the watermark,
// Queue.Enqueue refuses new messages with ErrDiskFull, DB.Space reports
// Low and DB.AcceptingWork says why; every other write goes on, so turns
// already accepted finish inside the room the watermark keeps. Under a
// quarter of the watermark every write fails with ErrDiskFull (reads go
// on). Freed space is noticed within a second, without a restart. Badger's memory-mapped
// write-ahead log is allocated on disk as soon as Badger creates it, and
// its value log files are kept small, so that running out of space shows
// as an error (ENOSPC maps to ErrDiskFull) rather than as SIGBUS.
//
// # Backup and restore
//
// DB.Backup streams a consistent copy of the whole database while it
// serves (backup.go documents the framed, checksummed format);
// VerifyBackup checks a copy without a database, and Restore creates a
// new data dir from one, refusing a non-empty directory or an incomplete
// copy.
//
// # Idempotency
//
// Message ids are the idempotency key (spec 19.2.3): Queue.Enqueue reports
// a redelivered id as a duplicate while it is queued, leased, dead-lettered
// or acked within Options.ProcessedTTL, and CommitTurn refuses a second
// commit for the same consumer and message (ErrDuplicate).
package persistence
