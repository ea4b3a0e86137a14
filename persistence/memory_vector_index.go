package persistence

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	chromem "github.com/philippgille/chromem-go"

	"github.com/silas-ai/silas/messages"
)

// VectorIndex answers nearest-neighbour queries over the memory vectors
// (memory_vectors.go), with one in-memory collection per scope of
// github.com/philippgille/chromem-go: a maintained, dependency-free Go
// vector store whose queries are exact (every vector of the scope is
// compared, on all cores), so semantic search never misses the nearest
// memory. Exact search of 10,000 vectors of 384 dimensions takes about
// 5 ms on two busy cores, 1,000 about 0.5 ms (BenchmarkVectorSearch), well
// within a turn that waits seconds for its model; a scope's memory is that
// of one owner or one customer. (github.com/coder/hnsw
// v0.6.1, the HNSW library the module proxy serves, was measured first
// and dropped: its search keeps its result heap wrong, Heap.Max returns
// the last slot rather than the largest, so its recall@10 on 10,000
// clustered vectors was 0.3 to 0.6 whatever ef, and its deletion has open
// crash reports whose fixes are unreleased.)
//
// A scope's collection is built from its vectors in Badger the first time
// the scope is searched after a start, and kept up to date by Add as the
// vector writer stores vectors; collections of the scopes searched least
// recently are dropped when the vectors held exceed the memory budget, and
// built again when needed. Badger stays the record: every hit is checked
// against the stored vector before it is returned, so a vector whose item
// was deleted or rewritten since is never answered, only skipped and
// forgotten.
//
// It is safe for concurrent use.
type VectorIndex struct {
	mem      Memory
	maxBytes int64
	ready    atomic.Bool
	db       *chromem.DB

	mu     sync.Mutex
	scopes map[string]*scopeVectors
	tick   uint64
}

// DefaultVectorIndexBytes is the memory budget of a VectorIndex when
// VectorIndexOptions.MaxBytes is 0: about 150,000 vectors of 384
// dimensions.
const DefaultVectorIndexBytes = 256 << 20

// vectorOverhead estimates a vector's memory besides its floats: the
// collection's document and map entry, and the index's own entry.
const vectorOverhead = 256

// VectorIndexOptions configures a VectorIndex.
type VectorIndexOptions struct {
	// MaxBytes is the memory budget of the collections held; 0 means
	// DefaultVectorIndexBytes.
	MaxBytes int64
}

// NewVectorIndex returns an empty index over db's memory vectors. It is
// not ready (Ready) until SetReady: the owner calls that once the stored
// vectors are known to be the current model's (Memory.SyncVectorModel).
func NewVectorIndex(db *DB, o VectorIndexOptions) *VectorIndex {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultVectorIndexBytes
	}
	return &VectorIndex{mem: db.Memory(), maxBytes: o.MaxBytes, db: chromem.NewDB(), scopes: make(map[string]*scopeVectors)}
}

// SetReady marks the stored vectors as the current model's: searches may
// run. Before, Search returns nothing.
func (x *VectorIndex) SetReady() { x.ready.Store(true) }

// Ready reports whether SetReady was called.
func (x *VectorIndex) Ready() bool { return x.ready.Load() }

// scopeVectors is the collection of one scope, with the text hash of each
// vector it holds (the check against Badger compares them).
type scopeVectors struct {
	mu      sync.RWMutex
	loaded  bool
	err     error
	coll    *chromem.Collection
	hashes  map[string][8]byte
	dims    int
	lastUse atomic.Uint64
	bytes   atomic.Int64
}

// errTextQuery answers a query by text, which this index never makes: the
// retriever embeds the query itself, with the configured model.
var errTextQuery = errors.New("memory vector index: queries are by vector only")

func noTextQueries(context.Context, string) ([]float32, error) { return nil, errTextQuery }

// VectorHit is one nearest neighbour: the item, verified against Badger,
// and its cosine similarity to the query.
type VectorHit struct {
	Item       messages.MemoryItem
	Similarity float64
}

