package persistence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// Memory is the per-scope memory store (spec 3.8) with a keyword index kept
// in the same transactions as the items (memory_index.go). Every method is
// confined to one scope: no key of another scope is ever read.
type Memory struct{ d *DB }

// preparedMemory is a validated memory item with its stored value and
// index terms computed, so that the committer only reads and writes keys.
type preparedMemory struct {
	item  *messages.MemoryItem
	val   []byte
	terms docTerms
}

// memoryKeyOverhead estimates the keys of one memory item besides its
// posting keys.
const memoryKeyOverhead = 128

// prepareMemories validates items, fills CreatedAt and UpdatedAt, and
// encodes them; size estimates what storing them writes.
func prepareMemories(items []messages.MemoryItem, now time.Time) (out []preparedMemory, size int64, err error) {
	out = make([]preparedMemory, len(items))
	for i := range items {
		m := &items[i]
		if err := m.Validate(); err != nil {
			return nil, 0, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		if err := validID("memory_id", m.MemoryID); err != nil {
			return nil, 0, err
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		}
		if m.UpdatedAt.IsZero() {
			m.UpdatedAt = m.CreatedAt
		}
		if !auditTimeOK(m.CreatedAt) {
			return nil, 0, fmt.Errorf("memory %s: created_at %s out of range: %w", m.MemoryID, m.CreatedAt, ErrInvalid)
		}
		val, err := encodeMemory(m)
		if err != nil {
			return nil, 0, fmt.Errorf("memory %s: %w", m.MemoryID, err)
		}
		ts := memoryTerms(m)
		out[i] = preparedMemory{item: m, val: val, terms: ts}
		size += int64(len(val)) + memoryKeyOverhead
		for _, t := range ts.terms {
			size += int64(2*len(t.term)+len(m.MemoryID)) + postingOverhead
		}
	}
	return out, size, nil
}

// loadMemory reads one item of scope from txn.
func loadMemory(txn reader, scope, id string) (messages.MemoryItem, error) {
	var m messages.MemoryItem
	err := getValue(txn, key2(pfxMemory, scope, id), func(v []byte) error { return decodeJSON(v, &m) })
	return m, err
}

// stageMemoryPut writes pm into txn, replacing an older version of the
// same id together with its index entries; the index counters change in c
// (the caller applies it).
func stageMemoryPut(txn *wtxn, scope string, pm *preparedMemory, c *indexCounts) error {
	old, err := loadMemory(txn, scope, pm.item.MemoryID)
	var prev *messages.MemoryItem
	switch {
	case err == nil:
		if err := unindexMemory(txn, scope, &old, c); err != nil {
			return err
		}
		prev = &old
	case !errors.Is(err, ErrNotFound):
		return err
	}
	if err := txn.Set(key2(pfxMemory, scope, pm.item.MemoryID), pm.val); err != nil {
		return err
	}
	if err := stageVectorPut(txn, scope, prev, pm.item); err != nil {
		return err
	}
	return indexMemory(txn, scope, pm.item, pm.terms, c)
}

// Put stores items in scope in one atomic write, replacing items with the
// same memory_id. Each item must pass MemoryItem.Validate.
func (mem Memory) Put(ctx context.Context, scope string, items ...messages.MemoryItem) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("put memory: %w", err)
	}
	items = append([]messages.MemoryItem(nil), items...)
	pms, size, err := prepareMemories(items, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("put memory %s: %w", scope, err)
	}
	if len(items) == 0 {
		return nil
	}
	err = mem.d.updateSized(ctx, size, func(txn *wtxn) error {
		c := newIndexCounts()
		for i := range pms {
			if err := stageMemoryPut(txn, scope, &pms[i], c); err != nil {
				return fmt.Errorf("memory %s: %w", pms[i].item.MemoryID, err)
			}
		}
		return c.apply(txn)
	})
	if err != nil {
		return fmt.Errorf("put memory %s: %w", scope, err)
	}
	return nil
}

// Get returns one item of scope, or ErrNotFound.
func (mem Memory) Get(ctx context.Context, scope, id string) (messages.MemoryItem, error) {
	if err := validID("scope", scope); err != nil {
		return messages.MemoryItem{}, fmt.Errorf("get memory: %w", err)
	}
	if err := validID("memory_id", id); err != nil {
		return messages.MemoryItem{}, fmt.Errorf("get memory %s: %w", scope, err)
	}
	var m messages.MemoryItem
	err := mem.d.view(ctx, func(txn *badger.Txn) error {
		var err error
		m, err = loadMemory(txn, scope, id)
		return err
	})
	if err != nil {
		return messages.MemoryItem{}, fmt.Errorf("get memory %s/%s: %w", scope, id, err)
	}
	return m, nil
}

// Delete removes one item of scope and its index entries; ErrNotFound if
// it does not exist.
func (mem Memory) Delete(ctx context.Context, scope, id string) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("delete memory: %w", err)
	}
	if err := validID("memory_id", id); err != nil {
		return fmt.Errorf("delete memory %s: %w", scope, err)
	}
	err := mem.d.update(ctx, func(txn *wtxn) error {
		old, err := loadMemory(txn, scope, id)
		if err != nil {
			return err
		}
		c := newIndexCounts()
		if err := unindexMemory(txn, scope, &old, c); err != nil {
			return err
		}
		if err := c.apply(txn); err != nil {
			return err
		}
		if err := stageVectorDelete(txn, scope, id); err != nil {
			return err
		}
		return txn.Delete(key2(pfxMemory, scope, id))
	})
	if err != nil {
		return fmt.Errorf("delete memory %s/%s: %w", scope, id, err)
	}
	return nil
}

// Recent returns up to limit items of scope, newest created first. A
// limit of 0 returns nothing; a negative limit is ErrInvalid.
func (mem Memory) Recent(ctx context.Context, scope string, limit int) ([]messages.MemoryItem, error) {
	if err := validID("scope", scope); err != nil {
		return nil, fmt.Errorf("recent memory: %w", err)
	}
	if limit < 0 {
		return nil, fmt.Errorf("recent memory %s: limit %d: %w", scope, limit, ErrInvalid)
	}
	if limit == 0 {
		return nil, nil
	}
	var out []messages.MemoryItem
	err := mem.d.view(ctx, func(txn *badger.Txn) error {
		p := scopePrefix(pfxMemoryTime, scope)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, Reverse: true})
		defer it.Close()
		for it.Seek(prefixEnd(p)); it.Valid() && len(out) < limit; it.Next() {
			k := it.Item().Key()
			if len(k) <= len(p)+8 {
				return fmt.Errorf("memory time key %x: %w", k, ErrCorrupt)
			}
			m, err := loadMemory(txn, scope, string(k[len(p)+8:]))
			if err != nil {
				return fmt.Errorf("memory of time key %x: %w", k, err)
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recent memory %s: %w", scope, err)
	}
	return out, nil
}
