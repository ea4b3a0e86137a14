package actors

import (
	"context"
	"fmt"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
)

// BenchmarkTurn runs whole turns in process: frame in, journal, pipeline,
// scripted proxy answer, commit, answer out. The store is in-memory Badger,
// so this measures the runtime's own cost, not the disk's.
func BenchmarkTurn(b *testing.B) {
	t := &testing.T{}
	h := newHarness(t, func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		return direct("ok"), nil
	}, map[string]any{
		"silas.limits.ws_messages_per_minute_per_scope": 100000000,
		"silas.limits.llm_calls_per_minute_per_scope":   100000000,
	})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10e9)
		defer cancel()
		_ = h.sys.Stop(ctx)
		h.db.Close()
	}()
	// Each customer has a conversation of ten turns, so the context stays
	// the size of an ordinary chat rather than growing with b.N.
	var c messages.Conn
	var s *sink
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%10 == 0 {
			s = newSink()
			c = h.sys.Gateway().Attach(messages.ConnInfo{ID: fmt.Sprint("bench", i), Path: "/chat"}, s)
		}
		i++
		id := fmt.Sprint("m", i)
		c.Frame(&messages.Frame{Type: "message", Text: "hello", MessageID: id})
		s.wait(t, "answer", typed("message", "reply_to", id))
		s.mu.Lock()
		s.events = s.events[:0]
		s.mu.Unlock()
	}
}
