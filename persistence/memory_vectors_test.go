package persistence

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/messages"
)

// embedPending does the vector writer's job with the mock's embedding:
// every pending item gets its vector, and the index hears of it.
func embedPending(t *testing.T, db *DB, x *VectorIndex) int {
	t.Helper()
	n := 0
	for {
		pend, err := db.Memory().PendingVectors(t.Context(), 16)
		if err != nil {
			t.Fatal(err)
		}
		if len(pend) == 0 {
			return n
		}
		vs := make([]Vector, len(pend))
		for i, p := range pend {
			vs[i] = Vector{Scope: p.Scope, MemoryID: p.MemoryID, Text: p.Text}
			if !p.Gone {
				vs[i].Values = mockllm.Embedding(p.Text, 64)
			}
		}
		stored, err := db.Memory().PutVectors(t.Context(), vs)
		if err != nil {
			t.Fatal(err)
		}
		if x != nil {
			x.Add(t.Context(), stored)
		}
		n += len(stored)
	}
}

func semanticSearch(t *testing.T, x *VectorIndex, scope, query string, k int) []string {
	t.Helper()
	hits, err := x.Search(t.Context(), scope, mockllm.Embedding(query, 64), k, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.Item.MemoryID)
	}
	return ids
}

func newIndex(db *DB) *VectorIndex {
	x := NewVectorIndex(db, VectorIndexOptions{})
	x.SetReady()
	return x
}

func rawItem(id, content string) messages.MemoryItem {
	m := memItem(id, content, time.Now().UTC())
	m.ReingestionTier = messages.TierLowReingestion
	m.MemoryType = messages.MemoryEpisode
	m.SourceKind = messages.SourceConversationRaw
	return m
}

