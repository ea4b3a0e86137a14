package telegram

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// PairingTTL is how long a pairing code stays valid.
const PairingTTL = 10 * time.Minute

// codeAlphabet is Crockford's base32: digits and capitals without I, L, O
// and U, so a code read off a terminal is typed back without confusion.
const codeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// codeLen is the code's length in symbols: 50 bits. With 10 minutes of
// validity and every guess a Telegram message, guessing is hopeless.
const codeLen = 10

// PendingCode is what the store keeps of an issued code: its hash, never
// the code.
type PendingCode struct {
	Hash    [sha256.Size]byte
	Expires time.Time
}

// PairingStore persists the pending code and the owner's chat. The runtime
// backs it with Badger.
type PairingStore interface {
	// SavePending replaces any pending code with p.
	SavePending(ctx context.Context, p PendingCode) error
	// LoadPending returns the pending code; ok is false when there is none.
	LoadPending(ctx context.Context) (p PendingCode, ok bool, err error)
	// Bind makes chatID the owner's chat and deletes the pending code, in
	// one transaction, so that a code binds at most one chat.
	Bind(ctx context.Context, chatID int64) error
}

// Pairer issues and redeems the one-time codes that bind the owner's
// Telegram chat (`silas telegram pair`, then `/start <code>` in the chat).
type Pairer struct {
	store PairingStore
	clock Clock
	rand  io.Reader

	mu sync.Mutex // one redemption at a time: a code succeeds once
}

// NewPairer returns a Pairer keeping its state in store. clk nil is the
// system clock.
func NewPairer(store PairingStore, clk Clock) *Pairer {
	return &Pairer{store: store, clock: clockOr(clk), rand: rand.Reader}
}

// Issue makes a new code, valid for PairingTTL, replacing any pending one,
// and returns it for display ("ABCDE-FGHJK") with its expiry.
func (p *Pairer) Issue(ctx context.Context) (code string, expires time.Time, err error) {
	var b [codeLen]byte
	if _, err := io.ReadFull(p.rand, b[:]); err != nil {
		return "", time.Time{}, fmt.Errorf("telegram: make pairing code: %w", err)
	}
	sym := make([]byte, codeLen)
	for i, v := range b {
		sym[i] = codeAlphabet[v&31] // 256 is a multiple of 32: uniform
	}
	expires = p.clock.Now().Add(PairingTTL)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.store.SavePending(ctx, PendingCode{Hash: hashCode(string(sym)), Expires: expires}); err != nil {
		return "", time.Time{}, fmt.Errorf("telegram: save pairing code: %w", err)
	}
	return string(sym[:5]) + "-" + string(sym[5:]), expires, nil
}

// Redeem binds chatID as the owner's chat if code is the pending code and
// has not expired, and uses the code up. Any failure, whether the code is
// wrong, expired, used or was never issued, is ErrPairingRefused after the
// same work (a hash and a constant-time comparison), so neither the answer
// nor its timing tells a guesser which. Typing is forgiven: case, spaces,
// hyphens, and O/I/L for 0/1/1.
func (p *Pairer) Redeem(ctx context.Context, code string, chatID int64) error {
	got := hashCode(normalizeCode(code))
	p.mu.Lock()
	defer p.mu.Unlock()
	pending, ok, err := p.store.LoadPending(ctx)
	if err != nil {
		return fmt.Errorf("telegram: load pairing code: %w", err)
	}
	match := subtle.ConstantTimeCompare(got[:], pending.Hash[:]) == 1
	live := p.clock.Now().Before(pending.Expires)
	// An expired code is left in the store (the next Issue replaces it):
	// deleting it here would make "expired" slower to answer than "wrong".
	if !ok || !match || !live {
		return ErrPairingRefused
	}
	if err := p.store.Bind(ctx, chatID); err != nil {
		return fmt.Errorf("telegram: bind owner chat: %w", err)
	}
	return nil
}

// normalizeCode maps what a person may type to the code's symbols.
func normalizeCode(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch r {
		case ' ', '-', '\t':
			continue
		case 'O':
			r = '0'
		case 'I', 'L':
			r = '1'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hashCode(code string) [sha256.Size]byte {
	return sha256.Sum256([]byte("silas/telegram/pairing/v1\x00" + code))
}
