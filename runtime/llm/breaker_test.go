package llm

import (
	"testing"
	"time"
)

func TestBreakerHalfOpenLetsOneProbeThrough(t *testing.T) {
	t0 := time.Unix(0, 0)
	b := newBreaker(2, 10*time.Second)
	for range 2 {
		ok, probe := b.allow(t0)
		if !ok || probe {
			t.Fatalf("closed: allow = %v, %v", ok, probe)
		}
		b.done(t0, probe, true)
	}
	if ok, _ := b.allow(t0.Add(9 * time.Second)); ok || !b.open(t0) {
		t.Fatal("open circuit let a call through during the cool-down")
	}
	after := t0.Add(10 * time.Second)
	ok, probe := b.allow(after)
	if !ok || !probe {
		t.Fatalf("after the cool-down: allow = %v, %v; want the probe", ok, probe)
	}
	if ok, _ := b.allow(after); ok {
		t.Fatal("a second call went through while the probe is in flight")
	}
	b.release(probe) // the caller gave up: another probe may go
	ok, probe = b.allow(after)
	if !ok || !probe {
		t.Fatal("a released probe did not free the slot")
	}
	b.done(after, probe, false)
	if ok, probe := b.allow(after); !ok || probe || b.open(after) {
		t.Fatal("a successful probe did not close the circuit")
	}
	// Failures that are not consecutive do not open it.
	b.done(after, false, true)
	b.done(after, false, false)
	b.done(after, false, true)
	if b.open(after) {
		t.Fatal("two failures separated by a success opened the circuit")
	}
}
