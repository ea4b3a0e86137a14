package persistence

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// migration is one forward-only schema step. Versions start at 1 and are
// contiguous. Once released, a migration's version, name and description are
// frozen: they are hashed into its checksum, and a data dir that recorded a
// different checksum for the same version refuses to open.
type migration struct {
	version     uint32
	name        string
	description string
	// apply performs the step inside the migration's transaction; nil means
	// the step only records the schema version.
	apply func(txn *badger.Txn) error
	// batched, when set, performs a step too large for one transaction, in
	// transactions of its own, before apply and the record. It must be
	// idempotent: a crash midway leaves the migration unrecorded, and the
	// next open runs it again from the start.
	batched func(ctx context.Context, bdb *badger.DB) error
}

// checksum is SHA-256 over "<version>\n<name>\n<description>".
func (m migration) checksum() string {
	sum := sha256.Sum256([]byte(strconv.FormatUint(uint64(m.version), 10) + "\n" + m.name + "\n" + m.description))
	return hex.EncodeToString(sum[:])
}

// migrationRecord is what meta/mig/<version> stores.
type migrationRecord struct {
	Version   uint32    `json:"version"`
	Name      string    `json:"name"`
	Checksum  string    `json:"checksum"`
	AppliedAt time.Time `json:"applied_at"`
}

// migrations returns every migration this build knows, in order.
func migrations() []migration {
	return []migration{
		{
			version:     1,
			name:        "schema-version",
			description: "initial key layout (keys.go); record the schema version at meta/version",
		},
		{
			version:     2,
			name:        "memory-index-stemmed",
			description: "rebuild the memory keyword index with English stems, without the low_reingestion lane",
			batched:     reindexMemory,
		},
		{
			version:     3,
			name:        "memory-index-bm25",
			description: "rebuild the memory keyword index with term frequencies, item lengths, document frequencies (mdf/) and scope totals (mst/) for BM25",
			batched:     reindexMemory,
		},
		{
			version:     4,
			name:        "memory-index-newest-first",
			description: "rebuild the memory keyword index with each term's postings keyed newest first (mi/<scope> NUL <term> NUL <newest:8 BE><memory_id>), so that a search reads a bounded number of them",
			batched:     reindexMemory,
		},
	}
}

// reindexMemory rebuilds the keyword index (postings, document
// frequencies, scope totals) from the stored memory items, as the current
// build writes it; migrations 2 to 4 all run it. It deletes the index and
// indexes the items in batches, each its own transaction, so that a data
// dir of any size migrates; the index is derived, so a run cut short is
// simply run again.
func reindexMemory(ctx context.Context, bdb *badger.DB) error {
	for _, pfx := range []string{pfxPosting, pfxDocFreq, pfxMemStats} {
		if err := deleteBatched(ctx, bdb, []byte(pfx)); err != nil {
			return fmt.Errorf("reindex memory: %w", err)
		}
	}
	var after []byte // the last item key indexed
	for batch := reindexBatch; ; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reindex memory: %w", err)
		}
		type scoped struct {
			scope string
			item  messages.MemoryItem
		}
		var items []scoped
		var last []byte
		err := bdb.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(pfxMemory), PrefetchValues: true, PrefetchSize: batch})
			defer it.Close()
			start := []byte(pfxMemory)
			if after != nil {
				start = append(bytes.Clone(after), 0) // the key right after
			}
			for it.Seek(start); it.Valid() && len(items) < batch; it.Next() {
				key := it.Item().Key()
				scope, _, ok := bytes.Cut(key[len(pfxMemory):], []byte{0})
				if !ok {
					return fmt.Errorf("key %q: %w", key, ErrCorrupt)
				}
				var m messages.MemoryItem
				if err := it.Item().Value(func(v []byte) error { return decodeJSON(v, &m) }); err != nil {
					return fmt.Errorf("%q: %w", key, err)
				}
				items = append(items, scoped{scope: string(scope), item: m})
				last = it.Item().KeyCopy(nil)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("reindex memory: %w", err)
		}
		if len(items) == 0 {
			return nil
		}
		err = bdb.Update(func(txn *badger.Txn) error {
			c := newIndexCounts()
			for i := range items {
				m := &items[i].item
				if err := indexMemory(txn, items[i].scope, m, memoryTerms(m), c); err != nil {
					return fmt.Errorf("%s/%s: %w", items[i].scope, m.MemoryID, err)
				}
			}
			return c.apply(txn)
		})
		switch {
		case errors.Is(err, badger.ErrTxnTooBig) && batch > 1:
			batch /= 2 // items with many terms: take fewer at once
			continue
		case err != nil:
			return fmt.Errorf("reindex memory: %w", err)
		}
		after = last
	}
}

