package telegram_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
)

// journalHandler journals every update, like the runtime's handler.
func journalHandler(j *journal) telegram.Handler {
	return func(_ context.Context, u telegram.Update) error {
		j.add(u)
		return nil
	}
}

func startPoller(t *testing.T, cfg telegram.PollerConfig) {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	p, err := telegram.NewPoller(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runBG(t, p.Run)
}

// waitJournal blocks until the journal holds n entries.
func waitJournal(t *testing.T, s *fakebot.Server, j *journal, n int) {
	t.Helper()
	// The journal changes only while the fake serves getUpdates, so waiting
	// on the fake's state changes re-checks at the right moments.
	err := s.WaitFor(testCtx(t), func(fakebot.Snapshot) bool { return len(j.snapshot()) >= n })
	if err != nil {
		t.Fatalf("journal has %d entries, want %d: %v", len(j.snapshot()), n, err)
	}
}

func TestPollerHandlesInOrderAndConfirms(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	a := s.PushMessage(1, 1, "first")
	b := s.PushMessage(2, 2, "/start ABCDE-FGHJK")
	c := s.PushCallback(1, 1, 99, "data")
	offsets, j := &memOffsets{}, newJournal()
	startPoller(t, telegram.PollerConfig{Client: newClient(t, s), Store: offsets, Seen: j, Handler: journalHandler(j)})
	waitJournal(t, s, j, 3)
	// Confirmed to Telegram by the next poll's offset.
	if err := s.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return sn.Pending == 0 }); err != nil {
		t.Fatal(err)
	}
	got := j.snapshot()
	if got[0].ID != a || got[1].ID != b || got[0].Text != "first" || got[0].Kind != telegram.KindMessage {
		t.Fatalf("journal = %+v", got)
	}
	if name, arg, ok := got[1].Command(); !ok || name != "start" || arg != "ABCDE-FGHJK" {
		t.Fatalf("Command() = %q %q %v", name, arg, ok)
	}
	cb := got[2]
	if cb.Kind != telegram.KindCallback || cb.CallbackID != c || cb.CallbackData != "data" || cb.ChatID != 1 || cb.MessageID != 99 || cb.From.ID != 1 {
		t.Fatalf("callback update = %+v", cb)
	}
	if !strings.Contains(string(cb.Raw), `"callback_query"`) {
		t.Fatalf("Raw does not hold the update: %s", cb.Raw)
	}
	if offsets.get() != got[2].ID {
		t.Fatalf("offset saved %d, want %d", offsets.get(), got[2].ID)
	}
}

// kill -9 after getUpdates returned and before the update was journaled:
// after the restart the update is handled, exactly once.
func TestPollerCrashBeforeJournalLosesNothing(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	id := s.PushMessage(1, 1, "do not lose me")
	offsets, j := &memOffsets{}, newJournal()

	entered := make(chan struct{})
	ctx, kill := context.WithCancel(testCtx(t))
	p, err := telegram.NewPoller(telegram.PollerConfig{Client: newClient(t, s), Store: offsets, Seen: j, Timeout: time.Second,
		Handler: func(ctx context.Context, u telegram.Update) error {
			close(entered)
			<-ctx.Done() // the process dies here, before journaling
			return ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	<-entered
	kill()
	<-done
	if offsets.get() != 0 || len(j.snapshot()) != 0 {
		t.Fatalf("after the crash: offset %d, journal %d", offsets.get(), len(j.snapshot()))
	}

	startPoller(t, telegram.PollerConfig{Client: newClient(t, s), Store: offsets, Seen: j, Handler: journalHandler(j)})
	waitJournal(t, s, j, 1)
	if err := s.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return sn.Pending == 0 }); err != nil {
		t.Fatal(err)
	}
	if j.times(id) != 1 {
		t.Fatalf("update journaled %d times, want 1", j.times(id))
	}
}

// kill -9 after the update was journaled and before its offset was saved:
// Telegram sends it again after the restart, and Seen keeps it from being
// handled twice.
func TestPollerCrashAfterJournalHandlesOnce(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	id := s.PushMessage(1, 1, "once only")
	offsets, j := &memOffsets{failSaves: 1}, newJournal()
	var calls atomic.Int32
	handler := func(_ context.Context, u telegram.Update) error {
		calls.Add(1)
		j.add(u)
		return nil
	}

	ctx, kill := context.WithCancel(testCtx(t))
	clk := newFakeClock() // never advanced: the first poller stays in its backoff
	p, _ := telegram.NewPoller(telegram.PollerConfig{Client: newClient(t, s), Store: offsets, Seen: j, Handler: handler, Clock: clk, Timeout: time.Second})
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	clk.waitWaiters(t, 1) // Save failed: backing off
	kill()
	<-done
	if offsets.get() != 0 || j.times(id) != 1 {
		t.Fatalf("after the crash: offset %d, journaled %d times", offsets.get(), j.times(id))
	}

	startPoller(t, telegram.PollerConfig{Client: newClient(t, s), Store: offsets, Seen: j, Handler: handler})
	if err := s.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return sn.Pending == 0 }); err != nil {
		t.Fatal(err)
	}
	if j.times(id) != 1 || calls.Load() != 1 {
		t.Fatalf("update handled %d times (journaled %d), want once", calls.Load(), j.times(id))
	}
	if offsets.get() != id {
		t.Fatalf("offset %d, want %d", offsets.get(), id)
	}
}

