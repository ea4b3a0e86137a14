package devices

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/silas-ai/silas/runtime/keys"
)

// Errors, wrapped with context; test with errors.Is.
var (
	// ErrInvalidPublicKey means a public key is not base64 of a raw 32-byte
	// Ed25519 key. The browser sends crypto.subtle.exportKey("raw", key).
	ErrInvalidPublicKey = errors.New("devices: public key must be base64 of a raw 32-byte Ed25519 key")
	// ErrInvalidName means a device name is empty, too long or not
	// printable. The owner picks another name.
	ErrInvalidName = errors.New("devices: device name must be 1 to 64 printable characters")
	// ErrInvalidCode means a typed enrolment code cannot be one this package
	// generated (wrong length or characters).
	ErrInvalidCode = errors.New("devices: malformed enrolment code")
)

// Enrolment codes are 10 characters of Crockford base32 (50 random bits),
// shown as XXXXX-XXXXX. Redeeming ignores case, spaces and dashes and reads
// O as 0 and I or L as 1, so a code read aloud or retyped still works. They
// are single-use and short-lived, so 50 bits is far beyond guessing.
const (
	codeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	codeLen      = 10
	// MaxNameLen bounds a device name in characters.
	MaxNameLen = 64
)

// NewCode returns a fresh enrolment code read from r (crypto/rand.Reader
// outside tests).
func NewCode(r io.Reader) (string, error) {
	var raw [codeLen]byte
	if _, err := io.ReadFull(r, raw[:]); err != nil {
		return "", fmt.Errorf("generate enrolment code: %w", err)
	}
	var b strings.Builder
	for i, c := range raw {
		if i == codeLen/2 {
			b.WriteByte('-')
		}
		b.WriteByte(codeAlphabet[c&31]) // 256 is a multiple of 32: no bias
	}
	return b.String(), nil
}

// HashCode normalises a typed code and returns the hash under which it is
// stored; only hashes are ever persisted. A code that cannot be valid
// returns ErrInvalidCode.
func HashCode(code string) ([32]byte, error) {
	norm := strings.Map(func(r rune) rune {
		switch r {
		case '-', ' ', '\t':
			return -1
		case 'o', 'O':
			return '0'
		case 'i', 'I', 'l', 'L':
			return '1'
		}
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, code)
	if len(norm) != codeLen || strings.Trim(norm, codeAlphabet) != "" {
		return [32]byte{}, ErrInvalidCode
	}
	return sha256.Sum256([]byte("silas-device-enrolment-code:" + norm)), nil
}

// ParsePublicKey decodes a device public key sent as standard or URL-safe
// base64, with or without padding.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	var raw []byte
	var err error
	if strings.ContainsAny(s, "-_") {
		raw, err = base64.RawURLEncoding.DecodeString(s)
	} else {
		raw, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, ErrInvalidPublicKey
	}
	return ed25519.PublicKey(raw), nil
}

// ID names a device by its key: keys.KeyID, the first 16 hex characters of
// the key's SHA-256, the same identifier the audit log records for the
// signer of an owner message.
func ID(pub ed25519.PublicKey) string { return keys.KeyID(pub) }

// CheckName reports whether name can label a device.
func CheckName(name string) error {
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxNameLen {
		return fmt.Errorf("%w: got %q", ErrInvalidName, name)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%w: %q contains a non-printable character", ErrInvalidName, name)
		}
	}
	return nil
}