// Search returns up to k items of scope whose vectors are nearest to q
// (a unit vector of the current model) with a cosine similarity of at
// least minSimilarity, nearest first; equal similarities put the lower
// memory id first. An index that is not Ready, or a scope without
// vectors, returns nothing.
func (x *VectorIndex) Search(ctx context.Context, scope string, q []float32, k int, minSimilarity float64) ([]VectorHit, error) {
	if err := validID("scope", scope); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	if k <= 0 || !x.Ready() {
		return nil, nil
	}
	sv, err := x.scope(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("vector search %s: %w", scope, err)
	}
	cands, err := sv.nearest(ctx, q, k)
	if err != nil {
		return nil, fmt.Errorf("vector search %s: %w", scope, err)
	}
	var hits []VectorHit
	var stale []string
	err = x.mem.d.view(ctx, func(txn *badger.Txn) error {
		hits, stale = hits[:0], stale[:0]
		for _, c := range cands {
			if c.sim < minSimilarity {
				break // nearest first
			}
			cur, err := readVectorHash(txn, scope, c.id)
			if errors.Is(err, ErrNotFound) || (err == nil && cur != c.hash) {
				stale = append(stale, c.id)
				continue
			}
			if err != nil {
				return err
			}
			m, err := loadMemory(txn, scope, c.id)
			if errors.Is(err, ErrNotFound) {
				stale = append(stale, c.id)
				continue
			}
			if err != nil {
				return err
			}
			hits = append(hits, VectorHit{Item: m, Similarity: c.sim})
			if len(hits) == k {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vector search %s: %w", scope, err)
	}
	if len(stale) > 0 {
		sv.forget(ctx, stale)
	}
	return hits, nil
}

// readVectorHash reads the text hash of id's stored vector.
func readVectorHash(txn *badger.Txn, scope, id string) (h [8]byte, err error) {
	err = getValue(txn, key2(pfxVector, scope, id), func(v []byte) error {
		if len(v) < vectorHeader || v[0] != vectorCodec1 {
			return fmt.Errorf("vector %s/%s: %w", scope, id, ErrCorrupt)
		}
		copy(h[:], v[1:9])
		return nil
	})
	return h, err
}

// Add puts stored vectors (as PutVectors returned them) into the
// collections of their scopes, when those are in memory; a scope not in
// memory reads them from Badger when it is next searched.
func (x *VectorIndex) Add(ctx context.Context, vs []Vector) {
	byScope := make(map[string][]Vector)
	for _, v := range vs {
		byScope[v.Scope] = append(byScope[v.Scope], v)
	}
	for scope, list := range byScope {
		x.mu.Lock()
		sv := x.scopes[scope]
		x.mu.Unlock()
		if sv == nil {
			continue
		}
		sv.mu.Lock()
		if sv.loaded {
			for _, v := range list {
				sv.add(ctx, v.MemoryID, textHash(v.Text), v.Values)
			}
		}
		sv.mu.Unlock()
		x.account(sv)
	}
}

// Len returns how many vectors the collections in memory hold.
func (x *VectorIndex) Len() int {
	x.mu.Lock()
	all := make([]*scopeVectors, 0, len(x.scopes))
	for _, sv := range x.scopes {
		all = append(all, sv)
	}
	x.mu.Unlock()
	n := 0
	for _, sv := range all {
		sv.mu.RLock()
		n += len(sv.hashes)
		sv.mu.RUnlock()
	}
	return n
}

// scope returns scope's collection, building it from Badger if it is not
// in memory. Concurrent callers of one scope wait for one build.
func (x *VectorIndex) scope(ctx context.Context, scope string) (*scopeVectors, error) {
	x.mu.Lock()
	x.tick++
	sv := x.scopes[scope]
	if sv != nil {
		sv.lastUse.Store(x.tick)
		x.mu.Unlock()
		sv.mu.RLock() // waits while another caller builds it
		err := sv.err
		sv.mu.RUnlock()
		return sv, err
	}
	coll, err := x.db.GetOrCreateCollection(scope, nil, noTextQueries)
	if err != nil {
		x.mu.Unlock()
		return nil, fmt.Errorf("vector collection: %w", err)
	}
	sv = &scopeVectors{coll: coll, hashes: make(map[string][8]byte)}
	sv.lastUse.Store(x.tick)
	sv.mu.Lock() // before it is visible, so that Add and other searches wait
	x.scopes[scope] = sv
	x.mu.Unlock()

	err = sv.build(ctx, x.mem, scope)
	if err != nil {
		sv.err = err
		sv.mu.Unlock()
		x.drop(scope, sv) // the next search tries again
		return nil, err
	}
	sv.mu.Unlock()
	x.account(sv)
	return sv, nil
}

// drop forgets scope's collection if it is still sv.
func (x *VectorIndex) drop(scope string, sv *scopeVectors) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.scopes[scope] == sv {
		delete(x.scopes, scope)
		_ = x.db.DeleteCollection(scope) // in memory only: it cannot fail
	}
}

// account drops the least recently searched collections other than keep
// while the budget is exceeded.
func (x *VectorIndex) account(keep *scopeVectors) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var total int64
	type entry struct {
		scope string
		sv    *scopeVectors
	}
	var all []entry
	for s, sv := range x.scopes {
		total += sv.bytes.Load()
		all = append(all, entry{s, sv})
	}
	if total <= x.maxBytes {
		return
	}
	slices.SortFunc(all, func(a, b entry) int { return cmp.Compare(a.sv.lastUse.Load(), b.sv.lastUse.Load()) })
	for _, e := range all {
		if total <= x.maxBytes {
			return
		}
		if e.sv == keep {
			continue
		}
		delete(x.scopes, e.scope)
		_ = x.db.DeleteCollection(e.scope)
		total -= e.sv.bytes.Load()
	}
}

// build reads scope's vectors into the collection; sv.mu is held.
func (sv *scopeVectors) build(ctx context.Context, mem Memory, scope string) error {
	err := mem.scopeVectors(ctx, scope, func(v storedVector) error {
		if sv.dims == 0 {
			sv.dims = len(v.values)
		}
		if len(v.values) != sv.dims {
			// Only a model change mixes sizes, and SyncVectorModel deletes
			// every vector then: skip the odd one, its item is embedded
			// again.
			return nil
		}
		return sv.put(ctx, v.id, v.hash, v.values)
	})
	if err != nil {
		return err
	}
	sv.loaded = true
	return nil
}

// add puts one vector in, replacing id's older one; sv.mu is held.
func (sv *scopeVectors) add(ctx context.Context, id string, hash [8]byte, v []float32) {
	if old, ok := sv.hashes[id]; ok && old == hash {
		return
	}
	if sv.dims == 0 {
		sv.dims = len(v)
	}
	if len(v) != sv.dims {
		return
	}
	// The collection holds the values: a copy, so that no caller's slice
	// is shared with it.
	_ = sv.put(ctx, id, hash, slices.Clone(v)) // fails only on an empty vector, which PutVectors refuses
}

// put adds one vector to the collection and counts it; sv.mu is held.
func (sv *scopeVectors) put(ctx context.Context, id string, hash [8]byte, v []float32) error {
	if err := sv.coll.AddDocument(ctx, chromem.Document{ID: id, Embedding: v}); err != nil {
		return fmt.Errorf("vector %s: %w", id, err)
	}
	if _, ok := sv.hashes[id]; !ok {
		sv.bytes.Add(int64(4*len(v) + vectorOverhead))
	}
	sv.hashes[id] = hash
	return nil
}

// forget removes vectors found stale.
func (sv *scopeVectors) forget(ctx context.Context, ids []string) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	var gone []string
	for _, id := range ids {
		if _, ok := sv.hashes[id]; ok {
			delete(sv.hashes, id)
			sv.bytes.Add(-int64(4*sv.dims + vectorOverhead))
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		_ = sv.coll.Delete(ctx, nil, nil, gone...) // deleting by id cannot fail
	}
}

// candidate is one neighbour before it is checked against Badger.
type candidate struct {
	id   string
	hash [8]byte
	sim  float64
}

// nearest returns the vectors nearest to q, nearest first: k of them, and
// a few more to make up for those the check against Badger drops.
func (sv *scopeVectors) nearest(ctx context.Context, q []float32, k int) ([]candidate, error) {
	sv.mu.RLock()
	defer sv.mu.RUnlock()
	n := min(k+k/2+2, len(sv.hashes))
	if n == 0 {
		return nil, nil
	}
	if len(q) != sv.dims {
		return nil, fmt.Errorf("query vector has %d dimensions, the stored vectors %d: %w", len(q), sv.dims, ErrInvalid)
	}
	res, err := sv.coll.QueryEmbedding(ctx, q, n, nil, nil)
	if err != nil {
		return nil, err
	}
	out := make([]candidate, 0, len(res))
	for _, r := range res {
		out = append(out, candidate{id: r.ID, hash: sv.hashes[r.ID], sim: float64(r.Similarity)})
	}
	slices.SortFunc(out, func(a, b candidate) int { return cmp.Or(cmp.Compare(b.sim, a.sim), cmp.Compare(a.id, b.id)) })
	return out, nil
}
