package actors

import (
	"context"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
)

// TestUnconfirmedAnswerGoesOutAgain: a client that turned receipts on and
// closed before confirming an answer gets it again on its next connection,
// with the same bytes; a confirmed one is gone from the store and never
// comes back.
func TestUnconfirmedAnswerGoesOutAgain(t *testing.T) {
	h := newHarness(t, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		return direct("answer"), nil
	}, nil)
	pending := func() []string {
		recs, err := h.db.Outbox().Pending(t.Context(), "owner")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range recs {
			ids = append(ids, r.ReplyTo)
		}
		return ids
	}

	// A: receipts on, m1 answered, never confirmed, then gone.
	a, sa := h.ownerConn()
	a.Frame(&messages.Frame{Type: "received"})
	a.Frame(&messages.Frame{Type: "message", Text: "one", MessageID: "m1"})
	first := sa.wait(t, "answer to m1", typed("message", "reply_to", "m1"))
	checkFor(t, 5*time.Second, func() bool { p := pending(); return len(p) == 1 && p[0] == "m1" },
		"m1's answer kept in the store until confirmed")
	a.Closed()

	// B: gets m1 again, confirms it; it leaves the store.
	b, sb := h.ownerConn()
	again := sb.wait(t, "m1 again", typed("message", "reply_to", "m1"))
	if again["text"] != first["text"] || again["timestamp"] != first["timestamp"] {
		t.Fatalf("redelivered %v, want the same answer as %v", again, first)
	}
	b.Frame(&messages.Frame{Type: "received"})
	// B turned receipts on after the answer reached it: it was handed to a
	// connection without receipts, so it counts as delivered already.
	checkFor(t, 5*time.Second, func() bool { return len(pending()) == 0 }, "m1 delivered to B")
	b.Frame(&messages.Frame{Type: "message", Text: "two", MessageID: "m2"})
	sb.wait(t, "answer to m2", typed("message", "reply_to", "m2"))
	b.Frame(&messages.Frame{Type: "received", ReplyTo: "m2"})
	checkFor(t, 5*time.Second, func() bool { return len(pending()) == 0 }, "m2 deleted once confirmed")
	b.Closed()

	// C: nothing from before comes again; its own message is answered.
	c, sc := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: "three", MessageID: "m3"})
	sc.wait(t, "answer to m3", typed("message", "reply_to", "m3"))
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, ev := range sc.events {
		if ev["type"] == "message" && ev["reply_to"] != "m3" {
			t.Fatalf("C got %v again", ev["reply_to"])
		}
	}
}

// TestReceiptFromAnotherConnectionConfirmsNothing: a connection cannot
// confirm an answer handed to another one (a customer cannot make the
// owner's answers disappear; here two owner devices).
func TestReceiptFromAnotherConnectionConfirmsNothing(t *testing.T) {
	h := newHarness(t, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		return direct("answer"), nil
	}, nil)
	a, sa := h.ownerConn()
	a.Frame(&messages.Frame{Type: "received"})
	a.Frame(&messages.Frame{Type: "message", Text: "one", MessageID: "m1"})
	sa.wait(t, "answer to m1", typed("message", "reply_to", "m1"))
	a.Closed()
	// B turns receipts on with its auth frame, so m1 waits for B's receipt.
	s := newSink()
	b := h.sys.Gateway().Attach(messages.ConnInfo{ID: "b", Path: "/ws"}, s)
	b.Frame(&messages.Frame{Type: "auth", Token: ownerToken, Receipts: true})
	s.wait(t, "m1 on B", typed("message", "reply_to", "m1"))
	// A third connection confirms m1: not its answer, nothing changes. When
	// B goes, m1 goes out again, to C, which is still attached.
	c, sc := h.ownerConn()
	c.Frame(&messages.Frame{Type: "received", ReplyTo: "m1"})
	b.Closed()
	sc.wait(t, "m1 on C after B closed", typed("message", "reply_to", "m1"))
}
