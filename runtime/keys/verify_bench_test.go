package keys

import (
	"testing"
	"time"
)

// BenchmarkVerifyOwnerSignature measures the per-message cost of checking
// an owner signature over a chat message's canonical bytes.
func BenchmarkVerifyOwnerSignature(b *testing.B) {
	m, err := Open(NewMemoryKeystore())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.EnsureOwnerKey(); err != nil {
		b.Fatal(err)
	}
	msg, err := MessageBytes("deploy the site", time.Now().UTC().Format(time.RFC3339Nano), "nonce")
	if err != nil {
		b.Fatal(err)
	}
	sig, err := m.Sign(msg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := m.VerifyOwnerSignature(msg, sig); !ok {
			b.Fatal("signature does not verify")
		}
	}
}

func BenchmarkMessageBytes(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MessageBytes("deploy the site", "2026-01-02T03:04:05.678Z", "n-0001"); err != nil {
			b.Fatal(err)
		}
	}
}
