package embed

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Breaker defaults.
const (
	DefaultBreakerFailures = 3
	DefaultBreakerCooldown = time.Minute
)

// Breaker is an [Embedder] that stops calling its inner one after
// consecutive failures: for the cool-down, every call fails at once with
// [ErrUnavailable]; then one call probes the provider, and its outcome
// closes the circuit or starts another cool-down. A turn's memory search
// then costs nothing while the provider is down, instead of a timeout.
// A canceled call (the caller gave up) does not count.
type Breaker struct {
	inner     Embedder
	threshold int
	cooldown  time.Duration
	now       func() time.Time

	mu        sync.Mutex
	failures  int
	openUntil time.Time
	probing   bool
}

var _ Embedder = (*Breaker)(nil)

// NewBreaker wraps inner; threshold and cooldown of 0 take the defaults,
// and a nil now uses time.Now.
func NewBreaker(inner Embedder, threshold int, cooldown time.Duration, now func() time.Time) *Breaker {
	if threshold <= 0 {
		threshold = DefaultBreakerFailures
	}
	if cooldown <= 0 {
		cooldown = DefaultBreakerCooldown
	}
	if now == nil {
		now = time.Now
	}
	return &Breaker{inner: inner, threshold: threshold, cooldown: cooldown, now: now}
}

// Model implements [Embedder].
func (b *Breaker) Model() string { return b.inner.Model() }

// Open reports whether calls are being refused now.
func (b *Breaker) Open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures >= b.threshold && (b.now().Before(b.openUntil) || b.probing)
}

// Embed implements [Embedder].
func (b *Breaker) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	b.mu.Lock()
	probe := false
	if b.failures >= b.threshold {
		if b.now().Before(b.openUntil) || b.probing {
			b.mu.Unlock()
			return nil, ErrUnavailable
		}
		b.probing, probe = true, true
	}
	b.mu.Unlock()

	out, err := b.inner.Embed(ctx, texts)

	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch {
	case err == nil:
		b.failures = 0
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		// The caller gave up; the provider said nothing.
	case !Retryable(err) && !errors.Is(err, ErrInvalidResponse) && !errors.Is(err, ErrMissingAPIKey):
		// The provider answered and refused this request: it is up.
		b.failures = 0
	default:
		b.failures++
		if b.failures >= b.threshold {
			b.openUntil = b.now().Add(b.cooldown)
		}
	}
	return out, err
}
