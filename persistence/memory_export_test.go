package persistence

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// backends runs fn against an on-disk and an in-memory database.
func backends(t *testing.T, fn func(t *testing.T, h *harness)) {
	t.Helper()
	for _, b := range []struct {
		name   string
		onDisk bool
	}{{"disk", true}, {"memory", false}} {
		t.Run(b.name, func(t *testing.T) { fn(t, newHarness(t, b.onDisk)) })
	}
}

// rawKeys counts the keys under prefix pfx<scope>\0 straight from Badger.
func rawKeys(t *testing.T, db *DB, pfx, scope string) int {
	t.Helper()
	n := 0
	err := db.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: scopePrefix(pfx, scope)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func allIDs(t *testing.T, m Memory, scope string) []string {
	t.Helper()
	var ids []string
	err := m.All(t.Context(), scope, func(it messages.MemoryItem) error {
		ids = append(ids, it.MemoryID)
		return nil
	})
	if err != nil {
		t.Fatalf("All(%q): %v", scope, err)
	}
	return ids
}

func TestMemoryScopesCountAll(t *testing.T) {
	backends(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		m := h.db.Memory()
		if got, err := m.Scopes(ctx); err != nil || len(got) != 0 {
			t.Fatalf("Scopes of an empty DB = %q, %v", got, err)
		}
		// Scopes that are byte prefixes of one another, and one holding
		// the 0x01 byte scopeEnd seeks to.
		put := map[string][]string{
			"a":     {"z", "b", "m"},
			"a\x01": {"x"},
			"a/b":   {"y1", "y2"},
			"ab":    {"q"},
		}
		for scope, ids := range put {
			for _, id := range ids {
				if err := m.Put(ctx, scope, memItem(id, "content of "+id, t0)); err != nil {
					t.Fatal(err)
				}
			}
		}
		got, err := m.Scopes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"a", "a\x01", "a/b", "ab"}; !slices.Equal(got, want) {
			t.Fatalf("Scopes = %q, want %q", got, want)
		}
		for _, tc := range []struct {
			scope string
			want  []string
		}{
			{"a", []string{"b", "m", "z"}},
			{"a\x01", []string{"x"}},
			{"a/b", []string{"y1", "y2"}},
			{"ab", []string{"q"}},
			{"none", nil},
		} {
			if ids := allIDs(t, m, tc.scope); !slices.Equal(ids, tc.want) {
				t.Errorf("All(%q) = %q, want %q", tc.scope, ids, tc.want)
			}
			if n, err := m.Count(ctx, tc.scope); err != nil || n != len(tc.want) {
				t.Errorf("Count(%q) = %d, %v; want %d", tc.scope, n, err, len(tc.want))
			}
		}
	})
}

func TestMemoryAllStopsAndSnapshots(t *testing.T) {
	backends(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		m := h.db.Memory()
		for i := range 5 {
			if err := m.Put(ctx, "s", memItem(fmt.Sprintf("m%d", i), "x", t0)); err != nil {
				t.Fatal(err)
			}
		}
		stop := errors.New("stop")
		var seen []string
		err := m.All(ctx, "s", func(it messages.MemoryItem) error {
			seen = append(seen, it.MemoryID)
			// Writes made while All runs are not part of its snapshot.
			if err := m.Put(ctx, "s", memItem(it.MemoryID+"-new", "x", t0)); err != nil {
				return err
			}
			if len(seen) == 3 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) {
			t.Fatalf("All error = %v, want the callback's error", err)
		}
		if want := []string{"m0", "m1", "m2"}; !slices.Equal(seen, want) {
			t.Fatalf("All visited %q, want %q", seen, want)
		}
		for _, tc := range []struct {
			name  string
			call  func() error
			wantE error
		}{
			{"All empty scope", func() error { return m.All(ctx, "", func(messages.MemoryItem) error { return nil }) }, ErrInvalid},
			{"Count NUL scope", func() error { _, err := m.Count(ctx, "a\x00b"); return err }, ErrInvalid},
			{"DeleteScope empty scope", func() error { return m.DeleteScope(ctx, "") }, ErrInvalid},
		} {
			if err := tc.call(); !errors.Is(err, tc.wantE) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.wantE)
			}
		}
	})
}

// TestMemoryDeleteScope deletes scopes far larger than one Badger
// transaction, including index entries no item refers to.
func TestMemoryDeleteScope(t *testing.T) {
	for _, tc := range []struct {
		name   string
		onDisk bool
		items  int
	}{
		{"disk empty scope", true, 0},
		{"memory one item", false, 1},
		{"disk many batches", true, 600},
		{"memory many batches", false, 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{memTableSize: 1 << 20} // Badger: ~150 KiB per transaction
			if tc.onDisk {
				o.Dir = t.TempDir()
			} else {
				o.InMemory = true
			}
			db, err := Open(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := db.Close(); err != nil {
					t.Error(err)
				}
			})
			ctx := t.Context()
			m := db.Memory()
			words := strings.Repeat("alpha beta gamma delta epsilon zeta eta theta ", 4)
			for i := range tc.items {
				if err := m.Put(ctx, "big", memItem(fmt.Sprintf("m%04d", i), fmt.Sprintf("%s w%d", words, i), t0.Add(time.Duration(i)))); err != nil {
					t.Fatal(err)
				}
			}
			keep := memItem("k1", "alpha kept", t0)
			if err := m.Put(ctx, "big/other", keep); err != nil {
				t.Fatal(err)
			}
			// An index entry without an item, as an older build could
			// leave behind.
			err = db.bdb.Update(func(txn *badger.Txn) error {
				return txn.Set(postingKey("big", "ghost", t0.UnixNano(), "gone"), make([]byte, 9))
			})
			if err != nil {
				t.Fatal(err)
			}
			groups := db.commit.stats.groups.Load()

			if err := m.DeleteScope(ctx, "big"); err != nil {
				t.Fatalf("DeleteScope: %v", err)
			}
			for _, pfx := range deletePhases {
				if n := rawKeys(t, db, pfx, "big"); n != 0 {
					t.Errorf("%d keys left under %q", n, pfx)
				}
			}
			if tc.items == 600 {
				if g := db.commit.stats.groups.Load() - groups; g < 3 {
					t.Errorf("deleted in %d transactions, want batches", g)
				}
			}
			scopes, err := m.Scopes(ctx)
			if err != nil || !slices.Equal(scopes, []string{"big/other"}) {
				t.Fatalf("Scopes after delete = %q, %v", scopes, err)
			}
			if ids := searchIDs(t, &harness{t: t, db: db}, "big/other", "alpha", SearchOptions{}); !slices.Equal(ids, []string{"k1"}) {
				t.Fatalf("other scope search = %q", ids)
			}
			// The scope is usable again afterwards.
			if err := m.Put(ctx, "big", memItem("again", "alpha", t0)); err != nil {
				t.Fatal(err)
			}
			if ids := searchIDs(t, &harness{t: t, db: db}, "big", "alpha", SearchOptions{}); !slices.Equal(ids, []string{"again"}) {
				t.Fatalf("search after re-put = %q", ids)
			}
		})
	}
}
