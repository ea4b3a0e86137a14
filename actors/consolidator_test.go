package actors

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/llm"
)

var consT0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func consItem(id, content string, age int, trust messages.TrustLevel, taint messages.TaintLevel, tags ...string) messages.MemoryItem {
	at := consT0.Add(time.Duration(age) * time.Minute)
	return messages.MemoryItem{
		MemoryID: id, Content: content, MemoryType: messages.MemoryFact, ReingestionTier: messages.TierActive,
		TrustLevel: trust, Taint: taint, CreatedAt: at, UpdatedAt: at, SemanticTags: tags, SourceKind: messages.SourceMemoryOp,
	}
}

func TestPlanMerges(t *testing.T) {
	w, v, o, x := messages.TrustWorking, messages.TrustVerified, messages.TaintOwner, messages.TaintExternal
	items := []messages.MemoryItem{
		consItem("b", "The owner likes  green tea.", 2, w, o, "drinks"),
		consItem("a", "the owner likes green tea.", 1, w, o, "tea"),
		consItem("c", "THE OWNER LIKES GREEN TEA.", 3, w, o, "tea", "morning"),
		// Same words, other trust or taint: never merged into the above.
		consItem("d", "The owner likes green tea.", 0, v, o, "verified"),
		consItem("e", "The owner likes green tea.", 0, w, x, "from-customer"),
		consItem("f", "Something else entirely.", 0, w, o),
	}
	got := planMerges(items, consT0.Add(time.Hour))
	if len(got) != 1 {
		t.Fatalf("groups = %+v, want one", got)
	}
	g := got[0]
	if g.keep.MemoryID != "a" || !slices.Equal(g.drop, []string{"b", "c"}) {
		t.Fatalf("keep %s drop %v, want the oldest kept and the rest dropped", g.keep.MemoryID, g.drop)
	}
	if !slices.Equal(g.keep.SemanticTags, []string{"tea", "drinks", "morning"}) || g.keep.TrustLevel != w || g.keep.Taint != o {
		t.Fatalf("survivor %+v", g.keep)
	}
	if !g.keep.UpdatedAt.Equal(consT0.Add(time.Hour)) {
		t.Errorf("survivor updated_at %s", g.keep.UpdatedAt)
	}
}

// A tick runs a pass over the real store: duplicates merge, everything else
// (another scope, the raw lane, a verified twin) stays, and search still
// finds the fact once.
func TestConsolidatorMergesDuplicates(t *testing.T) {
	h := newHarness(t, func(context.Context, *llm.Request) (*llm.Response, error) { return &llm.Response{}, nil }, nil)
	ctx := t.Context()
	mem := h.db.Memory()
	raw := consItem("raw", "The owner likes green tea.", 0, messages.TrustWorking, messages.TaintOwner)
	raw.ReingestionTier = messages.TierLowReingestion
	if err := mem.Put(ctx, "owner",
		consItem("a", "The owner likes green tea.", 1, messages.TrustWorking, messages.TaintOwner),
		consItem("b", "the owner likes green  tea.", 2, messages.TrustWorking, messages.TaintOwner, "tea"),
		consItem("v", "The owner likes green tea.", 3, messages.TrustVerified, messages.TaintOwner),
		raw); err != nil {
		t.Fatal(err)
	}
	if err := mem.Put(ctx, "c-1",
		consItem("a", "The owner likes green tea.", 1, messages.TrustWorking, messages.TaintExternal)); err != nil {
		t.Fatal(err)
	}

	h.sys.d.sys.Root.Send(h.sys.consolidator, &consolidateTick{})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := mem.Get(ctx, "owner", "b"); err != nil {
			break // the duplicate is gone
		}
		if time.Now().After(deadline) {
			t.Fatal("duplicate not merged within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	kept, err := mem.Get(ctx, "owner", "a")
	if err != nil || !slices.Contains(kept.SemanticTags, "tea") {
		t.Fatalf("survivor %+v, %v: want it with the duplicate's tags", kept, err)
	}
	for _, id := range []string{"v", "raw"} {
		if _, err := mem.Get(ctx, "owner", id); err != nil {
			t.Errorf("%s was merged away: %v", id, err)
		}
	}
	if _, err := mem.Get(ctx, "c-1", "a"); err != nil {
		t.Errorf("another scope's item was touched: %v", err)
	}
	res, err := mem.Search(ctx, "owner", "green tea", persistence.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range res {
		ids = append(ids, r.Item.MemoryID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"a", "v"}) {
		t.Errorf("search after the merge finds %v, want a and v", ids)
	}
}
