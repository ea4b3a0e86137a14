package review_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/runtime/review"
	"github.com/silas-ai/silas/runtime/review/softkey"
)

const (
	ownerID = "owner"
	origin  = "http://localhost:8420"
)

var rp = review.RelyingParty{ID: "localhost", Origin: origin}

func TestRelyingPartyFor(t *testing.T) {
	tests := []struct {
		host, origin string
		want         review.RelyingParty
		wantErr      bool
	}{
		{"localhost:8420", "http://localhost:8420", rp, false},
		{"Chat.Example.com", "https://chat.example.com", review.RelyingParty{ID: "chat.example.com", Origin: "https://chat.example.com"}, false},
		{"127.0.0.1:8420", "http://127.0.0.1:8420", review.RelyingParty{}, true},    // browsers refuse IP addresses
		{"[::1]:8420", "http://[::1]:8420", review.RelyingParty{}, true},            // so is this one
		{"localhost:8420", "", review.RelyingParty{}, true},                         // no Origin: not the app
		{"localhost:8420", "http://evil.example:8420", review.RelyingParty{}, true}, // another site's page
		{"localhost:8420", "http://localhost:9999", review.RelyingParty{}, true},    // another port
		{"localhost:8420", "file://localhost:8420", review.RelyingParty{}, true},    // not http(s)
		{"localhost:8420", "http://localhost:8420/x", review.RelyingParty{}, true},  // a path is no origin
		{"localhost:8420", "http://u@localhost:8420", review.RelyingParty{}, true},  // nor userinfo
	}
	for _, tt := range tests {
		got, err := review.RelyingPartyFor(tt.host, tt.origin)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("RelyingPartyFor(%q, %q) = %+v, %v", tt.host, tt.origin, got, err)
		}
		if err != nil && !errors.Is(err, review.ErrRelyingParty) {
			t.Errorf("RelyingPartyFor(%q, %q): %v is not ErrRelyingParty", tt.host, tt.origin, err)
		}
	}
	if _, err := review.RelyingPartyFor("127.0.0.1:8420", "http://127.0.0.1:8420"); !strings.Contains(err.Error(), "http://localhost:8420") {
		t.Errorf("the IP refusal %q does not say where to open the app", err)
	}
}

// register runs a registration with key and returns the credential.
func register(t *testing.T, key *softkey.Key, existing ...review.Credential) review.Credential {
	t.Helper()
	opts, sess, err := review.BeginRegistration(rp, ownerID, existing)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := key.Create(opts, origin)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := review.FinishRegistration(sess, ownerID, "test key", resp, time.Now())
	if err != nil {
		t.Fatalf("finish registration: %v", err)
	}
	return cred
}

