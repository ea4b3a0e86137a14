package telegram_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
)

// fakeClock is a telegram.Clock whose time moves only when a test moves it:
// by Advance, or, under auto, to the next deadline as soon as someone
// waits. Nothing in the tests waits on real time.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []clockWaiter
	added   chan struct{}
}

type clockWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), added: make(chan struct{}, 1)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	if d <= 0 {
		ch <- c.now
		c.mu.Unlock()
		return ch
	}
	c.waiters = append(c.waiters, clockWaiter{at: c.now.Add(d), ch: ch})
	c.mu.Unlock()
	select {
	case c.added <- struct{}{}:
	default:
	}
	return ch
}

// Advance moves time forward by d and fires the timers due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.fireLocked()
}

func (c *fakeClock) fireLocked() {
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// advanceToNext jumps to the earliest timer, if any, and fires it.
func (c *fakeClock) advanceToNext() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiters) == 0 {
		return false
	}
	next := slices.MinFunc(c.waiters, func(a, b clockWaiter) int { return a.at.Compare(b.at) }).at
	if next.After(c.now) {
		c.now = next
	}
	c.fireLocked()
	return true
}

func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// auto makes time jump to each deadline as soon as one is set, until the
// test ends: pacing and backoff then take no real time.
func (c *fakeClock) auto(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for {
			for c.advanceToNext() {
			}
			select {
			case <-c.added:
			case <-ctx.Done():
				return
			}
		}
	}()
}

// waitWaiters blocks until at least n timers are pending.
func (c *fakeClock) waitWaiters(t *testing.T, n int) {
	t.Helper()
	ctx := testCtx(t)
	for c.pending() < n {
		select {
		case <-c.added:
		case <-ctx.Done():
			t.Fatalf("fake clock: %d timers pending, want %d", c.pending(), n)
		}
	}
}

// testCtx is a context that ends with the test, or after a generous bound
// so that a hang fails instead of blocking the run.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newClient(t *testing.T, s *fakebot.Server) *telegram.Client {
	t.Helper()
	c, err := telegram.NewClient(telegram.Config{Token: s.Token(), APIURL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runBG runs fn in a goroutine for the test's duration; at the end the
// context is cancelled and fn's return awaited.
func runBG(t *testing.T, fn func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("background run: %v", err)
		}
	})
}

// memOffsets is an OffsetStore in memory; failSaves makes the next Saves
// fail, as a crash between journaling and saving would leave things.
type memOffsets struct {
	mu        sync.Mutex
	last      int64
	saves     int
	failSaves int
}

func (m *memOffsets) Load(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last, nil
}

func (m *memOffsets) Save(_ context.Context, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failSaves > 0 {
		m.failSaves--
		return errors.New("disk full")
	}
	m.last = id
	m.saves++
	return nil
}

func (m *memOffsets) get() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

// journal is what the runtime's handler does: record each update under its
// update_id. It is also the Seen.
type journal struct {
	mu      sync.Mutex
	entries []telegram.Update
	ids     map[int64]int // update_id -> times journaled
}

func newJournal() *journal { return &journal{ids: map[int64]int{}} }

func (j *journal) add(u telegram.Update) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries = append(j.entries, u)
	j.ids[u.ID]++
}

func (j *journal) Seen(_ context.Context, id int64) (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.ids[id] > 0, nil
}

func (j *journal) snapshot() []telegram.Update {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.entries)
}

func (j *journal) times(id int64) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.ids[id]
}

// memUsed is a UsedSet in memory.
type memUsed struct {
	mu   sync.Mutex
	keys map[string]time.Time
	err  error
}

func newMemUsed() *memUsed { return &memUsed{keys: map[string]time.Time{}} }

func (m *memUsed) Use(_ context.Context, key string, until time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return false, m.err
	}
	if _, ok := m.keys[key]; ok {
		return false, nil
	}
	m.keys[key] = until
	return true, nil
}

func (m *memUsed) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.keys)
}
