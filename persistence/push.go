package persistence

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"
)

// ErrTooManyPushSubscriptions means the owner already has
// MaxPushSubscriptions browsers subscribed: remove one (POST
// /push/unsubscribe from it) before adding another.
var ErrTooManyPushSubscriptions = errors.New("persistence: too many push subscriptions")

// MaxPushSubscriptions bounds the owner's Web Push subscriptions: each is
// one browser profile, and every pending card is sent to all of them.
const MaxPushSubscriptions = 20

// PushSubscription is one browser's Web Push subscription (the Push API's
// PushSubscription): where to send, and the public keys the payload is
// encrypted to (RFC 8291). It holds no secret of Silas's; Auth is the
// browser's authentication secret for this subscription only.
type PushSubscription struct {
	Endpoint string    `json:"endpoint"`
	P256dh   string    `json:"p256dh"`
	Auth     string    `json:"auth"`
	AddedAt  time.Time `json:"added_at"`
}

// PushSubscriptions stores the owner's Web Push subscriptions, keyed by
// the hash of their endpoint (an endpoint is up to a few KiB).
type PushSubscriptions struct{ d *DB }

// PushSubscriptions returns the Web Push subscription store.
func (d *DB) PushSubscriptions() PushSubscriptions { return PushSubscriptions{d: d} }

func pushKey(endpoint string) ([]byte, error) {
	if endpoint == "" {
		return nil, fmt.Errorf("push endpoint is empty: %w", ErrInvalid)
	}
	sum := sha256.Sum256([]byte(endpoint))
	return key1(pfxPushSubscription, string(sum[:])), nil
}

// Put stores s, replacing a subscription with the same endpoint (a
// browser that renewed its keys). A new one beyond MaxPushSubscriptions is
// ErrTooManyPushSubscriptions.
func (s PushSubscriptions) Put(ctx context.Context, sub PushSubscription) (added bool, err error) {
	k, err := pushKey(sub.Endpoint)
	if err != nil {
		return false, fmt.Errorf("store push subscription: %w", err)
	}
	val, err := encodeJSON(&sub)
	if err != nil {
		return false, fmt.Errorf("store push subscription: %w", err)
	}
	err = s.d.update(ctx, func(txn *wtxn) error {
		known, err := exists(txn, k)
		if err != nil {
			return err
		}
		if !known {
			n, err := countKeys(ctx, txn.Txn, []byte(pfxPushSubscription))
			if err != nil {
				return err
			}
			if n >= MaxPushSubscriptions {
				return ErrTooManyPushSubscriptions
			}
		}
		added = !known
		return txn.Set(k, val)
	})
	if err != nil {
		return false, fmt.Errorf("store push subscription: %w", err)
	}
	return added, nil
}

// Delete removes the subscription of endpoint and reports whether there
// was one.
func (s PushSubscriptions) Delete(ctx context.Context, endpoint string) (bool, error) {
	k, err := pushKey(endpoint)
	if err != nil {
		return false, fmt.Errorf("remove push subscription: %w", err)
	}
	var found bool
	err = s.d.update(ctx, func(txn *wtxn) error {
		if found, err = exists(txn, k); err != nil || !found {
			return err
		}
		return txn.Delete(k)
	})
	if err != nil {
		return false, fmt.Errorf("remove push subscription: %w", err)
	}
	return found, nil
}

// List returns every subscription.
func (s PushSubscriptions) List(ctx context.Context) ([]PushSubscription, error) {
	out, err := scanJSON[PushSubscription](ctx, s.d, []byte(pfxPushSubscription), "push subscription")
	if err != nil {
		return nil, fmt.Errorf("list push subscriptions: %w", err)
	}
	return out, nil
}
