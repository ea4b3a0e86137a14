package persistence

import (
	"testing"
	"time"
)

func TestOwnerVisits(t *testing.T) {
	h := newHarness(t, true)
	ctx := t.Context()
	if last, err := h.db.OwnerVisits().Last(ctx); err != nil || !last.IsZero() {
		t.Fatalf("no visit yet: %v %v", last, err)
	}
	t1 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	if prev, err := h.db.OwnerVisits().Record(ctx, t1); err != nil || !prev.IsZero() {
		t.Fatalf("first visit: %v %v", prev, err)
	}
	h.reopen()
	prev, err := h.db.OwnerVisits().Record(ctx, t1.Add(time.Hour))
	if err != nil || !prev.Equal(t1) {
		t.Fatalf("second visit returned %v %v, want %v", prev, err, t1)
	}
	if last, _ := h.db.OwnerVisits().Last(ctx); !last.Equal(t1.Add(time.Hour)) {
		t.Fatalf("last %v", last)
	}
}
