package persistence

import (
	"errors"
	"testing"
	"time"
)

func TestSkillRequestsStore(t *testing.T) {
	h := newHarness(t, true)
	ctx := t.Context()
	st := h.db.SkillRequests()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	later := SkillRequest{RequestID: "b", Name: "word-count", Hash: "h2", Dir: "/stage/b/word-count", Stage: "/stage/b", Origin: "skill-maker",
		WorkItemID: "task-1", CreatedAt: t0.Add(time.Second), ExpiresAt: t0.Add(time.Hour)}
	first := SkillRequest{RequestID: "a", Name: "greeter", Hash: "h1", Dir: "/skills/greeter", Origin: "local",
		Transformation: []byte(`{"format":"claude"}`), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	for _, r := range []SkillRequest{later, first} {
		if err := st.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].RequestID != "a" || got[1].RequestID != "b" || string(got[0].Transformation) != `{"format":"claude"}` ||
		got[1].Stage != later.Stage || got[1].WorkItemID != "task-1" || !got[1].ExpiresAt.Equal(later.ExpiresAt) {
		t.Fatalf("list %+v, want a then b as stored", got)
	}
	if err := st.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "a"); err != nil {
		t.Fatalf("deleting a missing request: %v", err)
	}
	if got, _ := st.List(ctx); len(got) != 1 || got[0].RequestID != "b" {
		t.Fatalf("after delete: %+v", got)
	}
	// Installed skills and requests share no keys.
	if all, err := h.db.Skills().List(ctx); err != nil || len(all) != 0 {
		t.Fatalf("skills list sees requests: %v %v", all, err)
	}
	for _, bad := range []SkillRequest{
		{Name: "x", Hash: "h", Dir: "/d", ExpiresAt: t0},
		{RequestID: "c", Name: "Bad Name", Hash: "h", Dir: "/d", ExpiresAt: t0},
		{RequestID: "c", Name: "ok", Dir: "/d", ExpiresAt: t0},
	} {
		if err := st.Put(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("put %+v: %v, want ErrInvalid", bad, err)
		}
	}
}
