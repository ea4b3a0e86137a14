package persistence

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// Memory vectors (spec 6.1-6.2): the embedding of each memory item that
// semantic search can find, stored next to the item and derived from it.
//
//	mv/<scope>\0<id>   the vector: 0x01, sha256 of the embedded text (first
//	                   8 bytes), dims (2 BE), dims float32 (little-endian bits)
//	mvp/<scope>\0<id>  the item waits for a vector (empty value)
//	meta/vectors       the embedding model the mv/ vectors were made with
//
// Storing an item never waits for a model: the item's own transaction
// deletes its old vector when the embedded text changed and marks it
// pending (stageVectorPut), and the vector writer (actors) embeds pending
// items off the turn and stores their vectors with PutVectors, which
// checks the item still has the text that was embedded. A pending mark
// survives restarts, so a vector missing for any reason (the provider was
// down, the daemon stopped, the items were imported, the model changed) is
// filled in later. Deleting an item deletes both keys.
//
// The searchable index over these vectors lives in memory
// (VectorIndex, memory_vector_index.go) and is rebuilt from them.

// vectorCodec1 is the version byte of a vector value.
const vectorCodec1 = 0x01

// vectorHeader is the size of a vector value before its floats.
const vectorHeader = 1 + 8 + 2

// maxVectorDims bounds the size of a stored vector (the largest common
// embedding models have 3,072 dimensions).
const maxVectorDims = 8192

// Embeddable reports whether m gets an embedding: an active-lane item
// whose content has words. The raw low_reingestion lane is never embedded
// for the reason it is never keyword-indexed (memoryTerms): it is never
// auto-injected, and embedding every message of every turn would cost a
// model call per message. Every embeddable item is also keyword-indexed
// (KeywordIndexed), so a scope without keyword-indexed items has no
// vectors either.
func Embeddable(m *messages.MemoryItem) bool {
	return m.ReingestionTier != messages.TierLowReingestion && len(tokens(m.Content)) > 0
}

// EmbedText is the text of m that is embedded: its content. Tags are left
// out: they are labels such as "context_evicted", which say how an item
// came to be, not what it is about, and keyword search reads them already.
func EmbedText(m *messages.MemoryItem) string { return m.Content }

// textHash identifies an embedded text.
func textHash(s string) (h [8]byte) {
	sum := sha256.Sum256([]byte(s))
	copy(h[:], sum[:8])
	return h
}

// encodeVector builds a vector value.
func encodeVector(hash [8]byte, v []float32) ([]byte, error) {
	if len(v) == 0 || len(v) > maxVectorDims {
		return nil, fmt.Errorf("vector of %d dimensions, want 1 to %d: %w", len(v), maxVectorDims, ErrInvalid)
	}
	out := make([]byte, vectorHeader, vectorHeader+4*len(v))
	out[0] = vectorCodec1
	copy(out[1:9], hash[:])
	binary.BigEndian.PutUint16(out[9:], uint16(len(v)))
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("vector holds %v: %w", f, ErrInvalid)
		}
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(f))
	}
	return out, nil
}

// decodeVector reads a vector value.
func decodeVector(b []byte) (hash [8]byte, v []float32, err error) {
	if len(b) < vectorHeader || b[0] != vectorCodec1 {
		return hash, nil, fmt.Errorf("vector value of %d bytes: unknown encoding: %w", len(b), ErrCorrupt)
	}
	copy(hash[:], b[1:9])
	dims := int(binary.BigEndian.Uint16(b[9:]))
	if dims == 0 || len(b) != vectorHeader+4*dims {
		return hash, nil, fmt.Errorf("vector value of %d bytes for %d dimensions: %w", len(b), dims, ErrCorrupt)
	}
	v = make([]float32, dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[vectorHeader+4*i:]))
	}
	return hash, v, nil
}

// stageVectorPut keeps m's vector keys right as m is written over old
// (nil when m is new): a changed embedded text drops the vector and marks
// the item pending; an unchanged one keeps both as they are; an item that
// is no longer embeddable loses both.
func stageVectorPut(txn kv, scope string, old, m *messages.MemoryItem) error {
	if !Embeddable(m) {
		if old == nil {
			return nil
		}
		return stageVectorDelete(txn, scope, m.MemoryID)
	}
	if old != nil && Embeddable(old) && EmbedText(old) == EmbedText(m) {
		return nil
	}
	if old != nil {
		if err := txn.Delete(key2(pfxVector, scope, m.MemoryID)); err != nil {
			return err
		}
	}
	return txn.Set(key2(pfxVectorPending, scope, m.MemoryID), nil)
}

