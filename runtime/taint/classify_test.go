package taint

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/devices"
	"github.com/silas-ai/silas/runtime/keys"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func ts(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }

// fixture signs messages with an owner key known to a keys.Manager.
type fixture struct {
	m     *keys.Manager
	other ed25519.PrivateKey
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	m, err := keys.Open(keys.NewMemoryKeystore())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.EnsureOwnerKey(); err != nil {
		t.Fatal(err)
	}
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 7
	return fixture{m: m, other: ed25519.NewKeyFromSeed(seed)}
}

// signed returns an Input signed by the owner over (text, timestamp, nonce).
func (f fixture) signed(t *testing.T, text, timestamp, nonce string) Input {
	t.Helper()
	msg, err := keys.MessageBytes(text, timestamp, nonce)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := f.m.Sign(msg)
	if err != nil {
		t.Fatal(err)
	}
	return Input{Text: text, Timestamp: timestamp, Nonce: nonce, Signature: sig, Verify: f.m.VerifyOwnerSignature}
}

func TestClassify(t *testing.T) {
	f := newFixture(t)
	owner := f.m.OwnerKeyID()
	type mod func(*Input)
	auth := func(in *Input) { in.Authenticated = true }
	used := func(in *Input) { in.NonceUsed = true }
	tests := []struct {
		name   string
		in     Input
		mods   []mod
		want   Result
		checks bool // NeedsNonceCheck
	}{
		{name: "unsigned, unauthenticated", in: Input{Text: "hi"},
			want: Result{Taint: messages.TaintExternal, Reason: ReasonUnsignedExternal}},
		{name: "unsigned, authenticated", in: Input{Text: "hi"}, mods: []mod{auth},
			want: Result{Taint: messages.TaintAuth, Reason: ReasonUnsignedAuth}},
		{name: "unsigned, authenticated, nonce flag ignored", in: Input{Text: "hi", Nonce: "n"}, mods: []mod{auth, used},
			want: Result{Taint: messages.TaintAuth, Reason: ReasonUnsignedAuth}},
		{name: "valid, fresh, unused", in: f.signed(t, "hi", ts(0), "n1"), checks: true,
			want: Result{Taint: messages.TaintOwner, KeyID: owner, ConsumeNonce: true, Reason: ReasonOwner}},
		{name: "valid, fresh, unused, authenticated", in: f.signed(t, "hi", ts(0), "n1"), mods: []mod{auth}, checks: true,
			want: Result{Taint: messages.TaintOwner, KeyID: owner, ConsumeNonce: true, Reason: ReasonOwner}},
		{name: "valid with offset zone", in: f.signed(t, "hi", now.In(time.FixedZone("", -5*3600)).Format(time.RFC3339), "n1"), checks: true,
			want: Result{Taint: messages.TaintOwner, KeyID: owner, ConsumeNonce: true, Reason: ReasonOwner}},
		{name: "valid, used nonce", in: f.signed(t, "hi", ts(0), "n1"), mods: []mod{used}, checks: true,
			want: Result{Taint: messages.TaintExternal, KeyID: owner, Replay: true, Reason: ReasonReplayNonce}},
		{name: "valid, used nonce, authenticated is still external", in: f.signed(t, "hi", ts(0), "n1"), mods: []mod{used, auth}, checks: true,
			want: Result{Taint: messages.TaintExternal, KeyID: owner, Replay: true, Reason: ReasonReplayNonce}},
		{name: "valid, exactly at the window", in: f.signed(t, "hi", ts(-DefaultFreshWindow), "n1"), checks: true,
			want: Result{Taint: messages.TaintOwner, KeyID: owner, ConsumeNonce: true, Reason: ReasonOwner}},
		{name: "valid, stale", in: f.signed(t, "hi", ts(-DefaultFreshWindow-time.Millisecond), "n1"), mods: []mod{auth},
			want: Result{Taint: messages.TaintExternal, KeyID: owner, Replay: true, Reason: ReasonReplayStale}},
		{name: "valid, future within window", in: f.signed(t, "hi", ts(DefaultFreshWindow), "n1"), checks: true,
			want: Result{Taint: messages.TaintOwner, KeyID: owner, ConsumeNonce: true, Reason: ReasonOwner}},
		{name: "valid, future beyond window", in: f.signed(t, "hi", ts(DefaultFreshWindow+time.Second), "n1"),
			want: Result{Taint: messages.TaintExternal, KeyID: owner, Replay: true, Reason: ReasonReplayFuture}},
		{name: "custom window, stale", in: f.signed(t, "hi", ts(-2*time.Minute), "n1"),
			mods: []mod{func(in *Input) { in.FreshWindow = time.Minute }},
			want: Result{Taint: messages.TaintExternal, KeyID: owner, Replay: true, Reason: ReasonReplayStale}},
		{name: "negative window means default", in: f.signed(t, "hi", ts(-2*time.Minute), "n1"), checks: true,
			mods: []mod{func(in *Input) { in.FreshWindow = -time.Minute }},
			want: Result{Taint: messages.TaintOwner, KeyID: owner, ConsumeNonce: true, Reason: ReasonOwner}},
		{name: "tampered text, authenticated", in: f.signed(t, "hi", ts(0), "n1"), checks: true,
			mods: []mod{auth, func(in *Input) { in.Text = "rm -rf" }},
			want: Result{Taint: messages.TaintAuth, Reason: ReasonBadSignatureAuth}},
		{name: "tampered nonce, unauthenticated", in: f.signed(t, "hi", ts(0), "n1"), checks: true,
			mods: []mod{func(in *Input) { in.Nonce = "n2" }},
			want: Result{Taint: messages.TaintExternal, Reason: ReasonBadSignature}},
		{name: "unknown key", in: f.signed(t, "hi", ts(0), "n1"), checks: true,
			mods: []mod{func(in *Input) {
				msg, _ := keys.MessageBytes(in.Text, in.Timestamp, in.Nonce)
				in.Signature = ed25519.Sign(f.other, msg)
			}},
			want: Result{Taint: messages.TaintExternal, Reason: ReasonBadSignature}},
		{name: "no verifier", in: f.signed(t, "hi", ts(0), "n1"), mods: []mod{auth, func(in *Input) { in.Verify = nil }},
			want: Result{Taint: messages.TaintAuth, Reason: ReasonBadSignatureAuth}},
		{name: "timestamp without zone, authenticated", mods: []mod{auth},
			in:   Input{Text: "hi", Timestamp: "2026-05-01T12:00:00", Nonce: "n1", Signature: make([]byte, 64), Verify: f.m.VerifyOwnerSignature},
			want: Result{Taint: messages.TaintAuth, Reason: ReasonMalformedAuth}},
		{name: "empty nonce", in: Input{Text: "hi", Timestamp: ts(0), Signature: make([]byte, 64), Verify: f.m.VerifyOwnerSignature},
			want: Result{Taint: messages.TaintExternal, Reason: ReasonMalformed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			for _, m := range tt.mods {
				m(&in)
			}
			if got := NeedsNonceCheck(in, now); got != tt.checks {
				t.Errorf("NeedsNonceCheck = %v, want %v", got, tt.checks)
			}
			if got := Classify(in, now); got != tt.want {
				t.Fatalf("Classify =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestAsReplay(t *testing.T) {
	r := Result{Taint: messages.TaintOwner, KeyID: "k", ConsumeNonce: true, Reason: ReasonOwner}
	want := Result{Taint: messages.TaintExternal, KeyID: "k", Replay: true, Reason: ReasonReplayConcurrency}
	if got := r.AsReplay(); got != want {
		t.Fatalf("AsReplay = %+v, want %+v", got, want)
	}
}

// TestClassifyDeviceKey checks that a signature by an active owner device
// (a key in the daemon's devices.Set, consulted after the owner key as
// cmd/silas does) counts as the owner's and reports the device's key ID,
// and that once the device is revoked (dropped from the Set) the same
// signature is only an invalid one.
func TestClassifyDeviceKey(t *testing.T) {
	f := newFixture(t)
	pub := f.other.Public().(ed25519.PublicKey)
	id := devices.ID(pub)
	active := devices.NewSet([]devices.Key{{ID: id, PublicKey: pub}})
	verify := func(set *devices.Set) func(msg, sig []byte) (string, bool) {
		return func(msg, sig []byte) (string, bool) {
			if id, ok := f.m.VerifyOwnerSignature(msg, sig); ok {
				return id, true
			}
			return set.Verify(msg, sig)
		}
	}
	msg, err := keys.MessageBytes("hi", ts(0), "n1")
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Text: "hi", Timestamp: ts(0), Nonce: "n1", Signature: ed25519.Sign(f.other, msg), Authenticated: true}

	in.Verify = f.m.VerifyOwnerSignature
	if got := Classify(in, now); got.Taint != messages.TaintAuth || got.Reason != ReasonBadSignatureAuth {
		t.Fatalf("owner key alone: Classify = %+v, want auth with an invalid signature", got)
	}
	in.Verify = verify(active)
	if got := Classify(in, now); got.Taint != messages.TaintOwner || got.KeyID != id || !got.ConsumeNonce {
		t.Fatalf("active device: Classify = %+v, want owner with key %s", got, id)
	}
	in.Verify = verify(active.Without(id))
	if got := Classify(in, now); got.Taint != messages.TaintAuth || got.KeyID != "" {
		t.Fatalf("revoked device: Classify = %+v, want auth", got)
	}
}
