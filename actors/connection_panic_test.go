package actors

import (
	"fmt"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
)

// TestPanickedConnectionClosesItsSocket: a Connection that panics is
// stopped, not restarted with a fresh session: its socket is closed with
// 1011, so the client reconnects and resumes with its own session token.
func TestPanickedConnectionClosesItsSocket(t *testing.T) {
	h := newHarness(t, nil, nil)
	s := newSink()
	c := h.sys.Gateway().Attach(messages.ConnInfo{ID: fmt.Sprint(time.Now().UnixNano()), Path: "/chat"}, s)
	session := s.wait(t, "session", typed("session", "", ""))
	before := h.sys.d.metrics.WSConnections.Value()

	// A nil frame makes onFrame dereference nil: a panic in Receive.
	c.Frame((*messages.Frame)(nil))
	deadline := time.After(5 * time.Second)
	for {
		s.mu.Lock()
		code := s.closed
		s.mu.Unlock()
		if code != 0 {
			if code != closeInternal {
				t.Fatalf("the socket was closed with %d, want %d", code, closeInternal)
			}
			break
		}
		select {
		case <-s.wake:
		case <-deadline:
			t.Fatal("the panicked connection's socket was not closed")
		}
	}
	s.mu.Lock()
	sessions := 0
	for _, ev := range s.events {
		if ev["type"] == "session" {
			sessions++
		}
	}
	s.mu.Unlock()
	if sessions != 1 {
		t.Fatalf("%d session events, want 1 (%v): a restart handed out a new session", sessions, session)
	}
	if after := h.sys.d.metrics.WSConnections.Value(); after != before-1 {
		t.Fatalf("open connections gauge %v after the panic, want %v", after, before-1)
	}
}
