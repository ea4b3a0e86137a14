package notify

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/keys"
)

func testSub(t *testing.T, endpoint string) persistence.PushSubscription {
	t.Helper()
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	enc := base64.RawURLEncoding
	return persistence.PushSubscription{Endpoint: endpoint, P256dh: enc.EncodeToString(priv.PublicKey().Bytes()), Auth: enc.EncodeToString(auth), AddedAt: time.Now()}
}

func newTestPusher(t *testing.T) (*Pusher, *persistence.DB) {
	t.Helper()
	db, err := persistence.Open(context.Background(), persistence.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	v, created, err := EnsureVAPID(keys.NewMemoryKeystore())
	if err != nil || !created {
		t.Fatalf("EnsureVAPID: %v, created %v", err, created)
	}
	p, err := NewPusher(Options{DB: db, VAPID: v, Backoff: time.Millisecond, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	return p, db
}

// Server errors are retried within Attempts; a card is pushed once
// however often it is reported; a redirect is not followed.
func TestPusherRetriesOnceEachCard(t *testing.T) {
	var calls, elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := calls.Add(1); {
		case r.URL.Path == "/redirect":
			http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
		case n < 3:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusCreated)
		}
	}))
	defer srv.Close()
	p, db := newTestPusher(t)
	ctx := context.Background()
	if _, err := db.PushSubscriptions().Put(ctx, testSub(t, srv.URL+"/sub")); err != nil {
		t.Fatal(err)
	}
	p.NotifyPending(ctx, "req-1", "Write hello.txt")
	if n := calls.Load(); n != 3 {
		t.Fatalf("%d requests, want 2 failures then 1 success", n)
	}
	p.NotifyPending(ctx, "req-1", "Write hello.txt")
	if n := calls.Load(); n != 3 {
		t.Fatalf("the same card was pushed again (%d requests)", n)
	}
	if _, err := db.PushSubscriptions().Delete(ctx, srv.URL+"/sub"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PushSubscriptions().Put(ctx, testSub(t, srv.URL+"/redirect")); err != nil {
		t.Fatal(err)
	}
	p.NotifyPending(ctx, "req-2", "x")
	if elsewhere.Load() != 0 {
		t.Fatal("a redirect from the push service was followed")
	}
	if subs, _ := db.PushSubscriptions().List(ctx); len(subs) != 1 {
		t.Fatalf("%d subscriptions after a refused push, want it kept", len(subs))
	}
}

func TestVAPIDIsStable(t *testing.T) {
	ks := keys.NewMemoryKeystore()
	a, _, err := EnsureVAPID(ks)
	if err != nil {
		t.Fatal(err)
	}
	b, created, err := EnsureVAPID(ks)
	if err != nil || created || a != b {
		t.Fatalf("second EnsureVAPID: %v, created %v, same %v", err, created, a == b)
	}
}

func TestApprovalPayloadIsShort(t *testing.T) {
	long := "Line one\nline two\x00 and a very long title that goes on and on past any reasonable notification width, really"
	p := ApprovalPayload("id", long)
	if r := []rune(p.Title); len(r) > len("Silas is waiting for your approval: ")+maxTitleRunes {
		t.Fatalf("title of %d runes", len(r))
	}
	for _, c := range p.Title {
		if c == '\n' || c == 0 {
			t.Fatalf("title %q keeps control characters", p.Title)
		}
	}
}
