package persistence

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// Queue is the durable inbound queue of spec 19.2.2: FIFO per scope, with
// leases, dead letters and idempotency by message id (19.2.3). Each scope
// has one consumer, its scope actor, so leases are bookkeeping for crash
// recovery rather than a lock between competing consumers.
type Queue struct{ d *DB }

// Queue record states.
const (
	QueueQueued = "queued"
	QueueLeased = "leased"
)

// QueueRecord is one inbound message awaiting its turn.
type QueueRecord struct {
	MessageID  string              `json:"message_id"`
	ScopeID    string              `json:"scope_id"`
	TraceID    string              `json:"trace_id"`
	Kind       string              `json:"kind"`
	Taint      messages.TaintLevel `json:"taint"`
	Payload    []byte              `json:"payload"`
	EnqueuedAt time.Time           `json:"enqueued_at"`
	Attempts   int                 `json:"attempts"`
	State      string              `json:"state"`
	// LeaseUntil is when the current lease lapses (zero unless leased).
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	// LastError is the reason given by the last Nack.
	LastError string `json:"last_error,omitempty"`
}

// DeadLetter is a message that was given up on.
type DeadLetter struct {
	Record QueueRecord `json:"record"`
	Reason string      `json:"reason"`
	At     time.Time   `json:"at"`
}

func (r *QueueRecord) validate() error {
	if err := validID("scope_id", r.ScopeID); err != nil {
		return err
	}
	if err := validID("message_id", r.MessageID); err != nil {
		return err
	}
	if err := r.Taint.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if r.Attempts < 0 {
		return fmt.Errorf("attempts %d is negative: %w", r.Attempts, ErrInvalid)
	}
	return nil
}

// Enqueue stores rec at the tail of its scope's queue in state queued. If
// the message id is already queued, leased or dead-lettered in that scope,
// or was acked within Options.ProcessedTTL, it writes nothing and returns
// dup=true (the channel redelivered it). While the data dir's free space
// is below Options.MinFreeBytes it writes nothing and returns an error
// wrapping ErrDiskFull. Enqueues of many scopes share one
// commit (and disk sync); see the package doc for what a nil error and a
// ctx error mean.
func (q Queue) Enqueue(ctx context.Context, rec QueueRecord) (dup bool, err error) {
	r, err := q.EnqueueResult(ctx, rec)
	return r != Enqueued, err
}

// EnqueueOutcome tells what Enqueue found: whether the message was stored
// now, or was there already, waiting to run or answered.
type EnqueueOutcome int

// What EnqueueResult found.
const (
	// Enqueued: rec was stored now.
	Enqueued EnqueueOutcome = iota
	// AlreadyPending: the message is queued or leased: journaled and not
	// answered yet (a resend after a crash). It must run.
	AlreadyPending
	// AlreadyDone: the message was acked within Options.ProcessedTTL, or
	// dead-lettered. It must not run again.
	AlreadyDone
)

// EnqueueResult is Enqueue, telling a redelivery of a message still
// waiting to run apart from one of a message already answered: a scope
// that lost track of the first (a restart while its write was in flight)
// runs it, and answers the second from its outbox.
func (q Queue) EnqueueResult(ctx context.Context, rec QueueRecord) (EnqueueOutcome, error) {
	if err := rec.validate(); err != nil {
		return Enqueued, fmt.Errorf("enqueue: %w", err)
	}
	rec.State, rec.LeaseUntil = QueueQueued, time.Time{}
	if rec.EnqueuedAt.IsZero() {
		rec.EnqueuedAt = time.Now().UTC()
	}
	val, err := encodeJSON(&rec)
	if err != nil {
		return Enqueued, fmt.Errorf("enqueue %s/%s: %w", rec.ScopeID, rec.MessageID, err)
	}
	idx := key2(pfxQueueIndex, rec.ScopeID, rec.MessageID)
	acked := key2(pfxAcked, rec.ScopeID, rec.MessageID)
	// Written by the committer, read here only after it answered.
	var (
		seq    uint64
		result EnqueueOutcome
	)
	err = q.d.updateSized(ctx, int64(len(val)+2*len(idx))+queueOverhead, func(txn *wtxn) error {
		result = Enqueued
		if ok, err := exists(txn, acked); err != nil || ok {
			result = AlreadyDone
			return err
		}
		switch at, err := locate(txn, rec.ScopeID, rec.MessageID); {
		case err == nil:
			// Indexed: queued or leased, or dead-lettered when the
			// record itself is gone (its index stays, see stageAck).
			live, err := exists(txn, keySeq(pfxQueue, rec.ScopeID, at))
			result = AlreadyDone
			if live {
				result = AlreadyPending
			}
			return err
		case !errors.Is(err, ErrNotFound):
			return err
		}
		if err := q.d.Space().Refusal(); err != nil {
			// A new message starts new work: refuse it while the disk
			// is almost full (space.go); a redelivery above is still
			// answered, since it writes nothing.
			return err
		}
		if seq == 0 {
			// Allocated on the first staging, in commit order, and reused
			// if the group is staged again.
			n, err := q.d.queueSeq.Next()
			if err != nil {
				return fmt.Errorf("next queue sequence: %w", err)
			}
			seq = n + 1
		}
		if err := txn.Set(keySeq(pfxQueue, rec.ScopeID, seq), val); err != nil {
			return err
		}
		return txn.Set(idx, binary.BigEndian.AppendUint64(nil, seq))
	})
	if err != nil {
		return Enqueued, fmt.Errorf("enqueue %s/%s: %w", rec.ScopeID, rec.MessageID, err)
	}
	return result, nil
}

