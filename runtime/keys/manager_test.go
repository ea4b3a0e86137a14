package keys

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"sync"
	"testing"
)

func TestEnsureOwnerKeyIsIdempotent(t *testing.T) {
	dataDir := t.TempDir()
	ks, err := NewFileKeystore(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Open(ks)
	if err != nil {
		t.Fatal(err)
	}
	if m.OwnerPublicKey() != nil || m.OwnerKeyID() != "" {
		t.Fatal("fresh manager already has an owner key")
	}
	if _, err := m.Sign([]byte("x")); !errors.Is(err, ErrNoOwnerKey) {
		t.Fatalf("Sign without key = %v, want ErrNoOwnerKey", err)
	}
	created, err := m.EnsureOwnerKey()
	if err != nil || !created {
		t.Fatalf("first EnsureOwnerKey = %v, %v; want true, nil", created, err)
	}
	pub := m.OwnerPublicKey()
	created, err = m.EnsureOwnerKey()
	if err != nil || created {
		t.Fatalf("second EnsureOwnerKey = %v, %v; want false, nil", created, err)
	}
	if !bytes.Equal(pub, m.OwnerPublicKey()) {
		t.Fatal("second EnsureOwnerKey changed the key")
	}

	// A second process (silas init run again) sees the same key.
	ks2, err := NewFileKeystore(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Open(ks2)
	if err != nil {
		t.Fatal(err)
	}
	if created, err := m2.EnsureOwnerKey(); created || err != nil {
		t.Fatalf("EnsureOwnerKey in second manager = %v, %v; want false, nil", created, err)
	}
	sig, err := m2.Sign([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := m.VerifyOwnerSignature([]byte("hello"), sig); !ok || id != m.OwnerKeyID() {
		t.Fatalf("signature by reopened key: VerifyOwnerSignature = %q, %v", id, ok)
	}
}

func TestCorruptOwnerKeyIsNeverOverwritten(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"not JSON", "garbage"},
		{"wrong version", `{"version":2,"algorithm":"ed25519","seed":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}`},
		{"wrong algorithm", `{"version":1,"algorithm":"rsa","seed":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}`},
		{"short seed", `{"version":1,"algorithm":"ed25519","seed":"AAEC"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ks := NewMemoryKeystore()
			if err := ks.Put(ownerKeyName, []byte(tt.data)); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(ks); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open = %v, want ErrCorrupt", err)
			}
			m := &Manager{ks: ks}
			if created, err := m.EnsureOwnerKey(); created || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("EnsureOwnerKey = %v, %v; want false, ErrCorrupt", created, err)
			}
			if got, _ := ks.Get(ownerKeyName); string(got) != tt.data {
				t.Fatalf("corrupt key was overwritten with %q", got)
			}
		})
	}
}

func TestVerifyOwnerSignatureRejects(t *testing.T) {
	m := openManager(t, NewMemoryKeystore())
	msg := []byte("message")
	// otherKey(0) is the key EnsureOwnerKey is about to create; until it
	// exists nothing verifies.
	if id, ok := m.VerifyOwnerSignature(msg, ed25519.Sign(otherKey(0), msg)); ok {
		t.Fatalf("a manager without an owner key verified a signature as %q", id)
	}
	if _, err := m.EnsureOwnerKey(); err != nil {
		t.Fatal(err)
	}
	sig, err := m.Sign(msg)
	if err != nil {
		t.Fatal(err)
	}
	// Device keys live in runtime/devices; here any key but the owner's,
	// a device's included, is a stranger.
	stranger := otherKey(99)
	tests := []struct {
		name string
		msg  []byte
		sig  []byte
	}{
		{"other message", []byte("messagE"), sig},
		{"flipped bit", msg, append(append([]byte(nil), sig[:63]...), sig[63]^1)},
		{"short signature", msg, sig[:63]},
		{"empty signature", msg, nil},
		{"other key", msg, ed25519.Sign(stranger, msg)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if id, ok := m.VerifyOwnerSignature(tt.msg, tt.sig); ok || id != "" {
				t.Fatalf("VerifyOwnerSignature = %q, %v; want rejection", id, ok)
			}
		})
	}
}

// TestConcurrentUse checks that concurrent first use creates one owner key
// and that signing and verifying race with nothing.
func TestConcurrentUse(t *testing.T) {
	ks := NewMemoryKeystore()
	m, err := Open(ks)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("concurrent")
	var wg sync.WaitGroup
	var created sync.Map
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Go(func() {
			c, err := m.EnsureOwnerKey()
			if err != nil {
				errs <- err
				return
			}
			created.Store(i, c)
			sig, err := m.Sign(msg)
			if err != nil {
				errs <- err
				return
			}
			if id, ok := m.VerifyOwnerSignature(msg, sig); !ok || id != m.OwnerKeyID() {
				errs <- errors.New("owner signature does not verify")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n := 0
	created.Range(func(_, c any) bool {
		if c.(bool) {
			n++
		}
		return true
	})
	if n != 1 {
		t.Fatalf("%d goroutines created the owner key, want exactly 1", n)
	}
	reopened, err := Open(ks)
	if err != nil || !bytes.Equal(reopened.OwnerPublicKey(), m.OwnerPublicKey()) {
		t.Fatalf("reopened owner key differs (%v)", err)
	}
}
