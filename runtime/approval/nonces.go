package approval

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Nonce store domains the engine uses.
const (
	// DomainExec holds the content-bound execution keys
	// "{token_id}:{hash}:{execution_nonce}" (spec 5.11 verify step 7).
	DomainExec = "exec"
	// DomainExecSlot holds the execution slots "{token_id}:{n}" that stop a
	// stale copy of a token from being verified again.
	DomainExecSlot = "exec_slot"
	// DomainExecDone holds the content-bound execution keys of executions
	// that ran to their end (see Engine.Complete): Check refuses them, so a
	// stored copy of a finished work item cannot run again.
	DomainExecDone = "exec_done"
)

// NonceStore remembers used nonces per domain for a TTL. persistence.Nonces
// satisfies it; MemoryNonces is an in-memory implementation.
type NonceStore interface {
	// Consume records nonce in domain for ttl unless it is already recorded
	// and unexpired, and reports whether it was fresh. It is atomic: of
	// concurrent calls for one nonce exactly one reports fresh.
	Consume(ctx context.Context, domain, nonce string, ttl time.Duration) (fresh bool, err error)
	// IsUsed reports whether nonce is recorded in domain and unexpired.
	IsUsed(ctx context.Context, domain, nonce string) (bool, error)
}

// MemoryNonces is a NonceStore in memory, for tests and tools that do not
// open the database. It is safe for concurrent use. Expired entries are
// dropped when they are next looked up.
type MemoryNonces struct {
	now func() time.Time

	mu      sync.Mutex
	expires map[string]time.Time // domain + "\x00" + nonce -> expiry
}

// NewMemoryNonces returns an empty store that reads the time from now.
func NewMemoryNonces(now func() time.Time) *MemoryNonces {
	return &MemoryNonces{now: now, expires: map[string]time.Time{}}
}

// Consume implements NonceStore.
func (m *MemoryNonces) Consume(ctx context.Context, domain, nonce string, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("consume nonce %s: %w", domain, err)
	}
	if domain == "" || nonce == "" || ttl <= 0 {
		return false, fmt.Errorf("consume nonce: domain %q, nonce of %d bytes, ttl %s: want non-empty and positive", domain, len(nonce), ttl)
	}
	k := domain + "\x00" + nonce
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if exp, ok := m.expires[k]; ok && now.Before(exp) {
		return false, nil
	}
	m.expires[k] = now.Add(ttl)
	return true, nil
}

// IsUsed implements NonceStore.
func (m *MemoryNonces) IsUsed(ctx context.Context, domain, nonce string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("nonce is used %s: %w", domain, err)
	}
	k := domain + "\x00" + nonce
	m.mu.Lock()
	defer m.mu.Unlock()
	exp, ok := m.expires[k]
	if ok && !m.now().Before(exp) {
		delete(m.expires, k)
		return false, nil
	}
	return ok, nil
}

// Len returns how many unexpired nonces the store holds.
func (m *MemoryNonces) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	n := 0
	for _, exp := range m.expires {
		if now.Before(exp) {
			n++
		}
	}
	return n
}
