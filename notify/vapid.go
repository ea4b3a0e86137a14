package notify

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/silas-ai/silas/runtime/keys"
)

// vapidKeyName is the keystore entry of the VAPID private key: the raw
// 32-byte P-256 scalar, in data_dir/keys with the owner key.
const vapidKeyName = "vapid-private"

// VAPID is the application server's key pair (RFC 8292), both base64url
// without padding as the Push API and webpush-go take them. Public is
// given to the browser (applicationServerKey); Private never leaves the
// keystore and the process.
type VAPID struct {
	Public  string
	Private string
}

// EnsureVAPID returns the daemon's VAPID key pair, creating it the first
// time. It is made once: a new key would orphan every browser's
// subscription, which is bound to the public key it was made with.
func EnsureVAPID(ks keys.Keystore) (v VAPID, created bool, err error) {
	raw, err := ks.Get(vapidKeyName)
	if errors.Is(err, keys.ErrNotFound) {
		priv, gerr := ecdh.P256().GenerateKey(rand.Reader)
		if gerr != nil {
			return VAPID{}, false, fmt.Errorf("create the Web Push (VAPID) key: %w", gerr)
		}
		raw, created = priv.Bytes(), true
		if err = ks.Put(vapidKeyName, raw); err != nil {
			return VAPID{}, false, fmt.Errorf("store the Web Push (VAPID) key: %w", err)
		}
	} else if err != nil {
		return VAPID{}, false, fmt.Errorf("read the Web Push (VAPID) key: %w", err)
	}
	priv, err := ecdh.P256().NewPrivateKey(raw)
	if err != nil {
		return VAPID{}, false, fmt.Errorf("the Web Push key %s in the keys directory is not a P-256 key (%w); remove it and restart Silas, then subscribe the app again", vapidKeyName, err)
	}
	enc := base64.RawURLEncoding
	return VAPID{Public: enc.EncodeToString(priv.PublicKey().Bytes()), Private: enc.EncodeToString(raw)}, created, nil
}
