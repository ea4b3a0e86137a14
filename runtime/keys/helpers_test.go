package keys

import (
	"bytes"
	"crypto/ed25519"
	"testing"
)

// seed32 returns a deterministic 32-byte seed starting at b.
func seed32(b byte) []byte {
	s := make([]byte, 32)
	for i := range s {
		s[i] = b + byte(i)
	}
	return s
}

// otherKey returns a deterministic key pair that is not the owner's.
func otherKey(b byte) ed25519.PrivateKey { return ed25519.NewKeyFromSeed(seed32(b)) }

// openManager opens a Manager on ks whose owner seed, once EnsureOwnerKey
// runs, is seed32(0).
func openManager(t *testing.T, ks Keystore) *Manager {
	t.Helper()
	m, err := Open(ks, WithRandom(bytes.NewReader(seed32(0))))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return m
}
