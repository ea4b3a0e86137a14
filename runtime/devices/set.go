package devices

import "crypto/ed25519"

// Key is one active device key.
type Key struct {
	ID        string
	PublicKey ed25519.PublicKey
}

// Set is an immutable list of active device keys. The zero value and nil
// verify nothing.
type Set struct {
	keys []Key
}

// NewSet returns a Set of the given keys; keys that are not 32 bytes are
// skipped (they could never verify).
func NewSet(keys []Key) *Set {
	s := &Set{keys: make([]Key, 0, len(keys))}
	for _, k := range keys {
		if len(k.PublicKey) == ed25519.PublicKeySize {
			s.keys = append(s.keys, Key{ID: k.ID, PublicKey: append(ed25519.PublicKey(nil), k.PublicKey...)})
		}
	}
	return s
}

// Len returns the number of keys.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.keys)
}

// Verify reports whether sig is a valid Ed25519 signature of msg (the
// canonical bytes of keys.MessageBytes) by one of the keys, and which.
// Freshness and nonces are the caller's business (taint.Classify).
func (s *Set) Verify(msg, sig []byte) (id string, ok bool) {
	if s == nil || len(sig) != ed25519.SignatureSize {
		return "", false
	}
	for _, k := range s.keys {
		if ed25519.Verify(k.PublicKey, msg, sig) {
			return k.ID, true
		}
	}
	return "", false
}

// Without returns a Set of the same keys except id.
func (s *Set) Without(id string) *Set {
	out := &Set{}
	if s == nil {
		return out
	}
	for _, k := range s.keys {
		if k.ID != id {
			out.keys = append(out.keys, k)
		}
	}
	return out
}
