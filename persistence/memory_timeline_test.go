package persistence

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestMemoryTimeline(t *testing.T) {
	h := newHarness(t, false)
	ctx := t.Context()
	base := time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)
	raw := rawItem("raw", "raw conversation")
	raw.CreatedAt = base.Add(30 * time.Hour)
	if err := h.db.Memory().Put(ctx, "s",
		memItem("before", "a fact before", base.Add(-time.Nanosecond)),
		memItem("at-from", "a fact at the start", base),
		memItem("mid", "a fact in the middle", base.Add(25*time.Hour)),
		raw,
		memItem("at-to", "a fact at the end", base.Add(48*time.Hour)),
	); err != nil {
		t.Fatal(err)
	}
	if err := h.db.Memory().Put(ctx, "s2", memItem("other", "another scope", base.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	ids := func(o TimelineOptions) []string {
		t.Helper()
		items, err := h.db.Memory().Timeline(ctx, "s", o)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range items {
			out = append(out, m.MemoryID)
		}
		return out
	}
	window := TimelineOptions{From: base, To: base.Add(48 * time.Hour), Limit: 10}
	if got := ids(window); !slices.Equal(got, []string{"raw", "mid", "at-from"}) {
		t.Errorf("window = %v, want [From, To) newest first", got)
	}
	window.IndexedOnly = true
	if got := ids(window); !slices.Equal(got, []string{"mid", "at-from"}) {
		t.Errorf("indexed only = %v", got)
	}
	if got := ids(TimelineOptions{Limit: 2}); !slices.Equal(got, []string{"at-to", "raw"}) {
		t.Errorf("unbounded, limit 2 = %v", got)
	}
	if got := ids(TimelineOptions{Limit: 10, IndexedOnly: true, MaxScan: 2}); !slices.Equal(got, []string{"at-to"}) {
		t.Errorf("max scan 2 = %v (the raw item counts as read)", got)
	}
	if _, err := h.db.Memory().Timeline(ctx, "s", TimelineOptions{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("limit 0: %v", err)
	}
}