// queueOverhead estimates a queue record's key and index value.
const queueOverhead = 64

// Pending returns every queued or leased record of every scope, scopes in
// byte order and each scope's records in FIFO order. Leased records are
// returned with State queued: at startup nothing holds a lease, so their
// turns must run again (spec 19.2.2); their next Lease takes them over.
func (q Queue) Pending(ctx context.Context) ([]QueueRecord, error) {
	return q.pending(ctx, []byte(pfxQueue))
}

// PendingFor is Pending for one scope: what a scope reloads when it starts.
func (q Queue) PendingFor(ctx context.Context, scope string) ([]QueueRecord, error) {
	if err := validID("scope", scope); err != nil {
		return nil, fmt.Errorf("pending queue records: %w", err)
	}
	return q.pending(ctx, scopePrefix(pfxQueue, scope))
}

func (q Queue) pending(ctx context.Context, prefix []byte) ([]QueueRecord, error) {
	out, err := scanJSON[QueueRecord](ctx, q.d, prefix, "queue record")
	if err != nil {
		return nil, fmt.Errorf("pending queue records: %w", err)
	}
	for i := range out {
		out[i].State, out[i].LeaseUntil = QueueQueued, time.Time{}
	}
	return out, nil
}

// DeadLetters returns scope's dead letters in the order they were enqueued.
func (q Queue) DeadLetters(ctx context.Context, scope string) ([]DeadLetter, error) {
	if err := validID("scope", scope); err != nil {
		return nil, fmt.Errorf("dead letters: %w", err)
	}
	out, err := scanJSON[DeadLetter](ctx, q.d, scopePrefix(pfxDeadLetter, scope), "dead letter")
	if err != nil {
		return nil, fmt.Errorf("dead letters of %s: %w", scope, err)
	}
	return out, nil
}

// locate returns the queue sequence of a queued or leased message, or
// ErrNotFound.
func locate(txn reader, scope, messageID string) (uint64, error) {
	var seq uint64
	err := getValue(txn, key2(pfxQueueIndex, scope, messageID), func(v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("queue index value has %d bytes: %w", len(v), ErrCorrupt)
		}
		seq = binary.BigEndian.Uint64(v)
		return nil
	})
	return seq, err
}

// modifyRecord loads the queued or leased record of messageID, lets fn
// change it and stores it back. Dead-lettered records are ErrNotFound.
func (q Queue) modifyRecord(ctx context.Context, op, scope, messageID string, fn func(r *QueueRecord) error) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := validID("message_id", messageID); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	err := q.d.update(ctx, func(txn *wtxn) error {
		seq, err := locate(txn, scope, messageID)
		if err != nil {
			return err
		}
		k := keySeq(pfxQueue, scope, seq)
		var r QueueRecord
		if err := getValue(txn, k, func(v []byte) error { return decodeJSON(v, &r) }); err != nil {
			return err
		}
		if err := fn(&r); err != nil {
			return err
		}
		val, err := encodeJSON(&r)
		if err != nil {
			return err
		}
		return txn.Set(k, val)
	})
	if err != nil {
		return fmt.Errorf("%s %s/%s: %w", op, scope, messageID, err)
	}
	return nil
}

// Lease marks the message leased until the given time and counts an
// attempt. A leased record can be leased again (after a restart, or when a
// lease lapsed); each lease is a fresh attempt (spec 19.2.3 rule 4).
func (q Queue) Lease(ctx context.Context, scope, messageID string, until time.Time) error {
	return q.modifyRecord(ctx, "lease", scope, messageID, func(r *QueueRecord) error {
		r.State, r.LeaseUntil = QueueLeased, until.UTC()
		r.Attempts++
		return nil
	})
}

// Heartbeat extends the lease of a leased message. It returns ErrNotLeased
// if the message is queued again.
func (q Queue) Heartbeat(ctx context.Context, scope, messageID string, until time.Time) error {
	return q.modifyRecord(ctx, "heartbeat", scope, messageID, func(r *QueueRecord) error {
		if r.State != QueueLeased {
			return ErrNotLeased
		}
		r.LeaseUntil = until.UTC()
		return nil
	})
}

