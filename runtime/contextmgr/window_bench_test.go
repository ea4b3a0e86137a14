package contextmgr

import (
	"fmt"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
)

// BenchmarkRender renders a conversation of 50 turns, as the proxy sees it
// on every turn after a rehydration. Render keeps each zone's blocks, so
// after the first call this is the cost of a render with nothing new;
// BenchmarkFullWindowTurn measures a turn that adds to it.
func BenchmarkRender(b *testing.B) {
	w := New(Budget{Total: 180000, SystemMax: 8000, ChroniclePct: 0.45, MemoryPct: 0.2, WorkspacePct: 0.15})
	now := time.Now()
	for i := range 100 {
		w.Add(messages.ContextItem{
			CtxID: fmt.Sprint(i), Zone: messages.ZoneChronicle, Kind: messages.KindMessage,
			Content: "[auth] owner: a message of ordinary length that asks something about the day", Source: "channel:web",
			Taint: messages.TaintAuth, TurnNumber: i / 2, CreatedAt: now,
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = w.Render()
	}
}

// BenchmarkEnforceBudget runs step 5 on a window of 100 chronicle items
// with tool results, in steady state (nothing left to mask or evict), as
// every turn does.
func BenchmarkEnforceBudget(b *testing.B) {
	w := New(Budget{Total: 180000, SystemMax: 8000, ChroniclePct: 0.45, MemoryPct: 0.2, WorkspacePct: 0.15})
	now := time.Now()
	for i := range 100 {
		kind := messages.KindMessage
		if i%3 == 0 {
			kind = messages.KindToolResult
		}
		w.Add(messages.ContextItem{
			CtxID: fmt.Sprint(i), Zone: messages.ZoneChronicle, Kind: kind, Source: ToolSource(`shell_exec("ls")`, false),
			Content: "[auth] owner: a message of ordinary length that asks something about the day",
			Taint:   messages.TaintAuth, TurnNumber: i / 2, CreatedAt: now,
		})
	}
	w.EnforceBudget(50)
	b.ReportAllocs()
	for b.Loop() {
		_ = w.EnforceBudget(50)
	}
}

// BenchmarkFullWindowTurn is one turn's work on a window with 10 turns of
// history and on one with 10,000, whose chronicle is full (the default
// 180k budget, filled with a support chat of short messages): the message
// and the answer are added, the budget enforced, and the context rendered
// and encoded for the proxy. A turn on a full window should cost about
// what a turn on a short one costs.
func BenchmarkFullWindowTurn(b *testing.B) {
	now := time.Now()
	newWindow := func() *Window {
		return New(Budget{Total: 180000, SystemMax: 8000, ChroniclePct: 0.45, MemoryPct: 0.2, WorkspacePct: 0.15})
	}
	step := func(w *Window, turn int) {
		w.Add(messages.ContextItem{
			CtxID: fmt.Sprint("u", turn), Zone: messages.ZoneChronicle, Kind: messages.KindMessage, Source: "channel:web",
			Content: fmt.Sprintf("[external] customer: Hello, customer 7 here with question %d: when are you open on Saturday?", turn),
			Taint:   messages.TaintExternal, TurnNumber: turn, CreatedAt: now,
		})
		w.Add(messages.ContextItem{
			CtxID: fmt.Sprint("a", turn), Zone: messages.ZoneChronicle, Kind: messages.KindMessage, Source: "agent:proxy",
			Content: "Silas: Echo: we are open on Saturday from nine to five, see you then.",
			Taint:   messages.TaintExternal, TurnNumber: turn, CreatedAt: now,
		})
		w.EnforceBudget(turn)
		_, _ = w.RenderEncoded()
	}
	for _, history := range []int{10, 10000} {
		b.Run(fmt.Sprintf("turns=%d", history), func(b *testing.B) {
			w, turn := newWindow(), 0
			for range history {
				turn++
				step(w, turn)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if history <= 10 && i%10 == 0 {
					// A fresh window every 10 turns keeps the history short.
					b.StopTimer()
					w, turn = newWindow(), 0
					for range history {
						turn++
						step(w, turn)
					}
					b.StartTimer()
				}
				i++
				turn++
				step(w, turn)
			}
		})
	}
}
