package telegram_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
)

// deliveries collects the outbox's callbacks.
type deliveries struct {
	mu     sync.Mutex
	ok     []telegram.Delivery
	failed []string
	errs   []error
	ch     chan struct{}
}

func newDeliveries() *deliveries { return &deliveries{ch: make(chan struct{}, 1000)} }

func (d *deliveries) config(clk telegram.Clock) telegram.OutboxConfig {
	return telegram.OutboxConfig{
		Clock: clk,
		OnDelivered: func(x telegram.Delivery) {
			d.mu.Lock()
			d.ok = append(d.ok, x)
			d.mu.Unlock()
			d.ch <- struct{}{}
		},
		OnFailed: func(m telegram.Message, err error) {
			d.mu.Lock()
			d.failed = append(d.failed, m.Ref)
			d.errs = append(d.errs, err)
			d.mu.Unlock()
			d.ch <- struct{}{}
		},
	}
}

// wait blocks until n callbacks (delivered or failed) happened in all.
func (d *deliveries) wait(t *testing.T, n int) {
	t.Helper()
	ctx := testCtx(t)
	for {
		d.mu.Lock()
		got := len(d.ok) + len(d.failed)
		d.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-d.ch:
		case <-ctx.Done():
			t.Fatalf("%d outbox callbacks, want %d", got, n)
		}
	}
}

func (d *deliveries) delivered() []telegram.Delivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.ok)
}

func msgs(chat int64, n int, prefix string) []telegram.Message {
	out := make([]telegram.Message, 0, n)
	for i := range n {
		ref := fmt.Sprintf("%s%02d", prefix, i)
		out = append(out, telegram.Message{ChatID: chat, HTML: "message <b>" + ref + "</b>", Ref: ref})
	}
	return out
}

// A burst of 20 messages to one chat, with Telegram answering the first two
// tries with 429 retry_after 5: all 20 arrive, in order, none twice, a
// second or more apart, the first only after the 10 seconds Telegram asked
// for.
func TestOutboxBurstToOneChatSurvives429InOrder(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(42)
	s.RateLimit("sendMessage", 2, 5)
	clk := newFakeClock()
	start := clk.Now()
	d := newDeliveries()
	out := telegram.NewOutbox(newClient(t, s), d.config(clk))
	if err := out.Enqueue(msgs(42, 20, "m")...); err != nil {
		t.Fatal(err)
	}
	clk.auto(t)
	runBG(t, out.Run)
	d.wait(t, 20)

	sent := s.Sent()
	if len(sent) != 20 {
		t.Fatalf("%d messages reached Telegram, want 20", len(sent))
	}
	for i, m := range sent {
		if want := fmt.Sprintf("message m%02d", i); m.Plain != want {
			t.Fatalf("message %d is %q, want %q (order broken or duplicate)", i, m.Plain, want)
		}
	}
	got := d.delivered()
	if got[0].Attempts != 3 {
		t.Fatalf("first message took %d attempts, want 3 (two 429s)", got[0].Attempts)
	}
	if wait := got[0].SentAt.Sub(start); wait < 10*time.Second {
		t.Fatalf("first message sent %v after the start, before the 2×5s Telegram asked for", wait)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Message.Ref != fmt.Sprintf("m%02d", i) || got[i].MessageID <= got[i-1].MessageID {
			t.Fatalf("delivery %d: %+v", i, got[i])
		}
		if gap := got[i].SentAt.Sub(got[i-1].SentAt); gap < time.Second {
			t.Fatalf("messages %d and %d to one chat %v apart, want ≥ 1s", i-1, i, gap)
		}
	}
	if out.Len() != 0 {
		t.Fatalf("outbox still holds %d", out.Len())
	}
	if n := s.Snapshot().Calls("sendMessage", http.StatusTooManyRequests); n != 2 {
		t.Fatalf("%d 429s served, want 2", n)
	}
}