// stageVectorDelete deletes id's vector and pending mark.
func stageVectorDelete(txn kv, scope, id string) error {
	if err := txn.Delete(key2(pfxVector, scope, id)); err != nil {
		return err
	}
	return txn.Delete(key2(pfxVectorPending, scope, id))
}

// PendingVector is an item waiting for its embedding.
type PendingVector struct {
	Scope, MemoryID string
	// Text is what to embed; empty when Gone.
	Text string
	// Gone is true when the item no longer exists or no longer needs a
	// vector: PutVectors only clears its mark.
	Gone bool
}

// PendingVectors returns up to limit items waiting for an embedding, in
// key order, from every scope; the vector writer embeds them and stores
// the vectors with PutVectors.
func (mem Memory) PendingVectors(ctx context.Context, limit int) ([]PendingVector, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []PendingVector
	err := mem.d.view(ctx, func(txn *badger.Txn) error {
		out = out[:0]
		p := []byte(pfxVectorPending)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
		defer it.Close()
		for it.Rewind(); it.Valid() && len(out) < limit; it.Next() {
			scope, id, err := splitScopeKey(it.Item().Key(), len(p))
			if err != nil {
				return err
			}
			m, err := loadMemory(txn, scope, id)
			switch {
			case errors.Is(err, ErrNotFound):
				out = append(out, PendingVector{Scope: scope, MemoryID: id, Gone: true})
				continue
			case err != nil:
				return fmt.Errorf("memory %s/%s: %w", scope, id, err)
			}
			pv := PendingVector{Scope: scope, MemoryID: id, Text: EmbedText(&m), Gone: !Embeddable(&m)}
			if pv.Gone {
				pv.Text = ""
			}
			out = append(out, pv)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pending memory vectors: %w", err)
	}
	return out, nil
}

// splitScopeKey splits pfx<scope>\0<id> after a prefix of n bytes.
func splitScopeKey(k []byte, n int) (scope, id string, err error) {
	i := bytes.IndexByte(k[n:], 0)
	if i <= 0 || n+i+1 >= len(k) {
		return "", "", fmt.Errorf("key %q: %w", k, ErrCorrupt)
	}
	return string(k[n : n+i]), string(k[n+i+1:]), nil
}

// Vector is one item's embedding.
type Vector struct {
	Scope, MemoryID string
	// Text is the text that was embedded; the vector is stored only if
	// the item still has it.
	Text   string
	Values []float32
}

// PutVectors stores the vectors of items that still hold the text that was
// embedded, and clears their pending marks; a vector with no Values clears
// the mark of an item that is gone or no longer embeddable (a PendingVector
// marked Gone), or that the provider would never embed. A vector whose item
// changed meanwhile is dropped: the change marked the item pending again.
// It returns the vectors stored, for the in-memory index.
func (mem Memory) PutVectors(ctx context.Context, vs []Vector) ([]Vector, error) {
	var size int64
	vals := make([][]byte, len(vs))
	for i := range vs {
		if err := validID("scope", vs[i].Scope); err != nil {
			return nil, fmt.Errorf("put memory vectors: %w", err)
		}
		if err := validID("memory_id", vs[i].MemoryID); err != nil {
			return nil, fmt.Errorf("put memory vectors: %w", err)
		}
		if len(vs[i].Values) > 0 {
			v, err := encodeVector(textHash(vs[i].Text), vs[i].Values)
			if err != nil {
				return nil, fmt.Errorf("put memory vector %s/%s: %w", vs[i].Scope, vs[i].MemoryID, err)
			}
			vals[i] = v
		}
		size += int64(len(vals[i])+2*len(vs[i].Scope)+2*len(vs[i].MemoryID)) + memoryKeyOverhead
	}
	var stored []Vector
	err := mem.d.updateSized(ctx, size, func(txn *wtxn) error {
		stored = stored[:0]
		for i := range vs {
			v := &vs[i]
			pending := key2(pfxVectorPending, v.Scope, v.MemoryID)
			m, err := loadMemory(txn, v.Scope, v.MemoryID)
			switch {
			case errors.Is(err, ErrNotFound):
				if err := txn.Delete(pending); err != nil {
					return err
				}
				continue
			case err != nil:
				return fmt.Errorf("memory %s/%s: %w", v.Scope, v.MemoryID, err)
			}
			if vals[i] == nil || !Embeddable(&m) {
				if err := txn.Delete(pending); err != nil {
					return err
				}
				continue
			}
			if EmbedText(&m) != v.Text {
				continue
			}
			if err := txn.Set(key2(pfxVector, v.Scope, v.MemoryID), vals[i]); err != nil {
				return err
			}
			if err := txn.Delete(pending); err != nil {
				return err
			}
			stored = append(stored, *v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("put memory vectors: %w", err)
	}
	return stored, nil
}

// storedVector is one vector as the index reads it.
type storedVector struct {
	id     string
	hash   [8]byte
	values []float32
}

// scopeVectors calls fn for every vector of scope, in key order.
func (mem Memory) scopeVectors(ctx context.Context, scope string, fn func(storedVector) error) error {
	return mem.d.view(ctx, func(txn *badger.Txn) error {
		p := scopePrefix(pfxVector, scope)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
		defer it.Close()
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if n++; n%allCtxEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			k := it.Item().Key()
			var sv storedVector
			err := it.Item().Value(func(v []byte) error {
				var err error
				sv.hash, sv.values, err = decodeVector(v)
				return err
			})
			if err != nil {
				return fmt.Errorf("vector %q: %w", k, err)
			}
			sv.id = string(k[len(p):])
			if err := fn(sv); err != nil {
				return err
			}
		}
		return nil
	})
}

// VectorModel returns the embedding model the stored vectors were made
// with, or "" when none was recorded.
func (mem Memory) VectorModel(ctx context.Context) (string, error) {
	var model string
	err := mem.d.view(ctx, func(txn *badger.Txn) error {
		return getValue(txn, []byte(keyVectorModel), func(v []byte) error {
			model = string(v)
			return nil
		})
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("memory vector model: %w", err)
	}
	return model, nil
}

// vectorBatch is how many keys one SyncVectorModel transaction writes.
const vectorBatch = 1024

// SyncVectorModel makes the stored vectors those of model: when the
// recorded model differs (or none is recorded: the vectors predate this
// record, or no vector was ever made), every stored vector is deleted,
// every embeddable item of every scope is marked pending, and model is
// recorded, so that the vector writer embeds everything again with the
// current model. Vectors of two models are never compared. It runs in
// batches and is not atomic; model is recorded last, so a run cut short
// runs again at the next start. It reports whether it reset anything.
// Items written while it runs mark themselves.
func (mem Memory) SyncVectorModel(ctx context.Context, model string) (bool, error) {
	if strings.TrimSpace(model) == "" {
		return false, fmt.Errorf("sync memory vectors: empty model: %w", ErrInvalid)
	}
	cur, err := mem.VectorModel(ctx)
	if err != nil || cur == model {
		return false, err
	}
	if err := mem.deletePrefix(ctx, []byte(pfxVector)); err != nil {
		return false, fmt.Errorf("sync memory vectors to %s: %w", model, err)
	}
	scopes, err := mem.Scopes(ctx)
	if err != nil {
		return false, fmt.Errorf("sync memory vectors to %s: %w", model, err)
	}
	for _, scope := range scopes {
		var ids []string
		flush := func() error {
			if len(ids) == 0 {
				return nil
			}
			err := mem.d.updateSized(ctx, int64(len(ids))*(memoryKeyOverhead+int64(len(scope))), func(txn *wtxn) error {
				for _, id := range ids {
					if err := txn.Set(key2(pfxVectorPending, scope, id), nil); err != nil {
						return err
					}
				}
				return nil
			})
			ids = ids[:0]
			return err
		}
		err := mem.All(ctx, scope, func(m messages.MemoryItem) error {
			if !Embeddable(&m) {
				return nil
			}
			ids = append(ids, m.MemoryID)
			if len(ids) < vectorBatch {
				return nil
			}
			return flush()
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return false, fmt.Errorf("sync memory vectors to %s: mark %s: %w", model, scope, err)
		}
	}
	err = mem.d.update(ctx, func(txn *wtxn) error { return txn.Set([]byte(keyVectorModel), []byte(model)) })
	if err != nil {
		return false, fmt.Errorf("sync memory vectors to %s: %w", model, err)
	}
	return true, nil
}

// deletePrefix deletes every key under p, in batches.
func (mem Memory) deletePrefix(ctx context.Context, p []byte) error {
	for {
		var n int
		err := mem.d.updateSized(ctx, vectorBatch*memoryKeyOverhead, func(txn *wtxn) error {
			var keys [][]byte
			it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: false})
			for it.Rewind(); it.Valid() && len(keys) < vectorBatch; it.Next() {
				keys = append(keys, it.Item().KeyCopy(nil))
			}
			it.Close()
			n = len(keys)
			for _, k := range keys {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n < vectorBatch {
			return nil
		}
	}
}
