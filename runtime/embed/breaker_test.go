package embed

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/runtime/llm"
)

// flaky is an Embedder that fails while down.
type flaky struct {
	mu    sync.Mutex
	down  bool
	err   error
	calls int
}

func (f *flaky) Model() string { return "flaky" }
func (f *flaky) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.down {
		return nil, f.err
	}
	return make([][]float32, len(texts)), nil
}

func TestBreakerOpensAndProbes(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	inner := &flaky{down: true, err: &llm.APIError{Status: 502, Retryable: true}}
	b := NewBreaker(inner, 2, 10, func() time.Time { return now })
	for range 2 {
		if _, err := b.Embed(t.Context(), []string{"x"}); err == nil {
			t.Fatal("no error while down")
		}
	}
	if !b.Open() {
		t.Fatal("not open after 2 failures")
	}
	if _, err := b.Embed(t.Context(), []string{"x"}); !errors.Is(err, ErrUnavailable) || inner.calls != 2 {
		t.Fatalf("open circuit: err %v, %d calls (want the provider left alone)", err, inner.calls)
	}
	now = now.Add(11)
	inner.down = false
	if _, err := b.Embed(t.Context(), []string{"x"}); err != nil || b.Open() {
		t.Fatalf("probe after the cool-down: %v, open %v", err, b.Open())
	}
	// A request the provider refuses says it is up: it never opens.
	inner.down, inner.err = true, &llm.APIError{Status: 400}
	for range 5 {
		_, _ = b.Embed(t.Context(), []string{"x"})
	}
	if b.Open() {
		t.Fatal("refused requests opened the circuit")
	}
}
