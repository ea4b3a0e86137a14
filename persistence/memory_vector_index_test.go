package persistence

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
)

// clustered returns n unit vectors of dims around 32 centres, as real
// embeddings of a user's memories group by topic.
func clustered(rng *rand.Rand, n, dims int) [][]float32 {
	centres := make([][]float32, 32)
	for i := range centres {
		centres[i] = randomUnit(rng, dims, nil, 0)
	}
	out := make([][]float32, n)
	for i := range out {
		out[i] = randomUnit(rng, dims, centres[rng.IntN(len(centres))], 0.6)
	}
	return out
}

// randomUnit is a random unit vector, near centre when one is given.
func randomUnit(rng *rand.Rand, dims int, centre []float32, noise float64) []float32 {
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x := rng.NormFloat64()
		if centre != nil {
			x = float64(centre[i]) + noise*x/math.Sqrt(float64(dims))
		}
		v[i] = float32(x)
		norm += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

// fillVectors stores n items with the given vectors in scope, as the
// vector writer would.
func fillVectors(tb testing.TB, db *DB, scope string, vecs [][]float32) []string {
	tb.Helper()
	ctx := tb.Context()
	ids := make([]string, len(vecs))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for start := 0; start < len(vecs); start += 500 {
		end := min(start+500, len(vecs))
		var items []messages.MemoryItem
		var vs []Vector
		for i := start; i < end; i++ {
			ids[i] = fmt.Sprintf("m%05d", i)
			text := fmt.Sprintf("memory number %d", i)
			items = append(items, memItem(ids[i], text, at.Add(time.Duration(i)*time.Second)))
			vs = append(vs, Vector{Scope: scope, MemoryID: ids[i], Text: text, Values: vecs[i]})
		}
		if err := db.Memory().Put(ctx, scope, items...); err != nil {
			tb.Fatal(err)
		}
		if _, err := db.Memory().PutVectors(ctx, vs); err != nil {
			tb.Fatal(err)
		}
	}
	return ids
}

// exactTop is the brute-force answer.
func exactTop(vecs [][]float32, ids []string, q []float32, k int) []string {
	type s struct {
		id  string
		sim float64
	}
	all := make([]s, len(vecs))
	for i, v := range vecs {
		all[i] = s{ids[i], dot(q, v)}
	}
	slices.SortFunc(all, func(a, b s) int { return cmp.Compare(b.sim, a.sim) })
	out := make([]string, k)
	for i := range out {
		out[i] = all[i].id
	}
	return out
}

// Search is exact: the 10 nearest among 3,000 clustered vectors are the
// brute-force answer, in order.
func TestVectorIndexIsExact(t *testing.T) {
	h := newHarness(t, false)
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := clustered(rng, 3000, 64)
	ids := fillVectors(t, h.db, "s", vecs)
	x := newIndex(h.db)
	for range 20 {
		q := randomUnit(rng, 64, vecs[rng.IntN(len(vecs))], 0.3)
		hits, err := x.Search(t.Context(), "s", q, 10, -1)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]string, len(hits))
		for i, h := range hits {
			got[i] = h.Item.MemoryID
		}
		if want := exactTop(vecs, ids, q, 10); !slices.Equal(got, want) {
			t.Fatalf("Search = %v, brute force %v", got, want)
		}
	}
}

// A vector rewritten in place replaces the old one; one whose item is
// gone is forgotten when a search meets it.
func TestVectorIndexReplacesAndForgets(t *testing.T) {
	h := newHarness(t, false)
	rng := rand.New(rand.NewPCG(3, 4))
	vecs := clustered(rng, 50, 32)
	ids := fillVectors(t, h.db, "s", vecs)
	x := newIndex(h.db)
	if _, err := x.Search(t.Context(), "s", vecs[0], 1, -1); err != nil {
		t.Fatal(err)
	}
	m, err := h.db.Memory().Get(t.Context(), "s", ids[0])
	if err != nil {
		t.Fatal(err)
	}
	m.Content = "rewritten"
	if err := h.db.Memory().Put(t.Context(), "s", m); err != nil {
		t.Fatal(err)
	}
	fresh := randomUnit(rng, 32, nil, 0)
	stored, err := h.db.Memory().PutVectors(t.Context(), []Vector{{Scope: "s", MemoryID: ids[0], Text: "rewritten", Values: fresh}})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored %v: %v", stored, err)
	}
	x.Add(t.Context(), stored)
	if hits, err := x.Search(t.Context(), "s", fresh, 1, -1); err != nil || len(hits) != 1 || hits[0].Item.MemoryID != ids[0] || hits[0].Similarity < 0.999 {
		t.Fatalf("new vector: %+v %v", hits, err)
	}
	if err := h.db.Memory().Delete(t.Context(), "s", ids[1]); err != nil {
		t.Fatal(err)
	}
	if hits, err := x.Search(t.Context(), "s", vecs[1], 50, -1); err != nil || slices.ContainsFunc(hits, func(h VectorHit) bool { return h.Item.MemoryID == ids[1] }) {
		t.Fatalf("deleted item answered: %v", err)
	}
	if n := x.Len(); n != 49 {
		t.Fatalf("Len after forgetting = %d, want 49", n)
	}
}

// Collections beyond the memory budget are dropped, least recently searched
// first, and built again from Badger when searched.
func TestVectorIndexBudget(t *testing.T) {
	h := newHarness(t, false)
	rng := rand.New(rand.NewPCG(5, 6))
	per := int64(4*16 + vectorOverhead)
	x := NewVectorIndex(h.db, VectorIndexOptions{MaxBytes: 250 * per})
	x.SetReady()
	vecs := map[string][][]float32{}
	for _, s := range []string{"a", "b", "c"} {
		vecs[s] = clustered(rng, 100, 16)
		fillVectors(t, h.db, s, vecs[s])
	}
	for _, s := range []string{"a", "b", "c"} {
		if hits, err := x.Search(t.Context(), s, vecs[s][5], 1, -1); err != nil || len(hits) != 1 || hits[0].Item.MemoryID != "m00005" {
			t.Fatalf("scope %s: %+v %v", s, hits, err)
		}
	}
	x.mu.Lock()
	_, hasA := x.scopes["a"]
	n := len(x.scopes)
	x.mu.Unlock()
	if hasA || n != 2 {
		t.Fatalf("after three scopes of 100 under a budget of 250: %d collections, a kept %v", n, hasA)
	}
	if hits, err := x.Search(t.Context(), "a", vecs["a"][7], 1, -1); err != nil || len(hits) != 1 || hits[0].Item.MemoryID != "m00007" {
		t.Fatalf("dropped scope searched again: %+v %v", hits, err)
	}
}

// Searches and adds of many goroutines do not race (go test -race).
func TestVectorIndexConcurrent(t *testing.T) {
	h := newHarness(t, false)
	rng := rand.New(rand.NewPCG(7, 8))
	vecs := clustered(rng, 200, 16)
	ids := fillVectors(t, h.db, "s", vecs)
	x := newIndex(h.db)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				if _, err := x.Search(t.Context(), "s", vecs[(w*50+i)%len(vecs)], 3, -1); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			x.Add(t.Context(), []Vector{{Scope: "s", MemoryID: ids[i], Text: fmt.Sprintf("memory number %d", i), Values: vecs[i]}})
		}
	})
	wg.Wait()
	if x.Len() != 200 {
		t.Fatalf("Len = %d", x.Len())
	}
}

// dot is the cosine similarity of two unit vectors.
func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