func pendingIDs2(t *testing.T, db *DB) []string {
	t.Helper()
	pend, err := db.Memory().PendingVectors(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pend {
		out = append(out, p.Scope+"/"+p.MemoryID)
	}
	return out
}

func hasVector(t *testing.T, db *DB, scope, id string) bool {
	t.Helper()
	err := db.view(t.Context(), func(txn *badger.Txn) error {
		_, err := readVectorHash(txn, scope, id)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// A fact stored in other words is found by meaning, in its own scope only,
// and a keyword search misses it.
func TestVectorSearchFindsByMeaning(t *testing.T) {
	h := newHarness(t, false)
	ctx := t.Context()
	now := time.Now().UTC()
	mem := h.db.Memory()
	if err := mem.Put(ctx, "s1",
		memItem("car", "My car is a red Volvo.", now),
		memItem("tea", "I like green tea in the morning.", now),
		rawItem("raw", "my car is a volvo, the raw lane"),
	); err != nil {
		t.Fatal(err)
	}
	if err := mem.Put(ctx, "s2", memItem("other-car", "My car is a red Volvo.", now)); err != nil {
		t.Fatal(err)
	}
	if got := pendingIDs2(t, h.db); !slices.Equal(got, []string{"s1/car", "s1/tea", "s2/other-car"}) {
		t.Fatalf("pending = %v (the raw lane is never embedded)", got)
	}
	x := newIndex(h.db)
	if n := embedPending(t, h.db, x); n != 3 {
		t.Fatalf("embedded %d", n)
	}
	if got := pendingIDs2(t, h.db); len(got) != 0 {
		t.Fatalf("still pending: %v", got)
	}
	const q = "What vehicle do I drive?"
	kw, err := mem.Search(ctx, "s1", q, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range kw {
		if s.Item.MemoryID == "car" {
			t.Fatal("keyword search found the car; the test needs a query sharing no word with it")
		}
	}
	if got := semanticSearch(t, x, "s1", q, 5); !slices.Equal(got, []string{"car"}) {
		t.Fatalf("semantic search = %v, want [car] (tea is below the similarity floor)", got)
	}
	if got := semanticSearch(t, x, "s3", q, 5); len(got) != 0 {
		t.Fatalf("an empty scope answered %v", got)
	}
	// Not ready: nothing (the vectors may be another model's).
	if hits, err := NewVectorIndex(h.db, VectorIndexOptions{}).Search(ctx, "s1", mockllm.Embedding(q, 64), 5, 0); err != nil || len(hits) != 0 {
		t.Fatalf("an index that is not ready answered %v %v", hits, err)
	}
	// A query of another size is refused, not a panic.
	if _, err := x.Search(ctx, "s1", mockllm.Embedding(q, 32), 5, 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("query of 32 dims: %v", err)
	}
}

// Rewriting an item's content drops its vector at once and marks it again;
// a vector of the old text arriving late is not stored; deleting removes
// both keys; a change that keeps the text keeps the vector.
func TestVectorsFollowTheirItems(t *testing.T) {
	h := newHarness(t, false)
	ctx := t.Context()
	mem := h.db.Memory()
	now := time.Now().UTC()
	car := memItem("car", "My car is a red Volvo.", now)
	if err := mem.Put(ctx, "s", car); err != nil {
		t.Fatal(err)
	}
	x := newIndex(h.db)
	embedPending(t, h.db, x)
	if got := semanticSearch(t, x, "s", "which vehicle", 5); !slices.Equal(got, []string{"car"}) {
		t.Fatalf("before: %v", got)
	}

	// Tags change, text does not: the vector stays, nothing is pending.
	car.SemanticTags = []string{"cars"}
	if err := mem.Put(ctx, "s", car); err != nil {
		t.Fatal(err)
	}
	if !hasVector(t, h.db, "s", "car") || len(pendingIDs2(t, h.db)) != 0 {
		t.Fatal("a tag change dropped the vector")
	}

	// The text changes: the old vector is gone in the same write, so the
	// index never answers the old meaning.
	car.Content = "I have a grey cat called Miso."
	if err := mem.Put(ctx, "s", car); err != nil {
		t.Fatal(err)
	}
	if hasVector(t, h.db, "s", "car") {
		t.Fatal("the old text's vector survived the rewrite")
	}
	if got := semanticSearch(t, x, "s", "which vehicle", 5); len(got) != 0 {
		t.Fatalf("the rewritten item is still found by its old meaning: %v", got)
	}
	// A vector of the old text, computed before the rewrite, arrives late.
	stored, err := mem.PutVectors(ctx, []Vector{{Scope: "s", MemoryID: "car", Text: "My car is a red Volvo.", Values: mockllm.Embedding("My car is a red Volvo.", 64)}})
	if err != nil || len(stored) != 0 || hasVector(t, h.db, "s", "car") {
		t.Fatalf("a stale vector was stored: %v %v", stored, err)
	}
	if got := pendingIDs2(t, h.db); !slices.Equal(got, []string{"s/car"}) {
		t.Fatalf("pending = %v", got)
	}
	embedPending(t, h.db, x)
	if got := semanticSearch(t, x, "s", "do I have a pet?", 5); !slices.Equal(got, []string{"car"}) {
		t.Fatalf("new meaning: %v", got)
	}

	if err := mem.Delete(ctx, "s", "car"); err != nil {
		t.Fatal(err)
	}
	if hasVector(t, h.db, "s", "car") || len(pendingIDs2(t, h.db)) != 0 {
		t.Fatal("delete left vector keys")
	}
	if got := semanticSearch(t, x, "s", "do I have a pet?", 5); len(got) != 0 {
		t.Fatalf("a deleted item was found: %v", got)
	}

	// An item deleted while pending: its mark is cleared, nothing stored.
	if err := mem.Put(ctx, "s", memItem("gone", "Temporary note about my dog", now)); err != nil {
		t.Fatal(err)
	}
	pend, err := mem.PendingVectors(ctx, 10)
	if err != nil || len(pend) != 1 {
		t.Fatal(pend, err)
	}
	if err := h.db.update(ctx, func(txn *wtxn) error { return txn.Delete(key2(pfxMemory, "s", "gone")) }); err != nil {
		t.Fatal(err)
	}
	embedPending(t, h.db, x)
	if got := pendingIDs2(t, h.db); len(got) != 0 {
		t.Fatalf("the mark of a vanished item stayed: %v", got)
	}

	// DeleteScope removes the vector keys too.
	if err := mem.Put(ctx, "s", memItem("a", "My car is a red Volvo.", now), memItem("b", "My dog is called Rex", now)); err != nil {
		t.Fatal(err)
	}
	embedPending(t, h.db, nil)
	if err := mem.Put(ctx, "s", memItem("c", "pending still", now)); err != nil {
		t.Fatal(err)
	}
	if err := mem.DeleteScope(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{pfxVector, pfxVectorPending} {
		var n int
		_ = h.db.view(ctx, func(txn *badger.Txn) error {
			var err error
			n, err = countKeys(ctx, txn, scopePrefix(p, "s"))
			return err
		})
		if n != 0 {
			t.Fatalf("%d %s keys left after DeleteScope", n, p)
		}
	}
}

// Vectors are stored: after a restart, a new index built from Badger finds
// the same facts by meaning.
func TestVectorSearchAfterReopen(t *testing.T) {
	h := newHarness(t, true)
	ctx := t.Context()
	now := time.Now().UTC()
	if err := h.db.Memory().Put(ctx, "owner",
		memItem("car", "My car is a red Volvo.", now),
		memItem("allergy", "I am allergic to peanuts.", now),
		memItem("tea", "I like green tea in the morning.", now),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := h.db.Memory().SyncVectorModel(ctx, "mock:embed/64"); err != nil {
		t.Fatal(err)
	}
	embedPending(t, h.db, nil)
	h.reopen()

	if reset, err := h.db.Memory().SyncVectorModel(ctx, "mock:embed/64"); err != nil || reset {
		t.Fatalf("same model after reopen: reset %v, %v", reset, err)
	}
	if got := pendingIDs2(t, h.db); len(got) != 0 {
		t.Fatalf("pending after reopen: %v", got)
	}
	x := newIndex(h.db)
	if got := semanticSearch(t, x, "owner", "What vehicle do I drive?", 3); !slices.Equal(got, []string{"car"}) {
		t.Fatalf("after reopen: %v", got)
	}
	if got := semanticSearch(t, x, "owner", "any food intolerance?", 3); !slices.Equal(got, []string{"allergy"}) {
		t.Fatalf("after reopen: %v", got)
	}
}

// A new model's vectors are never compared with an old one's: changing the
// model drops every vector and marks every embeddable item again.
func TestSyncVectorModel(t *testing.T) {
	h := newHarness(t, false)
	ctx := t.Context()
	mem := h.db.Memory()
	now := time.Now().UTC()
	if err := mem.Put(ctx, "a", memItem("1", "My car is a red Volvo.", now), rawItem("r", "raw words")); err != nil {
		t.Fatal(err)
	}
	if err := mem.Put(ctx, "b", memItem("2", "My dog is called Rex", now)); err != nil {
		t.Fatal(err)
	}
	embedPending(t, h.db, nil)
	// Items stored before vectors existed: their marks are missing.
	if err := h.db.update(ctx, func(txn *wtxn) error {
		return txn.Set(key2(pfxMemory, "a", "old"), mustEncode(t, memItem("old", "An old note about my flat", now)))
	}); err != nil {
		t.Fatal(err)
	}
	reset, err := mem.SyncVectorModel(ctx, "m1")
	if err != nil || !reset {
		t.Fatalf("first sync: %v %v", reset, err)
	}
	if got := pendingIDs2(t, h.db); !slices.Equal(got, []string{"a/1", "a/old", "b/2"}) {
		t.Fatalf("pending after the first sync = %v", got)
	}
	if hasVector(t, h.db, "a", "1") {
		t.Fatal("a vector of an unknown model survived")
	}
	embedPending(t, h.db, nil)
	if reset, err := mem.SyncVectorModel(ctx, "m1"); err != nil || reset {
		t.Fatalf("same model: %v %v", reset, err)
	}
	if model, _ := mem.VectorModel(ctx); model != "m1" {
		t.Fatalf("model %q", model)
	}
	if reset, err := mem.SyncVectorModel(ctx, "m2"); err != nil || !reset {
		t.Fatalf("new model: %v %v", reset, err)
	}
	if got := pendingIDs2(t, h.db); len(got) != 3 || hasVector(t, h.db, "b", "2") {
		t.Fatalf("after a model change: pending %v, vector kept %v", got, hasVector(t, h.db, "b", "2"))
	}
	if _, err := mem.SyncVectorModel(ctx, " "); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty model: %v", err)
	}
}

func mustEncode(t *testing.T, m messages.MemoryItem) []byte {
	t.Helper()
	b, err := encodeJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVectorCodec(t *testing.T) {
	h := textHash("x")
	b, err := encodeVector(h, []float32{0.5, -0.25, 1})
	if err != nil {
		t.Fatal(err)
	}
	gh, v, err := decodeVector(b)
	if err != nil || gh != h || !slices.Equal(v, []float32{0.5, -0.25, 1}) {
		t.Fatalf("round trip: %v %v %v", gh, v, err)
	}
	for _, bad := range [][]byte{nil, {2}, b[:len(b)-1], append(b[:vectorHeader:vectorHeader], 0, 0, 0, 0, 0)} {
		if _, _, err := decodeVector(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode %x: %v", bad, err)
		}
	}
	nan := float32(0)
	nan = nan / nan
	for _, bad := range [][]float32{nil, {nan}, make([]float32, maxVectorDims+1)} {
		if _, err := encodeVector(h, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("encode %d values: %v", len(bad), err)
		}
	}
}
