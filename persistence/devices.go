package persistence

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// ErrCodeInvalid means an enrolment code is unknown, already used or
// expired. The owner asks for a new one (`silas devices add`).
var ErrCodeInvalid = errors.New("persistence: enrolment code unknown, used or expired")

// ErrDeviceExists means the public key is already enrolled, or was enrolled
// and revoked (a revoked key is never re-enabled). The device generates a
// new key pair.
var ErrDeviceExists = errors.New("persistence: device key already enrolled or revoked")

// Device is an owner device key: signatures by it count as the owner's
// (spec 5.12) until it is revoked.
type Device struct {
	// ID identifies the key (devices.ID of PublicKey); the caller derives it.
	ID string `json:"id"`
	// Name is the owner's label for the device.
	Name string `json:"name"`
	// PublicKey is the raw 32-byte Ed25519 public key.
	PublicKey []byte    `json:"public_key"`
	AddedAt   time.Time `json:"added_at"`
	// RevokedAt is set once the device is revoked; revoked devices stay
	// listed so that the audit trail's key ids still resolve to a name.
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Revoked reports whether the device was revoked.
func (d Device) Revoked() bool { return d.RevokedAt != nil }

// EnrolmentCode is a pending one-time code as stored under its hash.
type EnrolmentCode struct {
	// Name is the device name suggested when the code was made (may be "").
	Name      string    `json:"name"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Devices stores owner device keys and the one-time enrolment codes that
// add them. Codes are stored only as hashes, with a Badger TTL at their
// expiry (and the expiry checked on redeem, since the TTL rounds to
// seconds).
type Devices struct{ d *DB }

// Devices returns the owner device store.
func (d *DB) Devices() Devices { return Devices{d: d} }

// AddCode stores the hash of a new enrolment code valid until expiresAt.
func (s Devices) AddCode(ctx context.Context, hash [sha256.Size]byte, c EnrolmentCode) error {
	ttl := time.Until(c.ExpiresAt)
	if ttl <= 0 {
		return fmt.Errorf("add enrolment code: expiry %s is in the past: %w", c.ExpiresAt, ErrInvalid)
	}
	val, err := encodeJSON(&c)
	if err != nil {
		return fmt.Errorf("add enrolment code: %w", err)
	}
	k := key1(pfxDeviceCode, string(hash[:]))
	err = s.d.update(ctx, func(txn *wtxn) error {
		return txn.SetEntry(ttlEntry(k, val, ttl+time.Second))
	})
	if err != nil {
		return fmt.Errorf("add enrolment code: %w", err)
	}
	return nil
}

// Redeem consumes the code with the given hash and enrols dev in one
// transaction. An unknown, used or expired code is ErrCodeInvalid; a key
// that is already enrolled (or revoked) is ErrDeviceExists and leaves the
// code unused, so the device can retry with a new key. When dev.Name is
// empty the name given to the code is used. It returns the stored device.
func (s Devices) Redeem(ctx context.Context, hash [sha256.Size]byte, dev Device, now time.Time) (Device, error) {
	if err := validID("device id", dev.ID); err != nil {
		return Device{}, fmt.Errorf("enrol device: %w", err)
	}
	ck := key1(pfxDeviceCode, string(hash[:]))
	dk := key1(pfxDevice, dev.ID)
	var out Device
	err := s.d.update(ctx, func(txn *wtxn) error {
		out = Device{}
		var code EnrolmentCode
		err := getValue(txn, ck, func(v []byte) error { return decodeJSON(v, &code) })
		if errors.Is(err, ErrNotFound) {
			return ErrCodeInvalid
		}
		if err != nil {
			return err
		}
		if !now.Before(code.ExpiresAt) {
			return ErrCodeInvalid
		}
		dup, err := exists(txn, dk)
		if err != nil {
			return err
		}
		if dup {
			return fmt.Errorf("device %s: %w", dev.ID, ErrDeviceExists)
		}
		d := dev
		if d.Name == "" {
			d.Name = code.Name
		}
		d.AddedAt = now.UTC()
		d.RevokedAt = nil
		val, err := encodeJSON(&d)
		if err != nil {
			return err
		}
		if err := txn.Delete(ck); err != nil {
			return err
		}
		if err := txn.Set(dk, val); err != nil {
			return err
		}
		out = d
		return nil
	})
	if err != nil {
		return Device{}, fmt.Errorf("enrol device: %w", err)
	}
	return out, nil
}

// List returns every device, revoked ones included, oldest first.
func (s Devices) List(ctx context.Context) ([]Device, error) {
	out, err := scanJSON[Device](ctx, s.d, []byte(pfxDevice), "device")
	if err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	// Keys order by id; the owner reads them in enrolment order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].AddedAt.Before(out[j-1].AddedAt); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// Revoke marks device id revoked at now and returns it. Revoking a revoked
// device changes nothing and succeeds; an unknown id is ErrNotFound.
func (s Devices) Revoke(ctx context.Context, id string, now time.Time) (Device, error) {
	if err := validID("device id", id); err != nil {
		return Device{}, fmt.Errorf("revoke device: %w", err)
	}
	k := key1(pfxDevice, id)
	var out Device
	err := s.d.update(ctx, func(txn *wtxn) error {
		var d Device
		if err := getValue(txn, k, func(v []byte) error { return decodeJSON(v, &d) }); err != nil {
			return err
		}
		out = d
		if d.Revoked() {
			return nil
		}
		at := now.UTC()
		d.RevokedAt = &at
		val, err := encodeJSON(&d)
		if err != nil {
			return err
		}
		out = d
		return txn.Set(k, val)
	})
	if err != nil {
		return Device{}, fmt.Errorf("revoke device %s: %w", id, err)
	}
	return out, nil
}

// Get returns device id, or ErrNotFound.
func (s Devices) Get(ctx context.Context, id string) (Device, error) {
	if err := validID("device id", id); err != nil {
		return Device{}, fmt.Errorf("get device: %w", err)
	}
	var d Device
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		return getValue(txn, key1(pfxDevice, id), func(v []byte) error { return decodeJSON(v, &d) })
	})
	if err != nil {
		return Device{}, fmt.Errorf("get device %s: %w", id, err)
	}
	return d, nil
}
