package persistence

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/silas-ai/silas/messages"
)

// BenchmarkVectorSearch is the semantic branch of a turn's memory search
// (spec 6.3): the five nearest of a scope's 1,000 and 10,000 memories, 384
// dimensions as all-MiniLM-L6-v2 makes them, each hit checked against
// Badger. The query's own embedding (a model call) is not included.
func BenchmarkVectorSearch(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run("items="+strconv.Itoa(n), func(b *testing.B) {
			db := openBench(b, false)
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			vecs := clustered(rng, n, 384)
			fillVectors(b, db, "s", vecs)
			x := NewVectorIndex(db, VectorIndexOptions{})
			x.SetReady()
			queries := make([][]float32, 64)
			for i := range queries {
				queries[i] = randomUnit(rng, 384, vecs[rng.IntN(n)], 0.3)
			}
			if _, err := x.Search(b.Context(), "s", queries[0], 1, -1); err != nil { // build outside the timing
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				hits, err := x.Search(b.Context(), "s", queries[i%len(queries)], messages.DefaultMemoryQueryResults, 0.2)
				if err != nil {
					b.Fatal(err)
				}
				if len(hits) == 0 {
					b.Fatal("no hit")
				}
				i++
			}
		})
	}
}

// BenchmarkVectorIndexLoad is the first semantic search of a scope after
// a start: its 10,000 vectors read from Badger into memory.
func BenchmarkVectorIndexLoad(b *testing.B) {
	db := openBench(b, false)
	rng := rand.New(rand.NewPCG(2, 3))
	vecs := clustered(rng, 10000, 384)
	fillVectors(b, db, "s", vecs)
	b.ReportAllocs()
	for b.Loop() {
		x := NewVectorIndex(db, VectorIndexOptions{})
		x.SetReady()
		if _, err := x.Search(b.Context(), "s", vecs[0], 1, -1); err != nil {
			b.Fatal(err)
		}
	}
}
