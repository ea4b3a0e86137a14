// Package softkey is a software WebAuthn authenticator for tests: it
// answers the options a relying party sends the way a browser with a
// security key would (an ES256 credential, "none" attestation, user
// presence and verification), so that the server's ceremonies can be
// driven, and attacked, without a browser.
package softkey

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// Authenticator data flags (WebAuthn §6.1).
const (
	flagUP = 0x01
	flagUV = 0x04
	flagAT = 0x40
)

// Key is one ES256 credential on a software authenticator. It is not safe
// for concurrent use.
type Key struct {
	priv   *ecdsa.PrivateKey
	id     []byte
	user   []byte
	count  uint32
	NoUV   bool // answer without user verification
	NoUP   bool // answer without user presence
	Freeze bool // keep the sign count (a cloned key's symptom)
}

// New returns a key with a fresh credential id and key pair.
func New() (*Key, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("softkey: %w", err)
	}
	id := make([]byte, 32)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("softkey: %w", err)
	}
	return &Key{priv: priv, id: id}, nil
}

// ID returns the credential id.
func (k *Key) ID() []byte { return k.id }

// Impostor returns a key with k's credential id and user handle but
// another key pair: what an attacker who knows the id but not the
// private key can sign.
func (k *Key) Impostor() (*Key, error) {
	o, err := New()
	if err != nil {
		return nil, err
	}
	o.id, o.user, o.count = k.id, k.user, k.count
	return o, nil
}

var b64 = base64.RawURLEncoding

// options is what the ceremonies read of {"publicKey": ...}.
type options struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		RPID string `json:"rpId"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"publicKey"`
}

func parse(opts []byte) (*options, error) {
	var o options
	if err := json.Unmarshal(opts, &o); err != nil {
		return nil, fmt.Errorf("softkey: options: %w", err)
	}
	if o.PublicKey.Challenge == "" {
		return nil, errors.New("softkey: options without a challenge")
	}
	return &o, nil
}

// Create answers creation options (navigator.credentials.create) from a
// page at origin with the registration response JSON.
func (k *Key) Create(opts []byte, origin string) ([]byte, error) {
	o, err := parse(opts)
	if err != nil {
		return nil, err
	}
	if k.user, err = b64.DecodeString(o.PublicKey.User.ID); err != nil {
		return nil, fmt.Errorf("softkey: user id: %w", err)
	}
	cdj, err := clientData("webauthn.create", o.PublicKey.Challenge, origin)
	if err != nil {
		return nil, err
	}
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         int64(webauthncose.P256), XCoord: pad32(k.priv.X.Bytes()), YCoord: pad32(k.priv.Y.Bytes()),
	})
	if err != nil {
		return nil, fmt.Errorf("softkey: COSE key: %w", err)
	}
	auth := k.authData(o.PublicKey.RP.ID, flagAT)
	auth = append(auth, make([]byte, 16)...) // AAGUID: none
	auth = binary.BigEndian.AppendUint16(auth, uint16(len(k.id)))
	auth = append(auth, k.id...)
	auth = append(auth, cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": auth})
	if err != nil {
		return nil, fmt.Errorf("softkey: attestation object: %w", err)
	}
	return json.Marshal(map[string]any{
		"id": b64.EncodeToString(k.id), "rawId": b64.EncodeToString(k.id), "type": "public-key",
		"response":               map[string]any{"clientDataJSON": b64.EncodeToString(cdj), "attestationObject": b64.EncodeToString(att)},
		"clientExtensionResults": map[string]any{},
	})
}

// Get answers request options (navigator.credentials.get) from a page at
// origin with the assertion response JSON.
func (k *Key) Get(opts []byte, origin string) ([]byte, error) {
	o, err := parse(opts)
	if err != nil {
		return nil, err
	}
	cdj, err := clientData("webauthn.get", o.PublicKey.Challenge, origin)
	if err != nil {
		return nil, err
	}
	auth := k.authData(o.PublicKey.RPID, 0)
	digest := sha256.Sum256(cdj)
	signed := sha256.Sum256(append(append([]byte(nil), auth...), digest[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, signed[:])
	if err != nil {
		return nil, fmt.Errorf("softkey: sign: %w", err)
	}
	return json.Marshal(map[string]any{
		"id": b64.EncodeToString(k.id), "rawId": b64.EncodeToString(k.id), "type": "public-key",
		"response": map[string]any{
			"clientDataJSON": b64.EncodeToString(cdj), "authenticatorData": b64.EncodeToString(auth),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(k.user),
		},
		"clientExtensionResults": map[string]any{},
	})
}

// authData is rpIdHash, flags and the sign count (advanced unless
// frozen).
func (k *Key) authData(rpID string, extra byte) []byte {
	h := sha256.Sum256([]byte(rpID))
	flags := extra
	if !k.NoUP {
		flags |= flagUP
	}
	if !k.NoUV {
		flags |= flagUV
	}
	if !k.Freeze {
		k.count++
	}
	out := append(h[:], flags)
	return binary.BigEndian.AppendUint32(out, k.count)
}

func clientData(typ, challenge, origin string) ([]byte, error) {
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": origin, "crossOrigin": false})
	if err != nil {
		return nil, fmt.Errorf("softkey: client data: %w", err)
	}
	return b, nil
}

func pad32(b []byte) []byte {
	if len(b) >= 32 {
		return b
	}
	return append(make([]byte, 32-len(b)), b...)
}
