package persistence

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func TestSecureInputsLifecycle(t *testing.T) {
	h := newHarness(t, true)
	ctx := t.Context()
	s := h.db.SecureInputs()
	req := SecureInputRequest{RefID: "notion-token_1", Label: "Notion integration token", InputHint: "ntn_", Scope: "owner"}
	if err := s.Create(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, req); !errors.Is(err, ErrInvalid) {
		t.Fatalf("second create of one ref: %v", err)
	}
	p, err := s.Pending(ctx)
	if err != nil || len(p) != 1 || p[0].Label != req.Label || p[0].CreatedAt.IsZero() {
		t.Fatalf("pending: %v %+v", err, p)
	}
	if err := s.MarkFulfilled(ctx, "unknown", time.Now()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("fulfil unknown: %v", err)
	}
	if err := s.MarkFulfilled(ctx, req.RefID, time.Now()); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	s = h.db.SecureInputs()
	if err := s.MarkFulfilled(ctx, req.RefID, time.Now()); !errors.Is(err, ErrFulfilled) {
		t.Fatalf("fulfil twice: %v, want ErrFulfilled", err)
	}
	if p, _ := s.Pending(ctx); len(p) != 0 {
		t.Fatalf("fulfilled request still pending: %+v", p)
	}
	if err := s.Delete(ctx, req.RefID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, req.RefID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestSecureInputsRefIDRules(t *testing.T) {
	h := newHarness(t, false)
	for _, ref := range []string{"", ".hidden", "a/b", "a b", "x\x00", string(make([]byte, 129))} {
		err := h.db.SecureInputs().Create(t.Context(), SecureInputRequest{RefID: ref, Label: "l"})
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("ref %q: %v, want ErrInvalid", ref, err)
		}
		if _, err := h.db.SecureInputs().Get(t.Context(), ref); !errors.Is(err, ErrNotFound) {
			t.Errorf("get %q: %v, want ErrNotFound", ref, err)
		}
	}
	if err := h.db.SecureInputs().Create(t.Context(), SecureInputRequest{RefID: "ok"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty label: %v", err)
	}
}

func TestSecureInputsFulfilOnceUnderRace(t *testing.T) {
	h := newHarness(t, false)
	ctx := t.Context()
	if err := h.db.SecureInputs().Create(ctx, SecureInputRequest{RefID: "r", Label: "l"}); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.db.SecureInputs().MarkFulfilled(ctx, "r", time.Now())
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrFulfilled):
			t.Fatalf("fulfil: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d concurrent fulfilments succeeded, want 1", ok)
	}
}
