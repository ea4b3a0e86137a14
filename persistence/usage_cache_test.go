package persistence

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// testUsageConcurrentAdds: adds to one scope that share commit groups
// (the committer stages them on one transaction) all count.
func testUsageConcurrentAdds(t *testing.T, h *harness) {
	ctx := t.Context()
	const n = 64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := h.db.Usage().Add(ctx, "s1", UsageRecord{Calls: 1, PromptTokens: 3}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got, err := h.db.Usage().Get(ctx, "s1"); err != nil || got.Calls != n || got.PromptTokens != 3*n {
		t.Fatalf("total %+v, %v; want %d calls", got, err, n)
	}
}

// testUsageReopenContinues: totals kept in the committer's cache continue
// from what is on disk after a reopen, not from zero.
func testUsageReopenContinues(t *testing.T, h *harness) {
	ctx := t.Context()
	for range 3 {
		if err := h.db.Usage().Add(ctx, "s1", UsageRecord{Calls: 1}); err != nil {
			t.Fatal(err)
		}
	}
	h.reopen()
	if err := h.db.Usage().Add(ctx, "s1", UsageRecord{Calls: 1}); err != nil {
		t.Fatal(err)
	}
	for name, get := range map[string]func() (UsageRecord, error){
		"total": func() (UsageRecord, error) { return h.db.Usage().Get(ctx, "s1") },
		"today": func() (UsageRecord, error) { return h.db.Usage().Day(ctx, "s1", time.Now()) },
	} {
		if got, err := get(); err != nil || got.Calls != 4 {
			t.Fatalf("%s after reopen %+v, %v; want 4 calls", name, got, err)
		}
	}
}

// testUsageDayRollover: a new day starts its own record while the total
// goes on, and the earlier day keeps its count.
func testUsageDayRollover(t *testing.T, h *harness) {
	ctx := t.Context()
	day1 := time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)
	day2 := day1.Add(2 * time.Hour)
	add := func(at time.Time, calls int) {
		t.Helper()
		err := h.db.update(ctx, func(txn *wtxn) error { return stageUsage(txn, "s1", UsageRecord{Calls: calls}, at) })
		if err != nil {
			t.Fatal(err)
		}
	}
	add(day1, 2)
	add(day2, 5)
	add(day2, 1)
	add(day1, 1) // late: back to the first day, read from disk again
	want := map[time.Time]int{day1: 3, day2: 6}
	for day, calls := range want {
		if got, err := h.db.Usage().Day(ctx, "s1", day); err != nil || got.Calls != calls {
			t.Errorf("day %s: %+v, %v; want %d calls", day.Format(time.DateOnly), got, err, calls)
		}
	}
	if got, err := h.db.Usage().Get(ctx, "s1"); err != nil || got.Calls != 9 {
		t.Errorf("total %+v, %v; want 9 calls", got, err)
	}
}

// testUsageDirtyStageNotCached: a write whose stage fails after adding
// usage is dropped with its whole transaction; the usage it staged must not
// count, and the next add counts from what was committed.
func testUsageDirtyStageNotCached(t *testing.T, h *harness) {
	ctx := t.Context()
	if err := h.db.Usage().Add(ctx, "s1", UsageRecord{Calls: 1}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := h.db.update(ctx, func(txn *wtxn) error {
		if err := stageUsage(txn, "s1", UsageRecord{Calls: 100}, time.Now()); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("failed stage: %v", err)
	}
	if err := h.db.Usage().Add(ctx, "s1", UsageRecord{Calls: 1}); err != nil {
		t.Fatal(err)
	}
	if got, err := h.db.Usage().Get(ctx, "s1"); err != nil || got.Calls != 2 {
		t.Fatalf("total %+v, %v; want 2 calls (the failed write's 100 dropped)", got, err)
	}
}