// deleteBatched deletes every key under prefix, in transactions of at most
// deleteScopeMaxKeys keys.
func deleteBatched(ctx context.Context, bdb *badger.DB, prefix []byte) error {
	for batch := deleteScopeMaxKeys; ; {
		if err := ctx.Err(); err != nil {
			return err
		}
		var keys [][]byte
		err := bdb.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
			defer it.Close()
			for it.Rewind(); it.Valid() && len(keys) < batch; it.Next() {
				keys = append(keys, it.Item().KeyCopy(nil))
			}
			return nil
		})
		if err != nil || len(keys) == 0 {
			return err
		}
		err = bdb.Update(func(txn *badger.Txn) error {
			for _, k := range keys {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		switch {
		case errors.Is(err, badger.ErrTxnTooBig) && batch > 1:
			batch /= 2
		case err != nil:
			return fmt.Errorf("delete %q: %w", prefix, err)
		}
	}
}

// migrate checks the recorded migrations against ms and applies the missing
// ones in order, each in its own transaction together with its record and
// the new meta/version.
func migrate(ctx context.Context, bdb *badger.DB, ms []migration) error {
	for i, m := range ms {
		if m.version != uint32(i+1) {
			return fmt.Errorf("migration list: entry %d has version %d, want %d: %w", i, m.version, i+1, ErrInvalid)
		}
	}
	applied, err := appliedMigrations(bdb)
	if err != nil {
		return err
	}
	for v, rec := range applied {
		if int(v) > len(ms) {
			return fmt.Errorf("data dir has migration %d (%s), this silas knows %d: %w", v, rec.Name, len(ms), ErrSchemaTooNew)
		}
		if want := ms[v-1].checksum(); rec.Checksum != want {
			return fmt.Errorf("migration %d (%s): recorded checksum %s, this silas has %s: %w", v, rec.Name, rec.Checksum, want, ErrSchemaMismatch)
		}
	}
	for _, m := range ms {
		if _, ok := applied[m.version]; ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("migration %d: %w", m.version, err)
		}
		if err := applyMigration(ctx, bdb, m); err != nil {
			return err
		}
	}
	return nil
}

// appliedMigrations reads the recorded migrations and the schema version.
func appliedMigrations(bdb *badger.DB) (map[uint32]migrationRecord, error) {
	applied := map[uint32]migrationRecord{}
	err := bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(pfxMigration), PrefetchValues: true, PrefetchSize: 16})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var rec migrationRecord
			if err := it.Item().Value(func(v []byte) error { return decodeJSON(v, &rec) }); err != nil {
				return fmt.Errorf("read migration record %q: %w", it.Item().Key(), err)
			}
			if rec.Version == 0 {
				return fmt.Errorf("migration record %q has version 0: %w", it.Item().Key(), ErrCorrupt)
			}
			applied[rec.Version] = rec
		}
		return getValue(txn, []byte(keySchemaVersion), func(v []byte) error {
			if len(v) != 4 {
				return fmt.Errorf("schema version value has %d bytes: %w", len(v), ErrCorrupt)
			}
			// A schema version beyond every recorded migration means a newer
			// build wrote it; surface it as an unknown migration.
			if sv := binary.BigEndian.Uint32(v); sv > 0 {
				if _, ok := applied[sv]; !ok {
					applied[sv] = migrationRecord{Version: sv, Name: "unrecorded"}
				}
			}
			return nil
		})
	})
	if errors.Is(err, ErrNotFound) {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("read applied migrations: %w", err)
	}
	return applied, nil
}

func applyMigration(ctx context.Context, bdb *badger.DB, m migration) error {
	rec, err := encodeJSON(migrationRecord{Version: m.version, Name: m.name, Checksum: m.checksum(), AppliedAt: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("migration %d: %w", m.version, err)
	}
	if m.batched != nil {
		if err := m.batched(ctx, bdb); err != nil {
			return fmt.Errorf("apply migration %d (%s): %w", m.version, m.name, err)
		}
	}
	err = bdb.Update(func(txn *badger.Txn) error {
		if m.apply != nil {
			if err := m.apply(txn); err != nil {
				return err
			}
		}
		if err := txn.Set(migrationKey(m.version), rec); err != nil {
			return err
		}
		return txn.Set([]byte(keySchemaVersion), binary.BigEndian.AppendUint32(nil, m.version))
	})
	if err != nil {
		return fmt.Errorf("apply migration %d (%s): %w", m.version, m.name, err)
	}
	return nil
}

// SchemaVersion is the schema version this build writes: the number of its
// migrations. Memory bundles record it (spec 6.5).
func SchemaVersion() uint32 { return uint32(len(migrations())) }
