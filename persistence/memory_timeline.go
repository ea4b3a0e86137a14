package persistence

import (
	"context"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// TimelineOptions select items of a scope by creation time.
type TimelineOptions struct {
	// From and To bound the creation time, [From, To); a zero From has no
	// lower bound, a zero To no upper bound.
	From, To time.Time
	// Limit caps the items returned; it must be at least 1.
	Limit int
	// IndexedOnly keeps only items the keyword index holds (the active
	// lane with words): the raw low_reingestion lane is never brought back
	// by retrieval on its own (spec 6.1).
	IndexedOnly bool
	// MaxScan caps the recency-index entries read, whatever they hold, so
	// that a window over a long raw history costs a bounded read; 0 means
	// 4 * Limit + 256.
	MaxScan int
}

// Timeline returns items of scope created in [From, To), newest first,
// from the recency index (mt/, keys.go).
func (mem Memory) Timeline(ctx context.Context, scope string, o TimelineOptions) ([]messages.MemoryItem, error) {
	if err := validID("scope", scope); err != nil {
		return nil, fmt.Errorf("memory timeline: %w", err)
	}
	if o.Limit < 1 {
		return nil, fmt.Errorf("memory timeline %s: limit %d: %w", scope, o.Limit, ErrInvalid)
	}
	if o.MaxScan <= 0 {
		o.MaxScan = 4*o.Limit + 256
	}
	var out []messages.MemoryItem
	err := mem.d.view(ctx, func(txn *badger.Txn) error {
		out = out[:0]
		p := scopePrefix(pfxMemoryTime, scope)
		start := prefixEnd(p)
		if !o.To.IsZero() {
			start = memoryTimeKey(scope, o.To.UnixNano(), "") // sorts before every key at To
		}
		var floor []byte
		if !o.From.IsZero() {
			floor = memoryTimeKey(scope, o.From.UnixNano(), "")
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, Reverse: true})
		defer it.Close()
		scanned := 0
		for it.Seek(start); it.Valid() && len(out) < o.Limit && scanned < o.MaxScan; it.Next() {
			k := it.Item().Key()
			if !o.To.IsZero() && string(k) >= string(start) {
				continue // the seek key itself, when an item has exactly To
			}
			if floor != nil && string(k) < string(floor) {
				break
			}
			scanned++
			if len(k) <= len(p)+8 {
				return fmt.Errorf("memory time key %x: %w", k, ErrCorrupt)
			}
			m, err := loadMemory(txn, scope, string(k[len(p)+8:]))
			if err != nil {
				return fmt.Errorf("memory of time key %x: %w", k, err)
			}
			if o.IndexedOnly && !KeywordIndexed(&m) {
				continue
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("memory timeline %s: %w", scope, err)
	}
	return out, nil
}
