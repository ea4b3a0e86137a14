package telegram_test

import (
	"context"
	"testing"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
)

func TestTypingRepeatsUntilStopped(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(8)
	clk := newFakeClock()
	stop := telegram.StartTyping(testCtx(t), newClient(t, s), 8, clk)
	waitActions := func(n int) {
		t.Helper()
		if err := s.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return len(sn.Actions) >= n }); err != nil {
			t.Fatal(err)
		}
	}
	waitActions(1)
	for n := 2; n <= 3; n++ {
		clk.waitWaiters(t, 1)
		clk.Advance(telegram.TypingInterval)
		waitActions(n)
	}
	stop()
	stop() // twice is fine
	clk.Advance(10 * telegram.TypingInterval)
	acts := s.Snapshot().Actions
	if len(acts) != 3 {
		t.Fatalf("%d typing actions after stop, want 3", len(acts))
	}
	for _, a := range acts {
		if a != (fakebot.ChatAction{ChatID: 8, Action: "typing"}) {
			t.Fatalf("action %+v", a)
		}
	}
}

func TestTypingEndsWithContext(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(8)
	ctx, cancel := context.WithCancel(testCtx(t))
	stop := telegram.StartTyping(ctx, newClient(t, s), 8, newFakeClock())
	cancel()
	stop() // returns: the goroutine ended with the context
}