// Many chats at once: never more than 30 requests in any second, and each
// chat's messages in order.
func TestOutboxGlobalPacing(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	clk := newFakeClock()
	d := newDeliveries()
	cfg := d.config(clk)
	cfg.MaxInFlight = 8
	out := telegram.NewOutbox(newClient(t, s), cfg)
	var all []telegram.Message
	for chat := int64(1); chat <= 40; chat++ {
		s.KnownChat(chat)
		all = append(all, msgs(chat, 2, fmt.Sprintf("c%d-", chat))...)
	}
	if err := out.Enqueue(all...); err != nil {
		t.Fatal(err)
	}
	clk.auto(t)
	runBG(t, out.Run)
	d.wait(t, 80)

	got := d.delivered()
	times := make([]time.Time, 0, len(got))
	last := map[int64]telegram.Delivery{}
	for _, x := range got {
		times = append(times, x.SentAt)
		if prev, ok := last[x.Message.ChatID]; ok {
			if x.Message.Ref < prev.Message.Ref || x.SentAt.Sub(prev.SentAt) < time.Second {
				t.Fatalf("chat %d: %q at %v after %q at %v", x.Message.ChatID, x.Message.Ref, x.SentAt, prev.Message.Ref, prev.SentAt)
			}
		}
		last[x.Message.ChatID] = x
	}
	slices.SortFunc(times, time.Time.Compare)
	for i := 30; i < len(times); i++ {
		if times[i].Sub(times[i-30]) < time.Second {
			t.Fatalf("31 requests within %v (from %d to %d)", times[i].Sub(times[i-30]), i-30, i)
		}
	}
}

func TestOutboxGroupPacing(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(-100)
	clk := newFakeClock()
	d := newDeliveries()
	out := telegram.NewOutbox(newClient(t, s), d.config(clk))
	if err := out.Enqueue(msgs(-100, 3, "g")...); err != nil {
		t.Fatal(err)
	}
	clk.auto(t)
	runBG(t, out.Run)
	d.wait(t, 3)
	got := d.delivered()
	for i := 1; i < len(got); i++ {
		if gap := got[i].SentAt.Sub(got[i-1].SentAt); gap < 3*time.Second {
			t.Fatalf("group messages %v apart, want ≥ 3s", gap)
		}
	}
}

// A full outbox refuses the whole batch and says so; nothing is dropped
// silently and nothing half-queued.
func TestOutboxFullRefusesBatch(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	d := newDeliveries()
	cfg := d.config(newFakeClock())
	cfg.MaxQueued = 5
	out := telegram.NewOutbox(newClient(t, s), cfg)
	if err := out.Enqueue(msgs(1, 3, "a")...); err != nil {
		t.Fatal(err)
	}
	err := out.Enqueue(msgs(1, 3, "b")...)
	if !errors.Is(err, telegram.ErrOutboxFull) {
		t.Fatalf("Enqueue over the bound: %v, want ErrOutboxFull", err)
	}
	if out.Len() != 3 {
		t.Fatalf("Len = %d after a refused batch, want 3", out.Len())
	}
	if err := out.Enqueue(msgs(1, 2, "c")...); err != nil {
		t.Fatalf("Enqueue up to the bound: %v", err)
	}
}

func TestOutboxRefusesInvalidMessages(t *testing.T) {
	out := telegram.NewOutbox(nil, telegram.OutboxConfig{})
	bad := []telegram.Message{
		{HTML: "no chat"},
		{ChatID: 1, HTML: "  "},
		{ChatID: 1, HTML: "x", Keyboard: telegram.Keyboard{{{Text: "both", CallbackData: "a", URL: "https://x.example"}}}},
		{ChatID: 1, HTML: "x", Keyboard: telegram.Keyboard{{{Text: "long", CallbackData: string(make([]byte, 65))}}}},
		{ChatID: 1, HTML: "x", Keyboard: telegram.Keyboard{{{Text: "js", URL: "javascript:alert(1)"}}}},
		{ChatID: 1, HTML: "x", Keyboard: telegram.Keyboard{{}}},
	}
	for _, m := range bad {
		if err := out.Enqueue(m); !errors.Is(err, telegram.ErrInvalidMessage) {
			t.Errorf("Enqueue(%+v) = %v, want ErrInvalidMessage", m, err)
		}
	}
	if out.Len() != 0 {
		t.Fatalf("invalid messages were queued")
	}
}

