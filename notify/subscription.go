package notify

import (
	"crypto/ecdh"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// MaxEndpointLen bounds a push endpoint URL; the push services' are a few
// hundred bytes.
const MaxEndpointLen = 2048

// ErrBadSubscription is a subscription Silas will not send to; its message
// says which field is wrong. The app subscribes again.
var ErrBadSubscription = errors.New("bad push subscription")

// CheckSubscription validates what a browser sent as its push
// subscription. The endpoint comes from the browser and Silas POSTs to
// it, so it must be an https URL (http only to a loopback address, for a
// push service on this machine or in tests), without credentials, of
// bounded length; the keys must be a P-256 public key and a 16-byte
// authentication secret (RFC 8291).
func CheckSubscription(endpoint, p256dh, auth string) error {
	if err := checkEndpoint(endpoint); err != nil {
		return err
	}
	pub, err := decodeKey(p256dh)
	if err != nil {
		return fmt.Errorf("%w: keys.p256dh is not base64url: %v", ErrBadSubscription, err)
	}
	if _, err := ecdh.P256().NewPublicKey(pub); err != nil {
		return fmt.Errorf("%w: keys.p256dh is not an uncompressed P-256 public key", ErrBadSubscription)
	}
	secret, err := decodeKey(auth)
	if err != nil {
		return fmt.Errorf("%w: keys.auth is not base64url: %v", ErrBadSubscription, err)
	}
	if len(secret) != 16 {
		return fmt.Errorf("%w: keys.auth is %d bytes, want 16", ErrBadSubscription, len(secret))
	}
	return nil
}

func checkEndpoint(endpoint string) error {
	switch {
	case endpoint == "":
		return fmt.Errorf("%w: endpoint is empty", ErrBadSubscription)
	case len(endpoint) > MaxEndpointLen:
		return fmt.Errorf("%w: endpoint is %d bytes, limit %d", ErrBadSubscription, len(endpoint), MaxEndpointLen)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("%w: endpoint is not a URL", ErrBadSubscription)
	}
	host := u.Hostname()
	switch {
	case u.User != nil:
		return fmt.Errorf("%w: endpoint must not carry a user name or password", ErrBadSubscription)
	case host == "" || u.Opaque != "":
		return fmt.Errorf("%w: endpoint has no host", ErrBadSubscription)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(host):
		return nil
	}
	return fmt.Errorf("%w: endpoint must be an https URL (got scheme %q)", ErrBadSubscription, u.Scheme)
}

// loopback reports whether host is a loopback IP address or localhost.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// decodeKey decodes base64url with or without padding, as browsers send
// (PushSubscription.toJSON) and as some libraries store.
func decodeKey(s string) ([]byte, error) {
	if len(s) > 256 {
		return nil, fmt.Errorf("%d characters", len(s))
	}
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}
