package approval_test

import (
	"context"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/approval"
)

// persistence.Nonces is the production NonceStore.
var _ approval.NonceStore = persistence.Nonces{}

func TestMemoryNonces(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s := approval.NewMemoryNonces(clk.now)
	steps := []struct {
		name      string
		advance   time.Duration
		op        string // consume or used
		domain    string
		nonce     string
		ttl       time.Duration
		want      bool
		wantError bool
	}{
		{name: "unknown is unused", op: "used", domain: "exec", nonce: "a", want: false},
		{name: "first consume is fresh", op: "consume", domain: "exec", nonce: "a", ttl: time.Minute, want: true},
		{name: "now used", op: "used", domain: "exec", nonce: "a", want: true},
		{name: "second consume is not fresh", op: "consume", domain: "exec", nonce: "a", ttl: time.Minute, want: false},
		{name: "other domain is separate", op: "consume", domain: "msg", nonce: "a", ttl: time.Minute, want: true},
		{name: "still used just before expiry", advance: time.Minute - time.Nanosecond, op: "used", domain: "exec", nonce: "a", want: true},
		{name: "forgotten at expiry", advance: time.Nanosecond, op: "used", domain: "exec", nonce: "a", want: false},
		{name: "fresh again after expiry", op: "consume", domain: "exec", nonce: "a", ttl: time.Minute, want: true},
		{name: "empty nonce refused", op: "consume", domain: "exec", nonce: "", ttl: time.Minute, wantError: true},
		{name: "zero ttl refused", op: "consume", domain: "exec", nonce: "b", ttl: 0, wantError: true},
	}
	for _, st := range steps {
		clk.advance(st.advance)
		var got bool
		var err error
		if st.op == "consume" {
			got, err = s.Consume(ctx, st.domain, st.nonce, st.ttl)
		} else {
			got, err = s.IsUsed(ctx, st.domain, st.nonce)
		}
		if (err != nil) != st.wantError || (err == nil && got != st.want) {
			t.Fatalf("%s: got %v, %v; want %v, error=%v", st.name, got, err, st.want, st.wantError)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Consume(cancelled, "exec", "c", time.Minute); err == nil {
		t.Fatal("Consume ignored a cancelled context")
	}
}

// TestWithBadgerNonceStore runs the single-use and replay scenario against
// the production nonce store.
func TestWithBadgerNonceStore(t *testing.T) {
	ctx := context.Background()
	db, err := persistence.Open(ctx, persistence.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	// persistence reads the wall clock for nonce expiry; the engine's clock
	// must agree with it here.
	now := func() time.Time { return time.Now() }
	e, err := approval.New(newManager(t, goldenSeed), db.Nonces(), now, approval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	w := task(t)
	tok, err := e.IssueToken(w, approve(), messages.ApprovalFullPlan)
	if err != nil {
		t.Fatal(err)
	}
	stale := clone(t, tok)
	wantErr(t, "verify", e.Verify(ctx, tok, w, nil), nil)
	wantErr(t, "check", e.Check(ctx, tok, w), nil)
	wantErr(t, "verify stale copy", e.Verify(ctx, stale, w, nil), approval.ErrReplay)
	wantErr(t, "verify again", e.Verify(ctx, tok, w, nil), approval.ErrExhausted)
}
