package persistence

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// putMany stores n items of scope whose content is text(i), created a
// second apart from t0, in batches.
func putMany(t *testing.T, h *harness, scope string, n int, text func(i int) string) {
	t.Helper()
	for i := 0; i < n; i += 100 {
		var items []messages.MemoryItem
		for j := i; j < min(i+100, n); j++ {
			items = append(items, memItem(fmt.Sprintf("m%05d", j), text(j), t0.Add(time.Duration(j)*time.Second)))
		}
		if err := h.db.Memory().Put(t.Context(), scope, items...); err != nil {
			t.Fatal(err)
		}
	}
}

// A search reads a bounded number of postings however many items share
// the query's words, and still finds an old item by a rare word.
func TestSearchReadsBoundedPostings(t *testing.T) {
	h := newHarness(t, false)
	const n = 3 * maxTermPostings
	putMany(t, h, "s", n, func(i int) string {
		if i == 7 {
			return "hello, when are you open on saturday? ask about the oolong"
		}
		return fmt.Sprintf("hello, when are you open on saturday? question %d", i)
	})
	query := "Hello! When are you open on Saturday, and do you sell oolong?"
	res, read, err := h.db.Memory().search(t.Context(), "s", query, SearchOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	qterms := 0
	for _, term := range terms(query) {
		if df, _ := h.docFreq(t, "s", term); df > 0 {
			qterms++
		}
	}
	if limit := min(qterms*maxTermPostings, maxSearchPostings); read > limit {
		t.Fatalf("read %d postings for %d terms, want at most %d", read, qterms, limit)
	}
	if read <= maxTermPostings {
		t.Fatalf("read %d postings: the common terms were not read at all", read)
	}
	if len(res) == 0 || res[0].Item.MemoryID != "m00007" {
		t.Fatalf("results %v, want the old item with the rare word first", resultIDs(res))
	}
	// Among items equal but for age, a common word finds the newest.
	res, err = h.db.Memory().Search(t.Context(), "s", "saturday", SearchOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultIDs(res); !slices.Equal(got, []string{fmt.Sprintf("m%05d", n-1), fmt.Sprintf("m%05d", n-2)}) {
		t.Fatalf("Search(saturday) = %v, want the two newest items", got)
	}
}

func resultIDs(res []ScoredMemory) []string {
	var out []string
	for _, r := range res {
		out = append(out, r.Item.MemoryID)
	}
	return out
}

func (h *harness) docFreq(t *testing.T, scope, term string) (uint64, error) {
	t.Helper()
	var df uint64
	err := h.db.bdb.View(func(txn *badger.Txn) error {
		var err error
		df, err = readCount(txn, docFreqKey(scope, term))
		return err
	})
	return df, err
}

// The reindex of the migrations rebuilds, batch by batch, exactly the index
// that writes maintain, whatever it held before (here: postings in the
// layout before migration 4, keyed by memory id alone).
func TestReindexMigrationRebuildsInBatches(t *testing.T) {
	h := newHarness(t, false)
	n := 2*reindexBatch + 17
	putMany(t, h, "a", n, func(i int) string { return fmt.Sprintf("tea number %d with milk", i) })
	putMany(t, h, "b", 50, func(i int) string { return fmt.Sprintf("coffee %d", i) })
	queries := []struct{ scope, q string }{{"a", "tea 5 milk"}, {"a", "number 300"}, {"b", "coffee 7"}}
	before := map[string][]ScoredMemory{}
	for _, q := range queries {
		res, err := h.db.Memory().Search(t.Context(), q.scope, q.q, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before[q.scope+q.q] = res
	}
	// Replace the index with an old-layout posting list and wrong totals.
	if err := deleteBatched(t.Context(), h.db.bdb, []byte(pfxPosting)); err != nil {
		t.Fatal(err)
	}
	err := h.db.bdb.Update(func(txn *badger.Txn) error {
		return txn.Set(append(postingPrefix("a", "tea"), "m00001"...), postingValue(&messages.MemoryItem{CreatedAt: t0}, 1, 5))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := reindexMemory(t.Context(), h.db.bdb); err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		res, err := h.db.Memory().Search(t.Context(), q.scope, q.q, SearchOptions{})
		if err != nil {
			t.Fatalf("search %q after the reindex: %v", q.q, err)
		}
		if got, want := resultIDs(res), resultIDs(before[q.scope+q.q]); !slices.Equal(got, want) {
			t.Fatalf("Search(%s, %q) after the reindex = %v, want %v", q.scope, q.q, got, want)
		}
	}
	var postings int
	err = h.db.bdb.View(func(txn *badger.Txn) error {
		var err error
		postings, err = countKeys(t.Context(), txn, []byte(pfxPosting))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every item of "a" has 5 distinct terms, of "b" 2; the stray
	// old-layout posting is gone.
	if want := 5*n + 2*50; postings != want {
		t.Fatalf("%d postings after the reindex, want %d", postings, want)
	}
}

// A write that indexes many items sharing words updates each counter once
// (indexCounts), and ends with exactly the counters and ranking of items
// stored one at a time, replacements and raw items included.
func TestIndexCountsMatchOneByOne(t *testing.T) {
	h := newHarness(t, false)
	ctx := t.Context()
	items := func(scope string) []messages.MemoryItem {
		var out []messages.MemoryItem
		for i := range 60 {
			m := memItem(fmt.Sprintf("e%02d", i), fmt.Sprintf("customer asked about tea number %d", i%7), t0.Add(time.Duration(i)*time.Second))
			if i%10 == 0 {
				m.ReingestionTier = messages.TierLowReingestion // raw: never indexed
			}
			out = append(out, m)
		}
		return out
	}
	// One at a time, then a replacement of e01.
	for _, m := range items("one") {
		if err := h.db.Memory().Put(ctx, "one", m); err != nil {
			t.Fatal(err)
		}
	}
	replaced := memItem("e01", "green tea with honey", t0)
	if err := h.db.Memory().Put(ctx, "one", replaced); err != nil {
		t.Fatal(err)
	}
	// The same in one turn commit, after e01's first version.
	if err := h.db.Memory().Put(ctx, "all", items("all")[1]); err != nil {
		t.Fatal(err)
	}
	batch := append(items("all"), replaced)
	batch = slices.Delete(batch, 1, 2)
	if err := h.db.CommitTurn(ctx, TurnCommit{Scope: "all", Memories: batch}); err != nil {
		t.Fatal(err)
	}
	for _, term := range []string{"tea", "custom", "3", "honey", "green", "number"} {
		a, err := h.docFreq(t, "one", term)
		if err != nil {
			t.Fatal(err)
		}
		b, err := h.docFreq(t, "all", term)
		if err != nil {
			t.Fatal(err)
		}
		if a != b || (term == "tea" && a != 54) {
			t.Fatalf("df(%s) = %d one by one, %d in one commit", term, a, b)
		}
	}
	for _, q := range []string{"tea 3", "green honey", "customer number 6"} {
		one, err := h.db.Memory().Search(ctx, "one", q, SearchOptions{Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		all, err := h.db.Memory().Search(ctx, "all", q, SearchOptions{Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(one) != len(all) {
			t.Fatalf("Search(%q): %d results one by one, %d in one commit", q, len(one), len(all))
		}
		for i := range one {
			if one[i].Item.MemoryID != all[i].Item.MemoryID || one[i].Score != all[i].Score {
				t.Fatalf("Search(%q) result %d: %s %.6f one by one, %s %.6f in one commit", q, i,
					one[i].Item.MemoryID, one[i].Score, all[i].Item.MemoryID, all[i].Score)
			}
		}
	}
}
