package persistence

import (
	"crypto/sha256"
	"errors"
	"sync"
	"testing"
	"time"
)

func codeHash(s string) [32]byte { return sha256.Sum256([]byte(s)) }

func testDevice(id string) Device {
	return Device{ID: id, Name: "laptop", PublicKey: []byte("0123456789abcdef0123456789abcdef")}
}

func TestDevicesEnrolListRevokeSurviveReopen(t *testing.T) {
	h := newHarness(t, true)
	ctx := t.Context()
	now := time.Now()
	if err := h.db.Devices().AddCode(ctx, codeHash("a"), EnrolmentCode{Name: "phone", ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	dev := testDevice("dev-a")
	dev.Name = "" // take the code's name
	got, err := h.db.Devices().Redeem(ctx, codeHash("a"), dev, now)
	if err != nil {
		t.Fatalf("redeem: %v", err)
	}
	if got.Name != "phone" || got.Revoked() || !got.AddedAt.Equal(now.UTC()) {
		t.Fatalf("enrolled %+v", got)
	}
	// The code is single-use.
	if _, err := h.db.Devices().Redeem(ctx, codeHash("a"), testDevice("dev-b"), now); !errors.Is(err, ErrCodeInvalid) {
		t.Fatalf("second redeem: %v, want ErrCodeInvalid", err)
	}

	h.reopen()
	list, err := h.db.Devices().List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != "dev-a" || string(list[0].PublicKey) != string(dev.PublicKey) {
		t.Fatalf("list after reopen: %v %+v", err, list)
	}
	r, err := h.db.Devices().Revoke(ctx, "dev-a", now.Add(time.Second))
	if err != nil || !r.Revoked() {
		t.Fatalf("revoke: %v %+v", err, r)
	}
	again, err := h.db.Devices().Revoke(ctx, "dev-a", now.Add(time.Hour))
	if err != nil || !again.RevokedAt.Equal(*r.RevokedAt) {
		t.Fatalf("second revoke changed the record: %v %+v", err, again)
	}
	if _, err := h.db.Devices().Revoke(ctx, "nope", now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoke unknown: %v", err)
	}
	h.reopen()
	d, err := h.db.Devices().Get(ctx, "dev-a")
	if err != nil || !d.Revoked() {
		t.Fatalf("revocation lost on reopen: %v %+v", err, d)
	}
}

func TestDevicesCodeExpiredAndDuplicateKey(t *testing.T) {
	h := newHarness(t, false)
	ctx := t.Context()
	now := time.Now()
	store := h.db.Devices()
	if err := store.AddCode(ctx, codeHash("late"), EnrolmentCode{ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Redeem(ctx, codeHash("late"), testDevice("x"), now.Add(time.Minute)); !errors.Is(err, ErrCodeInvalid) {
		t.Fatalf("redeem at expiry: %v, want ErrCodeInvalid", err)
	}
	if err := store.AddCode(ctx, codeHash("past"), EnrolmentCode{ExpiresAt: now.Add(-time.Second)}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("code expiring in the past: %v", err)
	}

	for _, c := range []string{"c1", "c2"} {
		if err := store.AddCode(ctx, codeHash(c), EnrolmentCode{ExpiresAt: now.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Redeem(ctx, codeHash("c1"), testDevice("same"), now); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Redeem(ctx, codeHash("c2"), testDevice("same"), now); !errors.Is(err, ErrDeviceExists) {
		t.Fatalf("duplicate key: %v, want ErrDeviceExists", err)
	}
	// The refused enrolment left c2 usable for a new key.
	if _, err := store.Redeem(ctx, codeHash("c2"), testDevice("other"), now); err != nil {
		t.Fatalf("code after a refused duplicate: %v", err)
	}
}

func TestDevicesConcurrentRedeemUsesCodeOnce(t *testing.T) {
	h := newHarness(t, false)
	ctx := t.Context()
	now := time.Now()
	if err := h.db.Devices().AddCode(ctx, codeHash("race"), EnrolmentCode{ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = h.db.Devices().Redeem(ctx, codeHash("race"), testDevice(string(rune('a'+i))), now)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrCodeInvalid):
			t.Fatalf("redeem: %v", err)
		}
	}
	list, _ := h.db.Devices().List(ctx)
	if ok != 1 || len(list) != 1 {
		t.Fatalf("%d redeems succeeded, %d devices stored; want 1 and 1", ok, len(list))
	}
}
