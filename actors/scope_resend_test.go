package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/llm"
)

// TestResendWhileLoadingIsAnsweredOnce: a message journaled before a crash
// and resent by its client, with its message_id, while the scope is still
// loading is acknowledged and answered exactly once, whichever comes first
// of the load and the resend's own journal write (which finds the stored
// message and reports a duplicate).
func TestResendWhileLoadingIsAnsweredOnce(t *testing.T) {
	for i := range 10 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var calls atomic.Int32
			h := newHarness(t, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
				calls.Add(1)
				return direct("answer"), nil
			}, nil)
			// The message the crashed daemon had journaled and not answered.
			payload, _ := json.Marshal(queuedPayload{Channel: "web", SenderID: h.cfg.OwnerID, Text: "before the crash", Authenticated: true, ReceivedAt: time.Now()})
			if _, err := h.db.Queue().Enqueue(t.Context(), persistence.QueueRecord{
				MessageID: "m1", ScopeID: "owner", TraceID: "m1", Kind: "user_message",
				Taint: messages.TaintAuth, Payload: payload, EnqueuedAt: time.Now(),
			}); err != nil {
				t.Fatal(err)
			}
			s := newSink()
			c := h.sys.Gateway().Attach(messages.ConnInfo{ID: "c1", Path: "/ws"}, s)
			// The resend comes with the auth frame: the scope is loading.
			c.Frame(&messages.Frame{Type: "auth", Token: ownerToken})
			c.Frame(&messages.Frame{Type: "message", Text: "before the crash", MessageID: "m1"})
			s.wait(t, "ack of m1", typed("ack", "message_id", "m1"))
			s.wait(t, "answer to m1", typed("message", "reply_to", "m1"))
			// Turns run one at a time: once m2 is answered, a second turn
			// of m1 would have run too.
			c.Frame(&messages.Frame{Type: "message", Text: "after", MessageID: "m2"})
			s.wait(t, "answer to m2", typed("message", "reply_to", "m2"))
			s.mu.Lock()
			defer s.mu.Unlock()
			answers := 0
			for _, ev := range s.events {
				if ev["type"] == "message" && ev["reply_to"] == "m1" {
					answers++
				}
			}
			if answers != 1 || calls.Load() != 2 {
				t.Fatalf("m1 answered %d times with %d model calls for m1 and m2, want once and 2", answers, calls.Load())
			}
		})
	}
}

// TestJournalWriteLandingAfterARestartIsRun: a scope that panicked while
// a message's journal write was in flight restarts, and its load reads the
// store before that write lands. The write's result, arriving at the new
// instance, makes it take the message in: it is answered, not left in the
// store until the next start.
func TestJournalWriteLandingAfterARestartIsRun(t *testing.T) {
	h := newHarness(t, func(context.Context, *llm.Request) (*llm.Response, error) { return direct("answer"), nil }, nil)
	c, s := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: "first", MessageID: "m1"})
	s.wait(t, "answer to m1", typed("message", "reply_to", "m1"))

	// The write of the old instance landed in the store...
	msg := &messages.UserMessage{MessageID: "m2", Channel: "web", SenderID: h.cfg.OwnerID, Text: "second", Authenticated: true, ReceivedAt: time.Now()}
	payload, _ := json.Marshal(queuedPayload{Channel: msg.Channel, SenderID: msg.SenderID, Text: msg.Text, Authenticated: true, ReceivedAt: msg.ReceivedAt})
	if _, err := h.db.Queue().Enqueue(t.Context(), persistence.QueueRecord{
		MessageID: "m2", ScopeID: "owner", TraceID: "m2", Kind: "user_message", Taint: messages.TaintAuth, Payload: payload, EnqueuedAt: msg.ReceivedAt,
	}); err != nil {
		t.Fatal(err)
	}
	// ...and its result reaches the loaded instance, which never saw m2.
	root := h.sys.d.sys.Root
	res, err := root.RequestFuture(h.sys.d.stream, &messages.ScopeFor{ScopeID: "owner"}, 5*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	root.Send(res.(*messages.ScopeRef).PID, &journaled{messageID: "m2", msg: msg})
	s.wait(t, "answer to m2", typed("message", "reply_to", "m2"))
	checkFor(t, 5*time.Second, func() bool {
		p, err := h.db.Queue().PendingFor(t.Context(), "owner")
		return err == nil && len(p) == 0
	}, "m2 no longer pending in the store")
}
