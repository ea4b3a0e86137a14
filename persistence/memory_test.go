package persistence

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func searchIDs(t *testing.T, h *harness, scope, q string, opts SearchOptions) []string {
	t.Helper()
	res, err := h.db.Memory().Search(t.Context(), scope, q, opts)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, r := range res {
		if i > 0 && r.Score > res[i-1].Score {
			t.Fatalf("results not sorted by score: %+v", res)
		}
		ids = append(ids, r.Item.MemoryID)
	}
	return ids
}

func testMemoryCRUD(t *testing.T, h *harness) {
	ctx := t.Context()
	m := h.db.Memory()
	item := memItem("m1", "Alice likes green tea", t0)
	item.SemanticTags = []string{"beverage"}
	if err := m.Put(ctx, "s1", item); err != nil {
		t.Fatal(err)
	}
	got, err := m.Get(ctx, "s1", "m1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != item.Content || !got.CreatedAt.Equal(t0) || !slices.Equal(got.SemanticTags, item.SemanticTags) {
		t.Fatalf("Get = %+v", got)
	}
	if ids := searchIDs(t, h, "s1", "BEVERAGE", SearchOptions{}); !slices.Equal(ids, []string{"m1"}) {
		t.Fatalf("tag search = %v", ids)
	}
	// Overwriting re-indexes: old words stop matching.
	item.Content = "Alice switched to coffee"
	if err := m.Put(ctx, "s1", item); err != nil {
		t.Fatal(err)
	}
	if ids := searchIDs(t, h, "s1", "tea", SearchOptions{}); len(ids) != 0 {
		t.Fatalf("stale index: tea -> %v", ids)
	}
	if ids := searchIDs(t, h, "s1", "coffee", SearchOptions{}); !slices.Equal(ids, []string{"m1"}) {
		t.Fatalf("coffee -> %v", ids)
	}
	if err := m.Delete(ctx, "s1", "m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, "s1", "m1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after delete = %v", err)
	}
	if err := m.Delete(ctx, "s1", "m1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete = %v", err)
	}
	if ids := searchIDs(t, h, "s1", "coffee alice", SearchOptions{}); len(ids) != 0 {
		t.Fatalf("deleted item still indexed: %v", ids)
	}
	bad := memItem("m2", "x", t0)
	bad.Taint, bad.TrustLevel = messages.TaintExternal, messages.TrustVerified
	if err := m.Put(ctx, "s1", memItem("ok", "fine", t0), bad); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Put invalid = %v, want ErrInvalid", err)
	}
	if _, err := m.Get(ctx, "s1", "ok"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rejected batch stored an item: %v", err)
	}
	for i := range 4 {
		if err := m.Put(ctx, "s1", memItem(fmt.Sprintf("r%d", i), "note", t0.Add(time.Duration(i)*time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	recent, err := m.Recent(ctx, "s1", 3)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recent {
		ids = append(ids, r.MemoryID)
	}
	if !slices.Equal(ids, []string{"r3", "r2", "r1"}) {
		t.Fatalf("Recent = %v", ids)
	}
}

func testMemorySearch(t *testing.T, h *harness) {
	low := memItem("low", "user profile preferences: dark mode", t0.Add(5*time.Hour))
	low.ReingestionTier = messages.TierLowReingestion
	items := []messages.MemoryItem{
		memItem("old", "The user profile lists preferences for tea.", t0),
		memItem("new", "user profile preferences, updated", t0.Add(time.Hour)),
		memItem("rare", "prefers the word zebra", t0.Add(2*time.Hour)),
		memItem("common1", "the user said hello", t0.Add(3*time.Hour)),
		memItem("common2", "the user said bye", t0.Add(4*time.Hour)),
		low,
	}
	if err := h.db.Memory().Put(t.Context(), "s1", items...); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		query string
		opts  SearchOptions
		want  []string
	}{
		// "prefers" shares the stem of "preferences"; the raw lane's "low" is not indexed.
		{"ties newest first, stems match", "user profile preferences", SearchOptions{}, []string{"new", "old", "rare", "common2", "common1"}},
		{"rare term outranks common", "zebra user", SearchOptions{}, []string{"rare", "common2", "common1", "new", "old"}},
		{"limit", "user", SearchOptions{Limit: 2}, []string{"common2", "common1"}},
		{"case and punctuation", "TEA!", SearchOptions{}, []string{"old"}},
		{"no match", "kangaroo", SearchOptions{}, nil},
		{"no terms", "  ,.;", SearchOptions{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := searchIDs(t, h, "s1", tt.query, tt.opts); !slices.Equal(got, tt.want) {
				t.Fatalf("Search(%q) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
	if _, err := h.db.Memory().Search(t.Context(), "s1", "x", SearchOptions{Limit: -1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative limit = %v", err)
	}
}

func testMemoryScopeIsolation(t *testing.T, h *harness) {
	ctx := t.Context()
	m := h.db.Memory()
	if err := m.Put(ctx, "a", memItem("m1", "secret plan alpha", t0)); err != nil {
		t.Fatal(err)
	}
	if err := m.Put(ctx, "a/b", memItem("m2", "public plan", t0)); err != nil {
		t.Fatal(err)
	}
	if ids := searchIDs(t, h, "a/b", "secret plan alpha", SearchOptions{}); !slices.Equal(ids, []string{"m2"}) {
		t.Fatalf("scope a/b sees %v", ids)
	}
	if ids := searchIDs(t, h, "a", "public", SearchOptions{}); len(ids) != 0 {
		t.Fatalf("scope a sees %v", ids)
	}
	if _, err := m.Get(ctx, "a/b", "m1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cross-scope Get = %v", err)
	}
	if recent, err := m.Recent(ctx, "a", 10); err != nil || len(recent) != 1 || recent[0].MemoryID != "m1" {
		t.Fatalf("Recent(a) = %v, %v", recent, err)
	}
}

// testMemoryReindexMigration: a data dir indexed before stemming finds
// other word forms once migration 2 has rebuilt its index.
func testMemoryReindexMigration(t *testing.T, h *harness) {
	ctx := t.Context()
	if err := h.db.Memory().Put(ctx, "s1", memItem("cat", "I adopted two cats last spring", t0)); err != nil {
		t.Fatal(err)
	}
	// Replace the stemmed postings with what the unstemmed index had.
	err := h.db.bdb.Update(func(txn *badger.Txn) error {
		if err := txn.Delete(postingKey("s1", "cat", t0.UnixNano(), "cat")); err != nil {
			return err
		}
		return txn.Set(postingKey("s1", "cats", t0.UnixNano(), "cat"), postingValue(&messages.MemoryItem{CreatedAt: t0}, 1, 6))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, h, "s1", "cat", SearchOptions{}); len(got) != 0 {
		t.Fatalf("before the migration an unstemmed index found %v", got)
	}
	if err := reindexMemory(ctx, h.db.bdb); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, h, "s1", "cat", SearchOptions{}); !slices.Equal(got, []string{"cat"}) {
		t.Fatalf("after the migration Search(cat) = %v", got)
	}
}
