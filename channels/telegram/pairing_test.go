package telegram_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/channels/telegram"
)

// memPairing is a PairingStore in memory.
type memPairing struct {
	mu      sync.Mutex
	pending *telegram.PendingCode
	owner   int64
	binds   int
}

func (m *memPairing) SavePending(_ context.Context, p telegram.PendingCode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = &p
	return nil
}

func (m *memPairing) LoadPending(context.Context) (telegram.PendingCode, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		return telegram.PendingCode{}, false, nil
	}
	return *m.pending, true, nil
}

func (m *memPairing) Bind(_ context.Context, chat int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owner, m.pending = chat, nil
	m.binds++
	return nil
}

var codeShape = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$`)

func TestPairingCodeIsHashedAndTypable(t *testing.T) {
	store := &memPairing{}
	clk := newFakeClock()
	p := telegram.NewPairer(store, clk)
	code, exp, err := p.Issue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !codeShape.MatchString(code) {
		t.Fatalf("code %q is not 10 Crockford symbols in two groups", code)
	}
	if want := clk.Now().Add(telegram.PairingTTL); !exp.Equal(want) {
		t.Fatalf("expires %v, want %v", exp, want)
	}
	bare := strings.ReplaceAll(code, "-", "")
	if strings.Contains(string(store.pending.Hash[:]), bare) || strings.Contains(string(store.pending.Hash[:]), code) {
		t.Fatal("the store holds the code itself")
	}
	other, _, _ := p.Issue(context.Background())
	if other == code {
		t.Fatal("two codes in a row are equal")
	}
}

func TestPairingRedeem(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		issue   bool
		advance time.Duration
		typed   func(code string) string
		want    error
	}{
		{"exact", true, 0, func(c string) string { return c }, nil},
		{"lower case, no hyphen, spaces", true, 0, func(c string) string {
			return " " + strings.ToLower(strings.ReplaceAll(c, "-", " ")) + " "
		}, nil},
		{"just before expiry", true, telegram.PairingTTL - time.Second, func(c string) string { return c }, nil},
		{"expired", true, telegram.PairingTTL, func(c string) string { return c }, telegram.ErrPairingRefused},
		{"wrong", true, 0, func(c string) string { return flip(c) }, telegram.ErrPairingRefused},
		{"empty", true, 0, func(string) string { return "" }, telegram.ErrPairingRefused},
		{"none issued", false, 0, func(string) string { return "ABCDE-FGHJK" }, telegram.ErrPairingRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &memPairing{}
			clk := newFakeClock()
			p := telegram.NewPairer(store, clk)
			code := ""
			if tt.issue {
				code, _, _ = p.Issue(ctx)
			}
			clk.Advance(tt.advance)
			err := p.Redeem(ctx, tt.typed(code), 4242)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Redeem = %v, want %v", err, tt.want)
			}
			if tt.want == nil && (store.owner != 4242 || store.binds != 1) {
				t.Fatalf("owner %d after %d binds", store.owner, store.binds)
			}
			if tt.want != nil && store.binds != 0 {
				t.Fatal("a refused code bound a chat")
			}
			if tt.want == nil {
				if err := p.Redeem(ctx, code, 666); !errors.Is(err, telegram.ErrPairingRefused) || store.owner != 4242 {
					t.Fatalf("second use: %v, owner %d", err, store.owner)
				}
			}
		})
	}
}

// flip changes the code's last symbol.
func flip(code string) string {
	last := code[len(code)-1]
	repl := byte('0')
	if last == '0' {
		repl = '2'
	}
	return code[:len(code)-1] + string(repl)
}

func TestPairingOldCodeDiesWithNewOne(t *testing.T) {
	ctx := context.Background()
	store := &memPairing{}
	p := telegram.NewPairer(store, newFakeClock())
	old, _, _ := p.Issue(ctx)
	fresh, _, _ := p.Issue(ctx)
	if err := p.Redeem(ctx, old, 1); !errors.Is(err, telegram.ErrPairingRefused) {
		t.Fatalf("superseded code: %v", err)
	}
	if err := p.Redeem(ctx, fresh, 1); err != nil {
		t.Fatalf("fresh code: %v", err)
	}
}

// Of many chats racing with the right code, exactly one is bound.
func TestPairingRedeemOnceUnderRace(t *testing.T) {
	ctx := context.Background()
	store := &memPairing{}
	p := telegram.NewPairer(store, newFakeClock())
	code, _, _ := p.Issue(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for chat := int64(1); chat <= 16; chat++ {
		wg.Go(func() {
			if p.Redeem(ctx, code, chat) == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 || store.binds != 1 {
		t.Fatalf("%d redemptions succeeded (%d binds), want 1", wins, store.binds)
	}
}
