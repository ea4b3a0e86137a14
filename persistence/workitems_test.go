package persistence

import (
	"errors"
	"testing"

	"github.com/silas-ai/silas/messages"
)

func testWorkItems(t *testing.T, h *harness) {
	ctx := t.Context()
	s := h.db.WorkItems()
	if got, err := s.List(ctx, "s1"); err != nil || len(got) != 0 {
		t.Fatalf("List before Put = %v, %v; want none", got, err)
	}
	w := messages.NewWorkItem("w1", messages.WorkTask, "one")
	w.Status = messages.StatusRunning
	w.Attempts = 1
	w.BudgetUsed = messages.BudgetUsed{Attempts: 1, Tokens: 42, ExecutorRuns: 3}
	w.VerificationResults = []map[string]any{{"attempt": float64(1), "passed": false}}
	w.Ladder = messages.LadderState{Stage: messages.LadderConsulting, Guidance: "check the path", LastFailure: "exit 1", ReplanDepth: 1}
	for _, put := range []struct {
		scope string
		w     *messages.WorkItem
	}{{"s1", w}, {"s1", messages.NewWorkItem("w0", messages.WorkTask, "zero")}, {"s1/x", messages.NewWorkItem("w2", messages.WorkTask, "two")}} {
		if err := s.Put(ctx, put.scope, put.w); err != nil {
			t.Fatal(err)
		}
	}
	w.Attempts = 2
	w.BudgetUsed.Attempts = 2
	if err := s.Put(ctx, "s1", w); err != nil {
		t.Fatal(err)
	}
	got, err := s.List(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "w0" || got[1].ID != "w1" {
		t.Fatalf("List(s1) = %d items, want w0 and w1 of s1 only", len(got))
	}
	r := got[1]
	if r.Status != messages.StatusRunning || r.Attempts != 2 || r.BudgetUsed != w.BudgetUsed || len(r.VerificationResults) != 1 || r.Title != "one" || r.Ladder != w.Ladder {
		t.Fatalf("List(s1)[1] = %+v, want the last version put", r)
	}
	scopes, err := s.Scopes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(scopes) != 2 || scopes[0] != "s1" || scopes[1] != "s1/x" {
		t.Fatalf("Scopes = %q, want s1 and s1/x", scopes)
	}
	for _, id := range []string{"w0", "w1", "w1"} {
		if err := s.Delete(ctx, "s1", id); err != nil {
			t.Fatalf("Delete %s: %v", id, err)
		}
	}
	if got, err := s.List(ctx, "s1"); err != nil || len(got) != 0 {
		t.Fatalf("List after Delete = %d, %v; want none", len(got), err)
	}
	if scopes, err := s.Scopes(ctx); err != nil || len(scopes) != 1 || scopes[0] != "s1/x" {
		t.Fatalf("Scopes after Delete = %q, %v; want s1/x", scopes, err)
	}
	for name, err := range map[string]error{
		"empty scope": s.Put(ctx, "", w),
		"nil item":    s.Put(ctx, "s1", nil),
		"empty id":    s.Put(ctx, "s1", &messages.WorkItem{}),
		"nul scope":   s.Delete(ctx, "a\x00b", "w1"),
	} {
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func testWorkItemsReopen(t *testing.T, h *harness) {
	ctx := t.Context()
	w := messages.NewWorkItem("w1", messages.WorkTask, "one")
	w.Status, w.Attempts = messages.StatusRunning, 1
	w.BudgetUsed = messages.BudgetUsed{Attempts: 1, Tokens: 7}
	if err := h.db.WorkItems().Put(ctx, "s1", w); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	got, err := h.db.WorkItems().List(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Attempts != 1 || got[0].BudgetUsed != w.BudgetUsed || got[0].Status != messages.StatusRunning {
		t.Fatalf("after reopen List = %+v, want the work item put", got)
	}
	if scopes, err := h.db.WorkItems().Scopes(ctx); err != nil || len(scopes) != 1 || scopes[0] != "s1" {
		t.Fatalf("after reopen Scopes = %q, %v; want s1", scopes, err)
	}
}
