package telegram_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/channels/telegram"
)

var (
	testKey   = bytes.Repeat([]byte{0x5a}, 32)
	otherKey  = bytes.Repeat([]byte{0xa5}, 32)
	testReqID = "0b7e7a52-3c1f-4f3e-9d2a-6f1e2d3c4b5a"
)

func mustSigner(t testing.TB, key []byte) *telegram.Signer {
	t.Helper()
	s, err := telegram.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCallbackDataRoundTrip(t *testing.T) {
	s := mustSigner(t, testKey)
	exp := time.Unix(1_900_000_000, 0)
	for _, d := range []telegram.CallbackData{
		{RequestID: testReqID, Verdict: "approved", Expires: exp},
		{RequestID: testReqID, Verdict: "just_this_once", Expires: exp},
		{RequestID: "req-42", Verdict: "declined", Expires: exp},
		{RequestID: "Ünïcode-id", Verdict: "ok", Expires: exp},
	} {
		data, err := s.Sign(1234, d)
		if err != nil {
			t.Fatalf("Sign(%+v): %v", d, err)
		}
		if len(data) > telegram.MaxCallbackData {
			t.Fatalf("Sign(%+v) = %d bytes, over Telegram's 64", d, len(data))
		}
		got, err := s.Verify(context.Background(), 1234, data, exp.Add(-time.Minute), newMemUsed())
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if got.RequestID != d.RequestID || got.Verdict != d.Verdict || !got.Expires.Equal(exp) {
			t.Fatalf("Verify = %+v, want %+v", got, d)
		}
	}
}

func TestCallbackDataSignRefuses(t *testing.T) {
	s := mustSigner(t, testKey)
	exp := time.Unix(1_900_000_000, 0)
	tests := []struct {
		name string
		d    telegram.CallbackData
		want error
	}{
		{"verdict too long for a UUID", telegram.CallbackData{RequestID: testReqID, Verdict: "just_this_once!", Expires: exp}, telegram.ErrCallbackTooLong},
		{"long raw id", telegram.CallbackData{RequestID: strings.Repeat("r", 40), Verdict: "ok", Expires: exp}, telegram.ErrCallbackTooLong},
		{"upper-case UUID is raw, so too long", telegram.CallbackData{RequestID: strings.ToUpper(testReqID), Verdict: "approved", Expires: exp}, telegram.ErrCallbackTooLong},
		{"no request", telegram.CallbackData{Verdict: "ok", Expires: exp}, telegram.ErrInvalidMessage},
		{"no verdict", telegram.CallbackData{RequestID: testReqID, Expires: exp}, telegram.ErrInvalidMessage},
		{"no expiry", telegram.CallbackData{RequestID: testReqID, Verdict: "ok"}, telegram.ErrInvalidMessage},
	}
	for _, tt := range tests {
		if _, err := s.Sign(1, tt.d); !errors.Is(err, tt.want) {
			t.Errorf("%s: Sign = %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := telegram.NewSigner(make([]byte, 31)); !errors.Is(err, telegram.ErrKeyTooShort) {
		t.Errorf("31-byte key: %v", err)
	}
}

// What an attacker can send in a callback: anything up to 64 bytes.
// Nothing but data this key signed for this chat verifies, and nothing
// refused touches the used set.
func TestCallbackDataVerifyRefusesForgeries(t *testing.T) {
	s := mustSigner(t, testKey)
	exp := time.Unix(1_900_000_000, 0)
	now := exp.Add(-time.Hour)
	good, err := s.Sign(77, telegram.CallbackData{RequestID: testReqID, Verdict: "approved", Expires: exp})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	otherKeyData, _ := mustSigner(t, otherKey).Sign(77, telegram.CallbackData{RequestID: testReqID, Verdict: "approved", Expires: exp})

	forgeries := map[string]string{
		"empty":           "",
		"not base64":      "approve:" + testReqID,
		"plain verdict":   "approved",
		"other key":       otherKeyData,
		"truncated":       good[:len(good)-4],
		"too long":        good + "AAAA",
		"tag only":        base64.RawURLEncoding.EncodeToString(raw[len(raw)-12:]),
		"zero tag":        base64.RawURLEncoding.EncodeToString(append(append([]byte{}, raw[:len(raw)-12]...), make([]byte, 12)...)),
		"verdict swapped": base64.RawURLEncoding.EncodeToString(bytes.Replace(raw, []byte("approved"), []byte("declined"), 1)),
		"expiry extended": base64.RawURLEncoding.EncodeToString(append([]byte{raw[0], 0xff, 0xff, 0xff, 0xff}, raw[5:]...)),
	}
	// Every single-bit change anywhere: verdict, id, expiry, version, tag.
	for i := range raw {
		for bit := range 8 {
			alt := append([]byte(nil), raw...)
			alt[i] ^= 1 << bit
			forgeries["bit "+string(rune('a'+i%26))+string(rune('0'+bit))+"@"+string(rune('A'+i/26))] = base64.RawURLEncoding.EncodeToString(alt)
		}
	}
	used := newMemUsed()
	for name, data := range forgeries {
		if data == good {
			continue
		}
		if _, err := s.Verify(context.Background(), 77, data, now, used); !errors.Is(err, telegram.ErrCallbackForged) {
			t.Errorf("%s: Verify = %v, want ErrCallbackForged", name, err)
		}
	}
	// Genuine data replayed into another chat.
	if _, err := s.Verify(context.Background(), 78, good, now, used); !errors.Is(err, telegram.ErrCallbackForged) {
		t.Errorf("other chat: Verify = %v, want ErrCallbackForged", err)
	}
	if used.len() != 0 {
		t.Fatalf("forgeries marked %d cards used", used.len())
	}
	if _, err := s.Verify(context.Background(), 77, good, now, used); err != nil {
		t.Fatalf("the genuine data after the forgeries: %v", err)
	}
}

func TestCallbackDataExpiryAndReplay(t *testing.T) {
	s := mustSigner(t, testKey)
	exp := time.Unix(1_900_000_000, 0)
	approve, _ := s.Sign(5, telegram.CallbackData{RequestID: testReqID, Verdict: "approved", Expires: exp})
	decline, _ := s.Sign(5, telegram.CallbackData{RequestID: testReqID, Verdict: "declined", Expires: exp})
	ctx := context.Background()
	used := newMemUsed()

	if d, err := s.Verify(ctx, 5, approve, exp.Add(time.Second), used); !errors.Is(err, telegram.ErrCallbackExpired) || d.RequestID != testReqID {
		t.Fatalf("after expiry: %+v %v, want ErrCallbackExpired naming the request", d, err)
	}
	if used.len() != 0 {
		t.Fatal("an expired tap used the card up")
	}
	if _, err := s.Verify(ctx, 5, approve, exp, used); err != nil {
		t.Fatalf("at the expiry second: %v", err)
	}
	if _, err := s.Verify(ctx, 5, approve, exp.Add(-time.Minute), used); !errors.Is(err, telegram.ErrCallbackReplayed) {
		t.Fatalf("replay: %v, want ErrCallbackReplayed", err)
	}
	if _, err := s.Verify(ctx, 5, decline, exp.Add(-time.Minute), used); !errors.Is(err, telegram.ErrCallbackReplayed) {
		t.Fatalf("the other button after an answer: %v, want ErrCallbackReplayed", err)
	}

	broken := newMemUsed()
	broken.err = errors.New("badger closed")
	if _, err := s.Verify(ctx, 5, approve, exp.Add(-time.Minute), broken); err == nil || errors.Is(err, telegram.ErrCallbackReplayed) {
		t.Fatalf("used set failure: %v, want the storage error", err)
	}
	if _, err := s.Verify(ctx, 5, approve, exp.Add(-time.Minute), nil); err == nil {
		t.Fatal("Verify without a used set succeeded")
	}
}

func FuzzCallbackDataVerify(f *testing.F) {
	s := mustSigner(f, testKey)
	exp := time.Unix(1_900_000_000, 0)
	good, _ := s.Sign(9, telegram.CallbackData{RequestID: testReqID, Verdict: "approved", Expires: exp})
	f.Add(good)
	f.Add("")
	f.Add("AAAA")
	f.Add(strings.Repeat("_", 64))
	f.Fuzz(func(t *testing.T, data string) {
		d, err := s.Verify(context.Background(), 9, data, exp.Add(-time.Hour), newMemUsed())
		if err == nil && data != good {
			// Another encoding of the same bytes is the only way in.
			raw, _ := base64.RawURLEncoding.DecodeString(data)
			graw, _ := base64.RawURLEncoding.DecodeString(good)
			if !bytes.Equal(raw, graw) {
				t.Fatalf("forged data %q verified as %+v", data, d)
			}
		}
	})
}