// A message Telegram refuses for good is reported and the queue moves on; a
// network failure or 5xx is retried.
func TestOutboxPermanentAndTransientFailures(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(7)
	s.Fail("sendMessage", 1, http.StatusForbidden, "Forbidden: bot was blocked by the user", 0)
	clk := newFakeClock()
	d := newDeliveries()
	out := telegram.NewOutbox(newClient(t, s), d.config(clk))
	if err := out.Enqueue(msgs(7, 2, "x")...); err != nil {
		t.Fatal(err)
	}
	clk.auto(t)
	runBG(t, out.Run)
	d.wait(t, 2)
	d.mu.Lock()
	failed, errs := slices.Clone(d.failed), slices.Clone(d.errs)
	d.mu.Unlock()
	var apiErr *telegram.APIError
	if len(failed) != 1 || failed[0] != "x00" || !errors.As(errs[0], &apiErr) || apiErr.Code != 403 {
		t.Fatalf("failed = %v %v, want x00 with a 403", failed, errs)
	}
	if got := d.delivered(); len(got) != 1 || got[0].Message.Ref != "x01" {
		t.Fatalf("delivered = %+v, want x01", got)
	}

	s.Fail("sendMessage", 2, http.StatusBadGateway, "Bad Gateway", 0)
	if err := out.Enqueue(msgs(7, 1, "y")...); err != nil {
		t.Fatal(err)
	}
	d.wait(t, 3)
	got := d.delivered()
	if last := got[len(got)-1]; last.Message.Ref != "y00" || last.Attempts != 3 {
		t.Fatalf("after two 502s: %+v, want y00 delivered on attempt 3", last)
	}
}

// Stopping the outbox keeps what it had not delivered; a later Run sends it.
func TestOutboxStopKeepsQueue(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(3)
	s.RateLimit("sendMessage", 1, 3600)
	clk := newFakeClock()
	d := newDeliveries()
	out := telegram.NewOutbox(newClient(t, s), d.config(clk))
	if err := out.Enqueue(msgs(3, 2, "k")...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() { done <- out.Run(ctx) }()
	if err := s.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return sn.Calls("sendMessage", 429) == 1 }); err != nil {
		t.Fatal(err)
	}
	clk.waitWaiters(t, 1) // waiting out the hour Telegram asked for
	if err := out.Run(ctx); !errors.Is(err, telegram.ErrOutboxRunning) {
		t.Fatalf("second Run: %v, want ErrOutboxRunning", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	if out.Len() != 2 || len(s.Sent()) != 0 {
		t.Fatalf("after stop: %d queued, %d sent; want 2 and 0", out.Len(), len(s.Sent()))
	}
	clk.auto(t)
	runBG(t, out.Run)
	d.wait(t, 2)
	if got := d.delivered(); got[0].Message.Ref != "k00" || got[1].Message.Ref != "k01" {
		t.Fatalf("after restart: %+v", got)
	}
}

// Edits go through the outbox too; one that changes nothing (sent already,
// say before a crash) counts as delivered rather than failed.
func TestOutboxEdits(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(5)
	clk := newFakeClock()
	d := newDeliveries()
	out := telegram.NewOutbox(newClient(t, s), d.config(clk))
	clk.auto(t)
	runBG(t, out.Run)
	if err := out.Enqueue(telegram.Message{ChatID: 5, HTML: "status: <i>queued</i>", Ref: "status"}); err != nil {
		t.Fatal(err)
	}
	d.wait(t, 1)
	id := d.delivered()[0].MessageID
	for _, st := range []string{"running", "done", "done"} {
		if err := out.Enqueue(telegram.Message{ChatID: 5, EditID: id, HTML: "status: <i>" + st + "</i>", Ref: st}); err != nil {
			t.Fatal(err)
		}
	}
	d.wait(t, 4)
	d.mu.Lock()
	failed := len(d.failed)
	d.mu.Unlock()
	if failed != 0 {
		t.Fatalf("%d edits failed", failed)
	}
	if cur, _ := s.Current(5, id); cur.Plain != "status: done" {
		t.Fatalf("status message reads %q", cur.Plain)
	}
	if n := len(s.Sent()); n != 3 {
		t.Fatalf("%d sends and edits reached Telegram, want 3 (the repeated edit refused as not modified)", n)
	}
}
