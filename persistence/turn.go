package persistence

import (
	"context"
	"fmt"
	"time"

	"github.com/silas-ai/silas/messages"
)

// TurnCommit is everything a finished turn makes durable at once.
type TurnCommit struct {
	// Scope is the scope the turn ran in. Required.
	Scope string
	// MessageID is the inbound message the turn answered; when set, its
	// queue record is acked (if it is still queued) and a redelivery becomes
	// a duplicate.
	MessageID string
	// Consumer, with MessageID, is marked as having processed the message.
	Consumer string
	// Chronicle items are appended to the scope's chronicle.
	Chronicle []messages.ContextItem
	// Memories are stored (and indexed) in the scope's memory.
	Memories []messages.MemoryItem
	// Outbox records are queued for delivery; each must have Scope == Scope.
	Outbox []OutboxRecord
	// Snapshot, when non-nil, replaces the scope's snapshot.
	Snapshot []byte
	// Usage, when non-nil, is added to the scope's usage.
	Usage *UsageRecord
	// Delivered are ids of earlier outbox records of Scope that reached the
	// client; they are deleted in the same transaction, which saves a busy
	// scope a write per answer.
	Delivered []string
}

func (tc *TurnCommit) validate() error {
	if err := validID("scope", tc.Scope); err != nil {
		return err
	}
	if tc.Consumer != "" || tc.MessageID != "" {
		if err := validID("message_id", tc.MessageID); err != nil {
			return err
		}
	}
	if tc.Consumer != "" {
		if err := validID("consumer", tc.Consumer); err != nil {
			return err
		}
	}
	if err := validateContextItems(tc.Chronicle); err != nil {
		return err
	}
	for _, id := range tc.Delivered {
		if err := validID("outbox id", id); err != nil {
			return err
		}
	}
	if tc.Usage != nil {
		return tc.Usage.validate()
	}
	return nil
}

// CommitTurn makes a finished turn durable in ONE atomic write: it appends
// the chronicle items, stores and indexes the memories, queues the
// outbound answers, saves the snapshot, adds usage, marks the message
// processed for Consumer and acks its queue record. Either all of it is
// stored or none of it. If Consumer already processed MessageID it writes
// nothing and returns ErrDuplicate. The turn shares its commit (and its
// disk sync) with concurrent writes of other scopes; see the package doc
// for what a nil error and a ctx error mean.
func (d *DB) CommitTurn(ctx context.Context, tc TurnCommit) error {
	p, err := d.prepareTurn(&tc)
	if err != nil {
		return fmt.Errorf("commit turn %s/%s: %w", tc.Scope, tc.MessageID, err)
	}
	if err := d.updateSized(ctx, p.size, p.stage); err != nil {
		return fmt.Errorf("commit turn %s/%s: %w", tc.Scope, tc.MessageID, err)
	}
	return nil
}

// preparedTurn is a validated turn with its values encoded, so that the
// committer only reads and writes keys.
type preparedTurn struct {
	d    *DB
	tc   *TurnCommit
	now  time.Time
	size int64

	chronicle [][]byte
	memories  []preparedMemory
	outbox    [][]byte
	outSeqs   []uint64 // allocated on the first staging, reused after
	snapshot  []byte
}

// turnOverhead estimates the keys and markers a turn writes besides its
// values.
const turnOverhead = 512

// prepareTurn validates tc, fills defaults and encodes every value.
func (d *DB) prepareTurn(tc *TurnCommit) (*preparedTurn, error) {
	if err := tc.validate(); err != nil {
		return nil, err
	}
	p := &preparedTurn{d: d, tc: tc, now: time.Now().UTC(), size: turnOverhead}
	var err error
	var n int64
	if p.chronicle, n, err = encodeContextItems(tc.Chronicle); err != nil {
		return nil, err
	}
	p.size += n
	if len(tc.Memories) > 0 {
		tc.Memories = append([]messages.MemoryItem(nil), tc.Memories...)
		if p.memories, n, err = prepareMemories(tc.Memories, p.now); err != nil {
			return nil, err
		}
		p.size += n
	}
	if len(tc.Outbox) > 0 {
		tc.Outbox = append([]OutboxRecord(nil), tc.Outbox...)
		if p.outbox, n, err = prepareOutbox(tc.Scope, tc.Outbox, p.now); err != nil {
			return nil, err
		}
		p.size += n
	}
	if tc.Snapshot != nil {
		if p.snapshot, err = encodeRaw(tc.Snapshot); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		p.size += int64(len(p.snapshot))
	}
	return p, nil
}

// stage writes the whole turn into txn.
func (p *preparedTurn) stage(txn *wtxn) error {
	d, tc := p.d, p.tc
	var processedKey []byte
	if tc.Consumer != "" {
		processedKey = key2(pfxProcessed, tc.Consumer, tc.MessageID)
		done, err := exists(txn, processedKey)
		if err != nil {
			return err
		}
		if done {
			return ErrDuplicate
		}
	}
	if err := txn.appendChronicle(tc.Scope, p.chronicle); err != nil {
		return fmt.Errorf("chronicle: %w", err)
	}
	c := newIndexCounts()
	for i := range p.memories {
		if err := stageMemoryPut(txn, tc.Scope, &p.memories[i], c); err != nil {
			return fmt.Errorf("memory %s: %w", p.memories[i].item.MemoryID, err)
		}
	}
	if err := c.apply(txn); err != nil {
		return fmt.Errorf("memory index: %w", err)
	}
	if err := stageDelivered(txn, tc.Scope, tc.Delivered); err != nil {
		return fmt.Errorf("outbox delivered: %w", err)
	}
	if len(p.outbox) > 0 {
		if p.outSeqs == nil {
			seqs, err := d.nextOutboxSeqs(len(p.outbox))
			if err != nil {
				return fmt.Errorf("outbox: %w", err)
			}
			p.outSeqs = seqs
		}
		if err := stageOutbox(txn, tc.Scope, tc.Outbox, p.outbox, p.outSeqs); err != nil {
			return fmt.Errorf("outbox: %w", err)
		}
	}
	if p.snapshot != nil {
		if err := txn.Set(key1(pfxSnapshot, tc.Scope), p.snapshot); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	if tc.Usage != nil {
		if err := stageUsage(txn, tc.Scope, *tc.Usage, p.now); err != nil {
			return fmt.Errorf("usage: %w", err)
		}
	}
	ttl := d.opts.processedTTL()
	if processedKey != nil {
		if err := txn.SetEntry(ttlEntry(processedKey, nil, ttl)); err != nil {
			return fmt.Errorf("mark processed: %w", err)
		}
	}
	if tc.MessageID != "" {
		found, err := Queue{d: d}.stageAck(txn, tc.Scope, tc.MessageID)
		if err != nil {
			return fmt.Errorf("ack: %w", err)
		}
		if !found {
			// Not (or no longer) queued, e.g. a turn the scheduler started:
			// still remember the id so a late delivery is a duplicate.
			if err := txn.SetEntry(ttlEntry(key2(pfxAcked, tc.Scope, tc.MessageID), nil, ttl)); err != nil {
				return fmt.Errorf("ack: %w", err)
			}
		}
	}
	return nil
}
