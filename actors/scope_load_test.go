package actors

import (
	"context"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
)

// TestScopeLoadFailureRetries: a scope whose state cannot be read (here a
// corrupt snapshot) does not crash-loop its supervisor into giving up; it
// retries with backoff, holds the message it got, and answers it once its
// state reads again.
func TestScopeLoadFailureRetries(t *testing.T) {
	h := newHarness(t, func(context.Context, *llm.Request) (*llm.Response, error) { return direct("back"), nil }, nil)
	db := h.sys.d.DB
	if err := db.Snapshots().Save(t.Context(), "owner", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	c, s := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: "hello", MessageID: "m1"})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := h.sys.d.sys.Root.RequestFuture(h.sys.d.audit, &messages.Flush{}, 5*time.Second).Result(); err != nil {
			t.Fatalf("flush audit: %v", err)
		}
		entries, err := db.Audit().Range(t.Context(), 0, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range entries {
			if e.Event == "scope_load_failed" {
				n++
			}
		}
		if n >= 2 {
			break // it tried again, and it is still there to try once more
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d scope_load_failed audit entries, want the failure and a retry", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := db.Snapshots().Save(t.Context(), "owner", []byte(`{"turn":0}`)); err != nil {
		t.Fatal(err)
	}
	if ev := s.wait(t, "the answer after the state reads again", typed("message", "reply_to", "m1")); ev["text"] != "back" {
		t.Fatalf("answer %v", ev)
	}
}
