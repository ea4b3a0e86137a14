package approval_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/silas-ai/silas/messages"
)

// tokenVectors is testdata/token_vectors.json.
type tokenVectors struct {
	SeedHex      string `json:"seed_hex"`
	PublicKeyHex string `json:"public_key_hex"`
	Vectors      []struct {
		Name              string          `json:"name"`
		Token             json.RawMessage `json:"token"`
		SignedBytes       string          `json:"signed_bytes"`
		SignedBytesSHA256 string          `json:"signed_bytes_sha256"`
		SignatureBase64   string          `json:"signature_base64"`
	} `json:"vectors"`
}

func TestTokenGoldenVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/token_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var tv tokenVectors
	if err := json.Unmarshal(raw, &tv); err != nil {
		t.Fatal(err)
	}
	if len(tv.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	seed, err := hex.DecodeString(tv.SeedHex)
	if err != nil || len(seed) != ed25519.SeedSize {
		t.Fatalf("seed_hex: %v", err)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	if got := hex.EncodeToString(priv.Public().(ed25519.PublicKey)); got != tv.PublicKeyHex {
		t.Fatalf("public key %s, want %s", got, tv.PublicKeyHex)
	}
	manager := newManager(t, tv.SeedHex)

	for _, v := range tv.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			var tok messages.ApprovalToken
			if err := json.Unmarshal(v.Token, &tok); err != nil {
				t.Fatal(err)
			}
			if err := tok.Validate(); err != nil {
				t.Fatalf("vector token does not validate: %v", err)
			}
			got, err := messages.TokenSignedBytes(&tok)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != v.SignedBytes {
				t.Fatalf("signed bytes\n got %s\nwant %s", got, v.SignedBytes)
			}
			if sum := sha256.Sum256(got); hex.EncodeToString(sum[:]) != v.SignedBytesSHA256 {
				t.Fatalf("sha256 %x, want %s", sum, v.SignedBytesSHA256)
			}
			wantSig, err := base64.StdEncoding.DecodeString(v.SignatureBase64)
			if err != nil {
				t.Fatal(err)
			}
			if sig := ed25519.Sign(priv, got); !bytes.Equal(sig, wantSig) {
				t.Fatalf("signature %s, want %s", base64.StdEncoding.EncodeToString(sig), v.SignatureBase64)
			}
			if sig, err := manager.Sign(got); err != nil || !bytes.Equal(sig, wantSig) {
				t.Fatalf("keys.Manager signature %x (%v), want the pinned one", sig, err)
			}
			if !bytes.Equal(tok.Signature, wantSig) {
				t.Fatal("the token's signature field does not decode to the pinned signature")
			}
			if _, ok := manager.VerifyOwnerSignature(got, tok.Signature); !ok {
				t.Fatal("the pinned signature does not verify")
			}
		})
	}
}
