package llm

import (
	"sync"
	"time"
)

// Circuit breaker defaults.
const (
	DefaultCircuitFailures = 3
	DefaultCircuitCooldown = 30 * time.Second
)

// breaker is the circuit breaker of one provider, shared by every role
// whose chain names it. Closed, calls go through and consecutive failures
// are counted; at the threshold it opens, and calls skip the provider until
// the cool-down ends; then it is half-open: one call at a time probes the
// provider, and the probe's outcome closes the circuit or opens it for
// another cool-down.
//
// Only failures that say the provider is unusable count (see counts): a
// request the provider refused as bad says it is up and answering.
type breaker struct {
	threshold int
	cooldown  time.Duration

	mu        sync.Mutex
	failures  int       // consecutive counted failures
	openUntil time.Time // the end of the cool-down; meaningful when failures >= threshold
	probing   bool      // a half-open probe is in flight
}

func newBreaker(threshold int, cooldown time.Duration) *breaker {
	return &breaker{threshold: threshold, cooldown: cooldown}
}

// allow reports whether a call may go to the provider at now, and whether
// that call is the half-open probe, whose outcome must be reported with
// done (or given back with release).
func (b *breaker) allow(now time.Time) (ok, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.failures < b.threshold:
		return true, false
	case now.Before(b.openUntil), b.probing:
		return false, false
	}
	b.probing = true
	return true, true
}

// force lets a call through whatever the state, as a probe when the
// circuit is open: used when every entry of a chain is open, since a call
// that may fail beats one that certainly does.
func (b *breaker) force() (probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures < b.threshold {
		return false
	}
	b.probing = true
	return true
}

// done records a call's outcome at now: failed counts towards opening,
// anything else closes the circuit.
func (b *breaker) done(now time.Time, probe, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	if !failed {
		b.failures = 0
		return
	}
	b.failures++
	if b.failures >= b.threshold {
		b.openUntil = now.Add(b.cooldown)
	}
}

// release gives back a probe whose call says nothing about the provider
// (the caller gave up).
func (b *breaker) release(probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

// open reports whether calls skip the provider at now.
func (b *breaker) open(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures >= b.threshold && (now.Before(b.openUntil) || b.probing)
}