// A failing handler gets the same update again, and later updates wait
// their turn.
func TestPollerRetriesFailedUpdateInOrder(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	a := s.PushMessage(1, 1, "a")
	b := s.PushMessage(1, 1, "b")
	var mu sync.Mutex
	var order []int64
	fails := 2
	clk := newFakeClock()
	clk.auto(t)
	offsets := &memOffsets{}
	startPoller(t, telegram.PollerConfig{Client: newClient(t, s), Store: offsets, Clock: clk,
		Handler: func(_ context.Context, u telegram.Update) error {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, u.ID)
			if u.ID == a && fails > 0 {
				fails--
				return errors.New("journal unavailable")
			}
			return nil
		}})
	if err := s.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return sn.Pending == 0 }); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []int64{a, a, a, b}
	if len(order) != len(want) {
		t.Fatalf("handler saw %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("handler saw %v, want %v", order, want)
		}
	}
}

func TestPollerHonoursRetryAfter(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.RateLimit("getUpdates", 1, 7)
	s.PushMessage(1, 1, "x")
	clk := newFakeClock()
	start := clk.Now()
	clk.auto(t)
	j := newJournal()
	startPoller(t, telegram.PollerConfig{Client: newClient(t, s), Store: &memOffsets{}, Handler: journalHandler(j), Clock: clk})
	waitJournal(t, s, j, 1)
	if waited := clk.Now().Sub(start); waited < 7*time.Second {
		t.Fatalf("poller waited %v after a 429 with retry_after 7", waited)
	}
}

func TestPollerStopsOnBadToken(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	c, err := telegram.NewClient(telegram.Config{Token: "999:wrong-token", APIURL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	p, err := telegram.NewPoller(telegram.PollerConfig{Client: c, Store: &memOffsets{}, Handler: journalHandler(newJournal()), Log: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Run(testCtx(t))
	if !errors.Is(err, telegram.ErrUnauthorized) {
		t.Fatalf("Run with a bad token: %v, want ErrUnauthorized", err)
	}
	if strings.Contains(err.Error(), "wrong-token") {
		t.Fatalf("the error shows the token: %v", err)
	}
}

// A webhook left set makes getUpdates fail with a conflict; the poller logs
// it (without the token) and keeps trying, and resumes once it is gone.
func TestPollerConflictIsRetried(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	c := newClient(t, s)
	if err := c.SetWebhook(testCtx(t), "https://hook.example/tg", strings.Repeat("s", 32)); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	clk := newFakeClock()
	clk.auto(t)
	j := newJournal()
	startPoller(t, telegram.PollerConfig{Client: c, Store: &memOffsets{}, Handler: journalHandler(j), Clock: clk, Log: zerolog.New(&logs)})
	if err := s.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return sn.Calls("getUpdates", 409) >= 2 }); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteWebhook(testCtx(t), false); err != nil {
		t.Fatal(err)
	}
	s.PushMessage(1, 1, "after the webhook")
	waitJournal(t, s, j, 1)
	out := logs.String()
	if !strings.Contains(out, "webhook") || strings.Contains(out, s.Token()) {
		t.Fatalf("log: %s", out)
	}
}

func TestNewPollerNeedsItsParts(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	c := newClient(t, s)
	h := journalHandler(newJournal())
	for _, cfg := range []telegram.PollerConfig{
		{Store: &memOffsets{}, Handler: h},
		{Client: c, Handler: h},
		{Client: c, Store: &memOffsets{}},
	} {
		if _, err := telegram.NewPoller(cfg); !errors.Is(err, telegram.ErrInvalidConfig) {
			t.Errorf("NewPoller(%+v) = %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the poller's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
