package persistence

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

func TestBM25Scores(t *testing.T) {
	h := newHarness(t, false)
	// N = 2, average length 3; "apple" is in both (idf = ln 1.2).
	if err := h.db.Memory().Put(t.Context(), "s",
		memItem("d1", "apple banana", t0),
		memItem("d2", "apple apple cherry date", t0)); err != nil {
		t.Fatal(err)
	}
	res, err := h.db.Memory().Search(t.Context(), "s", "apples", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// idf * tf*2.2 / (tf + 1.2*(0.25 + 0.75*len/3)), worked by hand.
	want := []struct {
		id    string
		score float64
	}{{"d2", 0.229203}, {"d1", 0.211110}}
	if len(res) != len(want) {
		t.Fatalf("results %+v", res)
	}
	for i, w := range want {
		if res[i].Item.MemoryID != w.id || math.Abs(res[i].Score-w.score) > 1e-5 {
			t.Errorf("result %d = %s %.6f, want %s %.6f", i, res[i].Item.MemoryID, res[i].Score, w.id, w.score)
		}
	}
}

func TestBM25RankingOrder(t *testing.T) {
	tests := []struct {
		name  string
		docs  map[string]string
		query string
		want  []string
	}{
		{
			name:  "more occurrences rank higher at equal length",
			docs:  map[string]string{"once": "tea with milk and honey", "thrice": "tea tea tea and honey"},
			query: "tea", want: []string{"thrice", "once"},
		},
		{
			name: "a short item beats a long one with the same occurrences",
			docs: map[string]string{
				"short": "green tea",
				"long":  "tea was mentioned once in this long note about gardening, weather, trains, books and music",
			},
			query: "tea", want: []string{"short", "long"},
		},
		{
			name: "a rare term outweighs a common one",
			docs: map[string]string{
				"common1": "tea in the morning", "common2": "tea after lunch", "common3": "tea at night",
				"rare": "the unicorn sticker",
			},
			query: "tea unicorn", want: []string{"rare", "common1", "common2", "common3"},
		},
		{
			name:  "stems match other word forms",
			docs:  map[string]string{"runs": "she runs every day", "walk": "he walks"},
			query: "running", want: []string{"runs"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, false)
			var items []messages.MemoryItem
			for _, id := range slices.Sorted(func(yield func(string) bool) {
				for id := range tt.docs {
					if !yield(id) {
						return
					}
				}
			}) {
				items = append(items, memItem(id, tt.docs[id], t0))
			}
			if err := h.db.Memory().Put(t.Context(), "s", items...); err != nil {
				t.Fatal(err)
			}
			got := searchIDs(t, h, "s", tt.query, SearchOptions{})
			if tt.name == "a rare term outweighs a common one" {
				// The three common items tie; only the first place matters.
				got = got[:1]
				tt.want = tt.want[:1]
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Search(%q) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
}

// searchAll runs every query and renders the results, scores included.
func searchAll(t *testing.T, h *harness, scope string, queries []string) []string {
	t.Helper()
	var out []string
	for _, q := range queries {
		res, err := h.db.Memory().Search(t.Context(), scope, q, SearchOptions{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			out = append(out, fmt.Sprintf("%s:%s:%v", q, r.Item.MemoryID, r.Score))
		}
	}
	return out
}

// The index kept write by write (puts, overwrites, deletes) ranks exactly
// as one rebuilt from the items, and Reindex repairs a damaged index.
func TestReindexGivesIdenticalResults(t *testing.T) {
	h := newHarness(t, true)
	ctx := t.Context()
	m := h.db.Memory()
	words := []string{"tea", "coffee", "cat", "dog", "garden", "train", "book", "music", "rain", "sun"}
	for i := range 60 {
		it := memItem(fmt.Sprintf("m%02d", i), fmt.Sprintf("%s %s and %s, note %d", words[i%10], words[(i*3)%10], words[(i*7)%10], i), t0.Add(time.Duration(i)))
		if i%9 == 0 {
			it.ReingestionTier = messages.TierLowReingestion // never indexed
		}
		if err := m.Put(ctx, "s", it); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 60; i += 7 { // overwrite with other words
		it := memItem(fmt.Sprintf("m%02d", i), "rain rain over the garden "+words[i%10], t0.Add(time.Duration(i)))
		if err := m.Put(ctx, "s", it); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < 60; i += 11 {
		if err := m.Delete(ctx, "s", fmt.Sprintf("m%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Put(ctx, "other", memItem("x", "tea garden rain", t0)); err != nil {
		t.Fatal(err)
	}
	queries := []string{"tea", "rain garden", "cat dog book", "music sun train coffee", "notes"}
	before := searchAll(t, h, "s", queries)
	if len(before) == 0 {
		t.Fatal("no results to compare")
	}

	n, err := m.Reindex(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if want := 60 - 6; n != want {
		t.Errorf("Reindex indexed %d items, want %d", n, want)
	}
	if after := searchAll(t, h, "s", queries); !slices.Equal(after, before) {
		t.Fatalf("results differ after Reindex:\nbefore %v\nafter  %v", before, after)
	}

	// Damage the index: drop the document frequencies and totals.
	err = h.db.bdb.Update(func(txn *badger.Txn) error {
		for _, k := range [][]byte{docFreqKey("s", "rain"), scopePrefix(pfxMemStats, "s")} {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if damaged := searchAll(t, h, "s", queries); slices.Equal(damaged, before) {
		t.Fatal("the damage changed nothing; the test cannot tell a repair")
	}
	if _, err := m.Reindex(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if after := searchAll(t, h, "s", queries); !slices.Equal(after, before) {
		t.Fatalf("Reindex did not repair the index:\nbefore %v\nafter  %v", before, after)
	}
	if got := searchAll(t, h, "other", []string{"tea"}); len(got) != 1 {
		t.Fatalf("Reindex of one scope touched another: %v", got)
	}
}