// Nack returns the message to state queued, keeping its place in the FIFO
// and recording reason.
func (q Queue) Nack(ctx context.Context, scope, messageID, reason string) error {
	return q.modifyRecord(ctx, "nack", scope, messageID, func(r *QueueRecord) error {
		r.State, r.LeaseUntil, r.LastError = QueueQueued, time.Time{}, reason
		return nil
	})
}

// Ack removes a finished message and remembers its id for
// Options.ProcessedTTL so that a redelivery is reported as a duplicate.
// Acking a message that was already acked is a no-op; acking an unknown
// message is ErrNotFound.
func (q Queue) Ack(ctx context.Context, scope, messageID string) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	if err := validID("message_id", messageID); err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	err := q.d.update(ctx, func(txn *wtxn) error {
		found, err := q.stageAck(txn, scope, messageID)
		if err != nil || found {
			return err
		}
		ok, err := exists(txn, key2(pfxAcked, scope, messageID))
		if err == nil && !ok {
			err = ErrNotFound
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("ack %s/%s: %w", scope, messageID, err)
	}
	return nil
}

// stageAck deletes the queued or leased record of messageID (if any) and
// writes its acked marker. found reports whether a record was deleted.
func (q Queue) stageAck(txn *wtxn, scope, messageID string) (found bool, err error) {
	seq, err := locate(txn, scope, messageID)
	switch {
	case errors.Is(err, ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	k := keySeq(pfxQueue, scope, seq)
	if ok, err := exists(txn, k); err != nil || !ok {
		// Dead-lettered: the index stays so redeliveries remain duplicates.
		return false, err
	}
	if err := txn.Delete(k); err != nil {
		return false, err
	}
	if err := txn.Delete(key2(pfxQueueIndex, scope, messageID)); err != nil {
		return false, err
	}
	return true, txn.SetEntry(ttlEntry(key2(pfxAcked, scope, messageID), nil, q.d.opts.processedTTL()))
}

// DeadLetter moves the message out of the queue into scope's dead letters
// with reason. Its id stays known, so a redelivery is a duplicate.
func (q Queue) DeadLetter(ctx context.Context, scope, messageID, reason string) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("dead-letter: %w", err)
	}
	if err := validID("message_id", messageID); err != nil {
		return fmt.Errorf("dead-letter: %w", err)
	}
	now := time.Now().UTC()
	err := q.d.update(ctx, func(txn *wtxn) error {
		seq, err := locate(txn, scope, messageID)
		if err != nil {
			return err
		}
		k := keySeq(pfxQueue, scope, seq)
		dl := DeadLetter{Reason: reason, At: now}
		if err := getValue(txn, k, func(v []byte) error { return decodeJSON(v, &dl.Record) }); err != nil {
			return err
		}
		dl.Record.LeaseUntil = time.Time{}
		val, err := encodeJSON(&dl)
		if err != nil {
			return err
		}
		if err := txn.Set(keySeq(pfxDeadLetter, scope, seq), val); err != nil {
			return err
		}
		return txn.Delete(k)
	})
	if err != nil {
		return fmt.Errorf("dead-letter %s/%s: %w", scope, messageID, err)
	}
	return nil
}

// HasProcessed reports whether consumer marked messageID processed within
// Options.ProcessedTTL. Consumers call it before any side effect (spec
// 19.2.3 rule 2).
func (q Queue) HasProcessed(ctx context.Context, consumer, messageID string) (bool, error) {
	if err := validID("consumer", consumer); err != nil {
		return false, fmt.Errorf("has processed: %w", err)
	}
	if err := validID("message_id", messageID); err != nil {
		return false, fmt.Errorf("has processed: %w", err)
	}
	var ok bool
	err := q.d.view(ctx, func(txn *badger.Txn) error {
		var err error
		ok, err = exists(txn, key2(pfxProcessed, consumer, messageID))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("has processed %s/%s: %w", consumer, messageID, err)
	}
	return ok, nil
}

// MarkProcessed records that consumer finished messageID; the marker
// expires after Options.ProcessedTTL.
func (q Queue) MarkProcessed(ctx context.Context, consumer, messageID string) error {
	if err := validID("consumer", consumer); err != nil {
		return fmt.Errorf("mark processed: %w", err)
	}
	if err := validID("message_id", messageID); err != nil {
		return fmt.Errorf("mark processed: %w", err)
	}
	k := key2(pfxProcessed, consumer, messageID)
	err := q.d.update(ctx, func(txn *wtxn) error {
		return txn.SetEntry(ttlEntry(k, nil, q.d.opts.processedTTL()))
	})
	if err != nil {
		return fmt.Errorf("mark processed %s/%s: %w", consumer, messageID, err)
	}
	return nil
}
