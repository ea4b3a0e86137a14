package persistence

import (
	"crypto/sha256"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestTelegramOffsetAndSeen(t *testing.T) {
	h := newHarness(t, true)
	ctx := t.Context()
	tg := h.db.Telegram()
	if id, err := tg.Offset(ctx); err != nil || id != 0 {
		t.Fatalf("offset before any save: %d %v", id, err)
	}
	if err := tg.SaveOffset(ctx, 700123); err != nil {
		t.Fatal(err)
	}
	if seen, err := tg.Seen(ctx, 700123); err != nil || seen {
		t.Fatalf("seen before MarkSeen: %v %v", seen, err)
	}
	if err := tg.MarkSeen(ctx, 700123, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := tg.MarkSeen(ctx, 1, 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("MarkSeen without a ttl: %v, want ErrInvalid", err)
	}
	h.reopen()
	tg = h.db.Telegram()
	if id, err := tg.Offset(ctx); err != nil || id != 700123 {
		t.Fatalf("offset after reopen: %d %v", id, err)
	}
	if seen, err := tg.Seen(ctx, 700123); err != nil || !seen {
		t.Fatalf("seen after reopen: %v %v", seen, err)
	}
	if seen, _ := tg.Seen(ctx, 700124); seen {
		t.Fatal("an update never marked is seen")
	}
	// A lower update id (Telegram restarts them after a quiet week) is
	// saved as given.
	if err := tg.SaveOffset(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if id, _ := tg.Offset(ctx); id != 5 {
		t.Fatalf("offset %d, want 5", id)
	}
}

func TestTelegramPairing(t *testing.T) {
	h := newHarness(t, true)
	ctx := t.Context()
	tg := h.db.Telegram()
	if _, ok, err := tg.Pairing(ctx); err != nil || ok {
		t.Fatalf("pending code before any: %v %v", ok, err)
	}
	if chat, ok, err := tg.OwnerChat(ctx); err != nil || ok || chat != 0 {
		t.Fatalf("owner chat before pairing: %d %v %v", chat, ok, err)
	}
	p := TelegramPairing{Hash: sha256.Sum256([]byte("code")), ExpiresAt: time.Now().Add(10 * time.Minute).UTC()}
	if err := tg.SavePairing(ctx, p); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	tg = h.db.Telegram()
	got, ok, err := tg.Pairing(ctx)
	if err != nil || !ok || got.Hash != p.Hash || !got.ExpiresAt.Equal(p.ExpiresAt) {
		t.Fatalf("pending code %+v %v %v, want %+v", got, ok, err, p)
	}
	if err := tg.BindOwner(ctx, 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bind chat 0: %v", err)
	}
	if err := tg.BindOwner(ctx, 4242); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := tg.Pairing(ctx); ok {
		t.Fatal("the code survived the binding: it could bind a second chat")
	}
	if chat, ok, err := tg.OwnerChat(ctx); err != nil || !ok || chat != 4242 {
		t.Fatalf("owner chat %d %v %v", chat, ok, err)
	}
	if err := tg.SavePairing(ctx, p); err != nil {
		t.Fatal(err)
	}
	was, err := tg.Unpair(ctx)
	if err != nil || was != 4242 {
		t.Fatalf("unpair: %d %v", was, err)
	}
	if _, ok, _ := tg.OwnerChat(ctx); ok {
		t.Fatal("owner chat kept after unpair")
	}
	if _, ok, _ := tg.Pairing(ctx); ok {
		t.Fatal("pending code kept after unpair")
	}
	if was, err := tg.Unpair(ctx); err != nil || was != 0 {
		t.Fatalf("unpair twice: %d %v", was, err)
	}
}

func TestTelegramUseCallbackOnce(t *testing.T) {
	h := newHarness(t, false)
	ctx := t.Context()
	tg := h.db.Telegram()
	until := time.Now().Add(time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	fresh := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := tg.UseCallback(ctx, "telegram-card:req-1", until)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				fresh++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if fresh != 1 {
		t.Fatalf("%d of 8 concurrent taps were fresh, want exactly 1", fresh)
	}
	if ok, err := tg.UseCallback(ctx, "telegram-card:req-2", until); err != nil || !ok {
		t.Fatalf("another card: %v %v", ok, err)
	}
	if _, err := tg.UseCallback(ctx, "", until); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty key: %v", err)
	}
	// A card expiring now is still remembered for a while: a double tap on
	// it is a replay, not a fresh answer.
	if ok, _ := tg.UseCallback(ctx, "telegram-card:req-3", time.Now()); !ok {
		t.Fatal("first tap on a card expiring now refused")
	}
	if ok, _ := tg.UseCallback(ctx, "telegram-card:req-3", time.Now()); ok {
		t.Fatal("second tap on a card expiring now was fresh")
	}
}

func TestTelegramCustomers(t *testing.T) {
	h := newHarness(t, true)
	ctx := t.Context()
	tg := h.db.Telegram()
	if _, ok, err := tg.CustomerToken(ctx, 1001); err != nil || ok {
		t.Fatalf("token before any: %v %v", ok, err)
	}
	if err := tg.SaveCustomerToken(ctx, 1001, TelegramCustomer{Token: "tok-a", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := tg.SaveCustomerToken(ctx, 1002, TelegramCustomer{Token: "tok-b", ExpiresAt: time.Now().Add(-time.Hour)}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("expired token saved: %v", err)
	}
	h.reopen()
	tg = h.db.Telegram()
	if tok, ok, err := tg.CustomerToken(ctx, 1001); err != nil || !ok || tok != "tok-a" {
		t.Fatalf("token after reopen: %q %v %v", tok, ok, err)
	}
	if _, ok, _ := tg.CustomerToken(ctx, 1002); ok {
		t.Fatal("one customer's token answered for another")
	}
	if err := tg.DeleteCustomerToken(ctx, 1001); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := tg.CustomerToken(ctx, 1001); ok {
		t.Fatal("token kept after delete")
	}

	for _, a := range []struct {
		user int64
		msg  string
	}{{1003, "tg-1"}, {1001, "tg-2"}, {1003, "tg-3"}} {
		if err := tg.MarkAwaiting(ctx, a.user, a.msg, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	h.reopen()
	tg = h.db.Telegram()
	users, err := tg.Awaiting(ctx, 100)
	if err != nil || !slices.Equal(users, []int64{1001, 1003}) {
		t.Fatalf("awaiting %v %v, want [1001 1003]", users, err)
	}
	if err := tg.ClearAwaiting(ctx, 1003, "tg-1"); err != nil {
		t.Fatal(err)
	}
	if err := tg.ClearAwaiting(ctx, 1001, "tg-2"); err != nil {
		t.Fatal(err)
	}
	if users, _ := tg.Awaiting(ctx, 100); !slices.Equal(users, []int64{1003}) {
		t.Fatalf("awaiting after clearing %v, want [1003]", users)
	}
	if users, _ := tg.Awaiting(ctx, 0); len(users) != 0 {
		t.Fatalf("limit 0 returned %v", users)
	}
	if err := tg.MarkAwaiting(ctx, 1, "", time.Hour); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty message id: %v", err)
	}
}
