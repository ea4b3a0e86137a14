package keys

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
)

// KeyID returns the identifier of an Ed25519 public key: the first 16 hex
// characters of its SHA-256. The audit log records it for the signer of an
// owner message; owner devices (runtime/devices) use it as their ID.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// VerifyOwnerSignature reports whether sig is a valid Ed25519 signature of
// msg by the owner key, and returns the owner's KeyID when it is. Device
// keys are not consulted: they live in the device registry (runtime/devices,
// persistence.Devices), and the daemon asks it separately for chat messages
// only, never for approval tokens (see the package documentation).
func (m *Manager) VerifyOwnerSignature(msg, sig []byte) (keyID string, ok bool) {
	if len(sig) != ed25519.SignatureSize {
		return "", false
	}
	pub := m.OwnerPublicKey()
	if pub == nil || !ed25519.Verify(pub, msg, sig) {
		return "", false
	}
	return KeyID(pub), true
}
