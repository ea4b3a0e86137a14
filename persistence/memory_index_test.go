package persistence

import (
	"testing"

	"github.com/silas-ai/silas/messages"
)

// HasKeywordIndex follows the scope's indexed items: raw items never count,
// the first indexed item does, and deleting it ends it; KeywordIndexed says
// in advance which items count.
func TestHasKeywordIndex(t *testing.T) {
	h := newHarness(t, false)
	mem := h.db.Memory()
	has := func(want bool) {
		t.Helper()
		got, err := mem.HasKeywordIndex(t.Context(), "s")
		if err != nil || got != want {
			t.Fatalf("HasKeywordIndex = %v, %v; want %v", got, err, want)
		}
	}
	has(false)

	raw := memItem("raw", "the customer asked about apples", t0)
	raw.ReingestionTier = messages.TierLowReingestion
	if KeywordIndexed(&raw) {
		t.Error("KeywordIndexed(raw item) = true")
	}
	if err := mem.Put(t.Context(), "s", raw); err != nil {
		t.Fatal(err)
	}
	has(false)

	blank := memItem("blank", "?!", t0)
	if KeywordIndexed(&blank) {
		t.Error("KeywordIndexed(item without words) = true")
	}

	fact := memItem("fact", "apples are in season", t0)
	if !KeywordIndexed(&fact) {
		t.Fatal("KeywordIndexed(active fact) = false")
	}
	if err := mem.Put(t.Context(), "s", fact); err != nil {
		t.Fatal(err)
	}
	has(true)
	if got, err := mem.HasKeywordIndex(t.Context(), "other"); err != nil || got {
		t.Errorf("HasKeywordIndex(other scope) = %v, %v", got, err)
	}
	if err := mem.Delete(t.Context(), "s", "fact"); err != nil {
		t.Fatal(err)
	}
	has(false)
	if _, err := mem.HasKeywordIndex(t.Context(), ""); err == nil {
		t.Error("HasKeywordIndex accepted an empty scope")
	}
}
