package persistence

import (
	"bytes"
	"context"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// Memory portability (spec 6.5): listing the scopes that hold memories,
// streaming every item of a scope and deleting a whole scope. The bundle
// format itself belongs to the command that reads and writes bundles
// (cmd/silas/memory.go); these methods only read and write the mem/, mi/
// and mt/ keys described in keys.go.

// allCtxEvery is how many items All and Scopes handle between checks of
// ctx.
const allCtxEvery = 256

// deleteScopeMaxKeys caps the deletions of one DeleteScope transaction, so
// that one batch never holds the committer for long.
const deleteScopeMaxKeys = 8192

// deleteKeyOverhead estimates what Badger counts for one deletion besides
// the key bytes.
const deleteKeyOverhead = 32

// scopeEnd returns the smallest key after every key pfx<scope>\0...: a
// scope never contains 0x00, so pfx<scope>\x01 sorts right after them and
// before every other scope's keys.
func scopeEnd(pfx, scope string) []byte { return key1(pfx, scope+"\x01") }

// Scopes returns, sorted, the scopes that hold at least one memory item.
func (mem Memory) Scopes(ctx context.Context) ([]string, error) {
	var out []string
	err := mem.d.view(ctx, func(txn *badger.Txn) error {
		out = out[:0]
		p := []byte(pfxMemory)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Seek(scopeEnd(pfxMemory, out[len(out)-1])) {
			if len(out)%allCtxEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			k := it.Item().Key()
			i := bytes.IndexByte(k[len(p):], 0)
			if i <= 0 {
				return fmt.Errorf("memory key %q: %w", k, ErrCorrupt)
			}
			out = append(out, string(k[len(p):len(p)+i]))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list memory scopes: %w", err)
	}
	return out, nil
}

// Count returns the number of memory items in scope.
func (mem Memory) Count(ctx context.Context, scope string) (int, error) {
	if err := validID("scope", scope); err != nil {
		return 0, fmt.Errorf("count memory: %w", err)
	}
	var n int
	err := mem.d.view(ctx, func(txn *badger.Txn) error {
		var err error
		n, err = countKeys(ctx, txn, scopePrefix(pfxMemory, scope))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count memory %s: %w", scope, err)
	}
	return n, nil
}

// All calls fn with every item of scope in key order (by memory_id bytes),
// one at a time, and stops at the first error fn returns, which All
// returns wrapped. The items are one consistent snapshot of the scope taken
// when All starts: fn runs inside a read transaction, and writes made
// meanwhile (by fn or anyone else) are not seen.
func (mem Memory) All(ctx context.Context, scope string, fn func(messages.MemoryItem) error) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("all memory: %w", err)
	}
	err := mem.d.view(ctx, func(txn *badger.Txn) error {
		p := scopePrefix(pfxMemory, scope)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if n%allCtxEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			n++
			item := it.Item()
			var m messages.MemoryItem
			if err := item.Value(func(v []byte) error { return decodeJSON(v, &m) }); err != nil {
				return fmt.Errorf("memory key %q: %w", item.Key(), err)
			}
			if id := string(item.Key()[len(p):]); m.MemoryID != id {
				return fmt.Errorf("memory key %q holds memory_id %q: %w", item.Key(), m.MemoryID, ErrCorrupt)
			}
			if err := fn(m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("all memory %s: %w", scope, err)
	}
	return nil
}

// deletePhases are the key families of a memory scope in the order
// DeleteScope empties them: the indexes first, so that a DeleteScope cut
// short leaves items without index entries (Get finds them, Search and
// Recent do not) rather than index entries pointing at missing items.
var deletePhases = []string{pfxPosting, pfxDocFreq, pfxMemStats, pfxMemoryTime, pfxVector, pfxVectorPending, pfxMemory}

// indexPhases are the key families Reindex rebuilds: everything derived
// from the mem/ records.
var indexPhases = []string{pfxPosting, pfxDocFreq, pfxMemStats, pfxMemoryTime}

// deleteCursor is where the next DeleteScope batch starts: the phase and
// the key after which to resume (nil: the start of the phase).
type deleteCursor struct {
	phase int
	after []byte
}

func (c deleteCursor) done(phases []string) bool { return c.phase == len(phases) }

// DeleteScope deletes every memory item of scope with all its index
// entries, including index entries no item refers to any more. It deletes
// in batches, each its own transaction through the committer, so that a
// scope of any size can be deleted; it is therefore not atomic. When it
// fails or ctx ends midway, part of the scope is gone (see deletePhases);
// calling it again finishes the job. Deleting a scope without memories is
// not an error.
func (mem Memory) DeleteScope(ctx context.Context, scope string) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("delete memory scope: %w", err)
	}
	if err := mem.deleteKeys(ctx, scope, deletePhases); err != nil {
		return fmt.Errorf("delete memory scope %s: %w", scope, err)
	}
	return nil
}

// deleteKeys deletes every key of the families phases of scope, in batches
// (see DeleteScope).
func (mem Memory) deleteKeys(ctx context.Context, scope string, phases []string) error {
	maxKeys := int(min(mem.d.bdb.MaxBatchCount()/4, deleteScopeMaxKeys))
	maxBytes := mem.d.bdb.MaxBatchSize() / 4
	// Sweep until one whole sweep finds nothing, so that items written
	// behind the cursor during a sweep are deleted too.
	cur, swept := deleteCursor{}, 0
	for {
		var (
			next deleteCursor
			n    int
		)
		err := mem.d.updateSized(ctx, maxBytes, func(txn *wtxn) error {
			var err error
			next, n, err = stageScopeDelete(txn, scope, phases, cur, maxKeys, maxBytes)
			return err
		})
		if err != nil {
			return err
		}
		swept += n
		cur = next
		if !cur.done(phases) {
			continue
		}
		if swept == 0 {
			return nil
		}
		cur, swept = deleteCursor{}, 0
	}
}

// stageScopeDelete deletes up to maxKeys keys (about maxBytes) of scope
// from cur on, and returns where the next batch starts and how many keys it
// deleted.
func stageScopeDelete(txn *wtxn, scope string, phases []string, cur deleteCursor, maxKeys int, maxBytes int64) (deleteCursor, int, error) {
	var (
		keys [][]byte
		size int64
	)
	next := deleteCursor{phase: len(phases)}
collect:
	for phase := cur.phase; phase < len(phases); phase++ {
		p := scopePrefix(phases[phase], scope)
		start := p
		if phase == cur.phase && cur.after != nil {
			start = append(bytes.Clone(cur.after), 0) // the key right after
		}
		// A read-write transaction allows one iterator at a time: each is
		// closed before the next opens and before any deletion.
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
		var last []byte // last key taken in this phase
		for it.Seek(start); it.Valid(); it.Next() {
			k := it.Item().Key()
			cost := int64(len(k)) + deleteKeyOverhead
			if len(keys) == maxKeys || (len(keys) > 0 && size+cost > maxBytes) {
				next = deleteCursor{phase: phase, after: last}
				if last == nil && phase == cur.phase {
					next.after = cur.after
				}
				it.Close()
				break collect
			}
			last = it.Item().KeyCopy(nil)
			keys = append(keys, last)
			size += cost
		}
		it.Close()
	}
	for _, k := range keys {
		if err := txn.Delete(k); err != nil {
			return deleteCursor{}, 0, err
		}
	}
	return next, len(keys), nil
}

// reindexBatch is how many items one Reindex transaction indexes.
const reindexBatch = 256

// Reindex rebuilds the keyword index of scope (postings, document
// frequencies, totals) and its recency index from the stored items, so
// that a damaged or outdated index ranks exactly as one maintained write by
// write. It deletes the index, then indexes the items in batches, each its
// own transaction; it is not atomic, and Search may miss items until it
// returns. Run it on a data dir no daemon uses (`silas memory reindex`);
// calling it again after a failure finishes the job.
func (mem Memory) Reindex(ctx context.Context, scope string) (int, error) {
	if err := validID("scope", scope); err != nil {
		return 0, fmt.Errorf("reindex memory: %w", err)
	}
	if err := mem.deleteKeys(ctx, scope, indexPhases); err != nil {
		return 0, fmt.Errorf("reindex memory %s: delete index: %w", scope, err)
	}
	n := 0
	var batch []messages.MemoryItem
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var size int64
		terms := make([]docTerms, len(batch))
		for i := range batch {
			terms[i] = memoryTerms(&batch[i])
			size += memoryKeyOverhead
			for _, t := range terms[i].terms {
				size += int64(2*len(t.term)+len(batch[i].MemoryID)) + postingOverhead
			}
		}
		err := mem.d.updateSized(ctx, size, func(txn *wtxn) error {
			c := newIndexCounts()
			for i := range batch {
				if err := indexMemory(txn, scope, &batch[i], terms[i], c); err != nil {
					return fmt.Errorf("memory %s: %w", batch[i].MemoryID, err)
				}
			}
			return c.apply(txn)
		})
		n += len(batch)
		batch = batch[:0]
		return err
	}
	err := mem.All(ctx, scope, func(m messages.MemoryItem) error {
		batch = append(batch, m)
		if len(batch) < reindexBatch {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return n, fmt.Errorf("reindex memory %s: %w", scope, err)
	}
	return n, nil
}
