package devices

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/silas-ai/silas/runtime/keys"
)

func TestCodeRoundTripAndLookalikes(t *testing.T) {
	code, err := NewCode(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$`).MatchString(code) {
		t.Fatalf("code %q is not XXXXX-XXXXX in Crockford base32", code)
	}
	want, err := HashCode(code)
	if err != nil {
		t.Fatal(err)
	}
	// Retyped: lower case, no dash, spaces, O for 0 and l for 1.
	typed := strings.ToLower(strings.ReplaceAll(code, "-", " "))
	typed = strings.NewReplacer("0", "o", "1", "l").Replace(typed)
	if got, err := HashCode(typed); err != nil || got != want {
		t.Fatalf("retyped %q does not hash like %q: %v", typed, code, err)
	}
	// Upper-case look-alikes and a tab: O for 0, I and L for 1.
	typed = "\t" + strings.NewReplacer("0", "O", "1", "I").Replace(code)
	if got, err := HashCode(typed); err != nil || got != want {
		t.Fatalf("retyped %q does not hash like %q: %v", typed, code, err)
	}
	for _, bad := range []string{"", "ABCDE", "ABCDE-FGHJKM", "ABCDE-FGHJU", "ABCDE-FGHJ!"} {
		if _, err := HashCode(bad); !errors.Is(err, ErrInvalidCode) {
			t.Errorf("HashCode(%q) = %v, want ErrInvalidCode", bad, err)
		}
	}
	other, _ := NewCode(bytes.NewReader(bytes.Repeat([]byte{7}, 10)))
	if h, _ := HashCode(other); h == want {
		t.Fatal("different codes hash alike")
	}
}

func TestParsePublicKey(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		got, err := ParsePublicKey(enc.EncodeToString(pub))
		if err != nil || !bytes.Equal(got, pub) {
			t.Fatalf("parse %v: %v", enc, err)
		}
	}
	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(pub[:31]), base64.StdEncoding.EncodeToString(append(pub, 0))} {
		if _, err := ParsePublicKey(bad); !errors.Is(err, ErrInvalidPublicKey) {
			t.Errorf("ParsePublicKey(%q) = %v", bad, err)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"phone", "Pixel 8 — Chrome", strings.Repeat("é", MaxNameLen)} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "tab\there", strings.Repeat("x", MaxNameLen+1), "\xff"} {
		if err := CheckName(bad); !errors.Is(err, ErrInvalidName) {
			t.Errorf("CheckName(%q) = %v", bad, err)
		}
	}
}

func TestSetVerifiesSignedMessageBytes(t *testing.T) {
	pubA, privA, _ := ed25519.GenerateKey(rand.Reader)
	pubB, privB, _ := ed25519.GenerateKey(rand.Reader)
	_, privC, _ := ed25519.GenerateKey(rand.Reader)
	msg, err := keys.MessageBytes("hello", "2026-01-02T03:04:05.678Z", "n-1")
	if err != nil {
		t.Fatal(err)
	}
	s := NewSet([]Key{{ID: ID(pubA), PublicKey: pubA}, {ID: ID(pubB), PublicKey: pubB}, {ID: "short", PublicKey: pubB[:5]}})
	if s.Len() != 2 {
		t.Fatalf("set holds %d keys, want 2 (the short key is dropped)", s.Len())
	}
	if id, ok := s.Verify(msg, ed25519.Sign(privB, msg)); !ok || id != ID(pubB) {
		t.Fatalf("device B's signature: %q %v", id, ok)
	}
	if _, ok := s.Verify(msg, ed25519.Sign(privC, msg)); ok {
		t.Fatal("a key outside the set verified")
	}
	other, _ := keys.MessageBytes("hello!", "2026-01-02T03:04:05.678Z", "n-1")
	if _, ok := s.Verify(other, ed25519.Sign(privA, msg)); ok {
		t.Fatal("a signature verified for other text")
	}
	var nilSet *Set
	if _, ok := nilSet.Verify(msg, ed25519.Sign(privA, msg)); ok {
		t.Fatal("the nil set verified a signature")
	}
}

func TestSetWithout(t *testing.T) {
	pubA, privA, _ := ed25519.GenerateKey(rand.Reader)
	pubB, privB, _ := ed25519.GenerateKey(rand.Reader)
	msg := []byte("m")
	s := NewSet([]Key{{ID: "a", PublicKey: pubA}, {ID: "b", PublicKey: pubB}})
	w := s.Without("a")
	if _, ok := w.Verify(msg, ed25519.Sign(privA, msg)); ok {
		t.Fatal("a removed key still verifies")
	}
	if id, ok := w.Verify(msg, ed25519.Sign(privB, msg)); !ok || id != "b" {
		t.Fatal("Without dropped the wrong key")
	}
	if _, ok := s.Verify(msg, ed25519.Sign(privA, msg)); !ok {
		t.Fatal("Without changed the original set")
	}
}