func TestRegisterThenAssert(t *testing.T) {
	key, err := softkey.New()
	if err != nil {
		t.Fatal(err)
	}
	cred := register(t, key)
	if cred.RPID != "localhost" || string(cred.ID) != string(key.ID()) || cred.Name != "test key" {
		t.Fatalf("credential %+v", cred)
	}
	opts, sess, err := review.BeginAssertion(rp, ownerID, []review.Credential{cred})
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		PublicKey struct {
			AllowCredentials []json.RawMessage `json:"allowCredentials"`
			UserVerification string            `json:"userVerification"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(opts, &o); err != nil || len(o.PublicKey.AllowCredentials) != 1 || o.PublicKey.UserVerification != "required" {
		t.Errorf("assertion options %s (%v)", opts, err)
	}
	resp, err := key.Get(opts, origin)
	if err != nil {
		t.Fatal(err)
	}
	got, err := review.VerifyAssertion(sess, ownerID, []review.Credential{cred}, resp)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if string(got.ID) != string(cred.ID) || string(got.Record) == string(cred.Record) {
		t.Error("the verified credential did not come back with its sign count advanced")
	}

	// The same answer again: the sign count did not advance, as a
	// replayed (or cloned) assertion's would not.
	if _, err := review.VerifyAssertion(sess, ownerID, []review.Credential{got}, resp); !errors.Is(err, review.ErrCeremony) {
		t.Errorf("a replayed assertion: %v, want ErrCeremony", err)
	}
}

// TestAssertionAttacks: every assertion an attacker without the owner's
// key (or with it, but for another ceremony) can produce is refused.
func TestAssertionAttacks(t *testing.T) {
	key, err := softkey.New()
	if err != nil {
		t.Fatal(err)
	}
	cred := register(t, key)
	creds := []review.Credential{cred}
	begin := func() (json.RawMessage, review.Session) {
		opts, sess, err := review.BeginAssertion(rp, ownerID, creds)
		if err != nil {
			t.Fatal(err)
		}
		return opts, sess
	}
	stranger, err := softkey.New()
	if err != nil {
		t.Fatal(err)
	}
	register(t, stranger) // registered, but not among creds
	impostor, err := key.Impostor()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		answer func(opts json.RawMessage) []byte
	}{
		{"signed by another key with the owner's credential id", func(opts json.RawMessage) []byte {
			b, _ := impostor.Get(opts, origin)
			return b
		}},
		{"by a credential the owner did not register", func(opts json.RawMessage) []byte {
			b, _ := stranger.Get(opts, origin)
			return b
		}},
		{"for another challenge", func(json.RawMessage) []byte {
			other, _ := begin()
			b, _ := key.Get(other, origin)
			return b
		}},
		{"from another origin", func(opts json.RawMessage) []byte {
			b, _ := key.Get(opts, "http://evil.example:8420")
			return b
		}},
		{"for another relying party", func(opts json.RawMessage) []byte {
			b, _ := key.Get([]byte(strings.Replace(string(opts), `"rpId":"localhost"`, `"rpId":"evil.example"`, 1)), origin)
			return b
		}},
		{"without user verification", func(opts json.RawMessage) []byte {
			k := *key
			k.NoUV = true
			b, _ := k.Get(opts, origin)
			return b
		}},
		{"with a tampered signature", func(opts json.RawMessage) []byte {
			b, _ := key.Get(opts, origin)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			r := m["response"].(map[string]any)
			sig := []byte(r["signature"].(string))
			sig[len(sig)/2] ^= 1
			r["signature"] = string(sig)
			b, _ = json.Marshal(m)
			return b
		}},
		{"not JSON", func(json.RawMessage) []byte { return []byte("{") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, sess := begin()
			if _, err := review.VerifyAssertion(sess, ownerID, creds, tt.answer(opts)); !errors.Is(err, review.ErrCeremony) {
				t.Errorf("VerifyAssertion = %v, want ErrCeremony", err)
			}
		})
	}
}

func TestAssertionNeedsACredential(t *testing.T) {
	if _, _, err := review.BeginAssertion(rp, ownerID, nil); !errors.Is(err, review.ErrNoCredential) || !strings.Contains(err.Error(), "Security keys") {
		t.Errorf("BeginAssertion without a key: %v", err)
	}
	key, _ := softkey.New()
	cred := register(t, key)
	other := review.RelyingParty{ID: "chat.example.com", Origin: "https://chat.example.com"}
	if _, _, err := review.BeginAssertion(other, ownerID, []review.Credential{cred}); !errors.Is(err, review.ErrNoCredential) {
		t.Errorf("a key registered for localhost used for chat.example.com: %v", err)
	}
}

func TestRegistrationAttacks(t *testing.T) {
	key, _ := softkey.New()
	tests := []struct {
		name   string
		answer func(opts json.RawMessage) []byte
	}{
		{"from another origin", func(opts json.RawMessage) []byte { b, _ := key.Create(opts, "http://evil.example"); return b }},
		{"for another challenge", func(json.RawMessage) []byte {
			other, _, _ := review.BeginRegistration(rp, ownerID, nil)
			b, _ := key.Create(other, origin)
			return b
		}},
		{"without user presence", func(opts json.RawMessage) []byte {
			k := *key
			k.NoUP = true
			b, _ := k.Create(opts, origin)
			return b
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, sess, err := review.BeginRegistration(rp, ownerID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := review.FinishRegistration(sess, ownerID, "k", tt.answer(opts), time.Now()); !errors.Is(err, review.ErrCeremony) {
				t.Errorf("FinishRegistration = %v, want ErrCeremony", err)
			}
		})
	}
	// A registered key is excluded from the next registration.
	cred := register(t, key)
	opts, _, err := review.BeginRegistration(rp, ownerID, []review.Credential{cred})
	if err != nil || !strings.Contains(string(opts), "excludeCredentials") {
		t.Errorf("registration options %s do not exclude the registered key (%v)", opts, err)
	}
}

func TestFrozenCounterIsAClone(t *testing.T) {
	key, _ := softkey.New()
	cred := register(t, key)
	key.Freeze = true
	opts, sess, _ := review.BeginAssertion(rp, ownerID, []review.Credential{cred})
	resp, _ := key.Get(opts, origin)
	if _, err := review.VerifyAssertion(sess, ownerID, []review.Credential{cred}, resp); !errors.Is(err, review.ErrCeremony) || !strings.Contains(err.Error(), "cloned") {
		t.Errorf("a sign count that did not advance: %v", err)
	}
}
