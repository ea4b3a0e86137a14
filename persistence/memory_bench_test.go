package persistence

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
)

// BenchmarkMemorySearch runs the auto-retrieval query of a customer turn
// (spec 5.1 step 4) against a scope holding 100 and 20,000 keyword-indexed
// episodes: the context evicted from a long support chat, every one of
// which shares most words with the query. A turn's search should cost
// about the same however long the conversation has been.
func BenchmarkMemorySearch(b *testing.B) {
	for _, n := range []int{100, 20000} {
		b.Run("items="+strconv.Itoa(n), func(b *testing.B) {
			db := openBench(b, false)
			fillEpisodes(b, db, "s", n)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				q := fmt.Sprintf("Hello, customer 7 here with question %d: when are you open on Saturday?", n+i)
				res, err := db.Memory().Search(b.Context(), "s", q, SearchOptions{Limit: messages.DefaultMemoryQueryResults})
				if err != nil {
					b.Fatal(err)
				}
				if len(res) == 0 {
					b.Fatal("no result")
				}
			}
		})
	}
}

// fillEpisodes stores n evicted-chronicle episodes in scope, a question and
// an answer a turn, as eviction writes them.
func fillEpisodes(b *testing.B, db *DB, scope string, n int) {
	b.Helper()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const batch = 200
	for i := 0; i < n; i += batch {
		var items []messages.MemoryItem
		for j := i; j < min(i+batch, n); j++ {
			content := fmt.Sprintf("[external] customer: Hello, customer 7 here with question %d: when are you open on Saturday?", j/2)
			if j%2 == 1 {
				content = "Silas: Echo: we are open on Saturday from nine to five, see you then."
			}
			session := scope
			at := start.Add(time.Duration(j) * time.Second)
			items = append(items, messages.MemoryItem{
				MemoryID: uuid.NewString(), Content: content, MemoryType: messages.MemoryEpisode,
				ReingestionTier: messages.TierActive, TrustLevel: messages.TrustWorking, Taint: messages.TaintExternal,
				CreatedAt: at, UpdatedAt: at, SemanticTags: []string{"context_evicted", messages.KindMessage},
				SessionID: &session, SourceKind: "context_evicted",
			})
		}
		if err := db.Memory().Put(b.Context(), scope, items...); err != nil {
			b.Fatal(err)
		}
	}
}
