package keys

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Manager holds the owner key. It is safe for concurrent use. The key is
// written to the Keystore before it takes effect and is never replaced
// once stored.
type Manager struct {
	ks   Keystore
	rand io.Reader

	mu    sync.RWMutex
	owner ed25519.PrivateKey // nil until EnsureOwnerKey
}

// Option configures a Manager.
type Option func(*Manager)

// WithRandom sets the source of the owner key seed (default
// crypto/rand.Reader). Only tests pass anything else.
func WithRandom(r io.Reader) Option { return func(m *Manager) { m.rand = r } }

// Open loads the owner key from ks if one exists. A missing owner key is
// not an error: EnsureOwnerKey creates it.
func Open(ks Keystore, opts ...Option) (*Manager, error) {
	m := &Manager{ks: ks, rand: rand.Reader}
	for _, o := range opts {
		o(m)
	}
	owner, err := loadOwner(ks)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	m.owner = owner
	return m, nil
}

// EnsureOwnerKey generates and stores the owner's Ed25519 key pair if none
// exists. It is idempotent: when a key is already stored it returns
// created == false and leaves the key untouched. A stored key that cannot
// be decoded is an error wrapping ErrCorrupt and is never overwritten.
func (m *Manager) EnsureOwnerKey() (created bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	owner, err := loadOwner(m.ks)
	switch {
	case err == nil:
		m.owner = owner
		return false, nil
	case !errors.Is(err, ErrNotFound):
		return false, err
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(m.rand, seed); err != nil {
		return false, fmt.Errorf("generate owner key: %w", err)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	clear(seed)
	if err := storeOwner(m.ks, priv); err != nil {
		return false, err
	}
	m.owner = priv
	return true, nil
}

// Sign signs msg (canonical bytes) with the owner key and returns the
// 64-byte signature. Without an owner key it returns ErrNoOwnerKey.
func (m *Manager) Sign(msg []byte) ([]byte, error) {
	m.mu.RLock()
	owner := m.owner
	m.mu.RUnlock()
	if owner == nil {
		return nil, ErrNoOwnerKey
	}
	return ed25519.Sign(owner, msg), nil
}

// OwnerPublicKey returns a copy of the owner's public key, or nil when no
// owner key exists yet.
func (m *Manager) OwnerPublicKey() ed25519.PublicKey {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.owner == nil {
		return nil
	}
	return append(ed25519.PublicKey(nil), m.owner.Public().(ed25519.PublicKey)...)
}

// OwnerKeyID returns KeyID of the owner's public key, or "" when no owner
// key exists yet.
func (m *Manager) OwnerKeyID() string {
	pub := m.OwnerPublicKey()
	if pub == nil {
		return ""
	}
	return KeyID(pub)
}
