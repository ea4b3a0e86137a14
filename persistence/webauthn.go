package persistence

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrCredentialExists means the credential id is already registered: the
// authenticator was registered before (the owner uses it as it is).
var ErrCredentialExists = errors.New("persistence: security key already registered")

// WebAuthnCredential is a security key (or platform authenticator) the
// owner registered for the irreversible rung of the confirmation ladder
// (spec 0.5.2). It holds the public key record and its counters, never a
// secret.
type WebAuthnCredential struct {
	// ID is the credential id the authenticator chose.
	ID []byte `json:"id"`
	// RPID is the host name it was registered at; it signs only there.
	RPID string `json:"rp_id"`
	// Name is the owner's label.
	Name    string    `json:"name"`
	AddedAt time.Time `json:"added_at"`
	// LastUsedAt is when it last confirmed an answer.
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	// Record is the WebAuthn library's credential record (public key,
	// sign count, flags), as JSON.
	Record []byte `json:"record"`
}

// WebAuthnCeremony is a registration or an assertion waiting for the
// authenticator's answer: the server side of its challenge.
type WebAuthnCeremony struct {
	// Session is the WebAuthn session (challenge, relying party, allowed
	// credentials), opaque here.
	Session   []byte    `json:"session"`
	ExpiresAt time.Time `json:"expires_at"`
}

// WebAuthn stores the owner's WebAuthn credentials and the ceremonies in
// progress. A ceremony is taken (read and deleted) once, so a challenge
// answers at most one answer.
type WebAuthn struct{ d *DB }

// WebAuthn returns the owner's WebAuthn store.
func (d *DB) WebAuthn() WebAuthn { return WebAuthn{d: d} }

func credentialKey(id []byte) ([]byte, error) {
	if len(id) == 0 || len(id) > maxIDLen {
		return nil, fmt.Errorf("credential id of %d bytes: %w", len(id), ErrInvalid)
	}
	return key1(pfxWebAuthnCredential, string(id)), nil
}

// AddCredential stores a newly registered credential; one already stored
// under its id is ErrCredentialExists.
func (s WebAuthn) AddCredential(ctx context.Context, c WebAuthnCredential) error {
	k, err := credentialKey(c.ID)
	if err != nil {
		return fmt.Errorf("add security key: %w", err)
	}
	val, err := encodeJSON(&c)
	if err != nil {
		return fmt.Errorf("add security key: %w", err)
	}
	err = s.d.update(ctx, func(txn *wtxn) error {
		dup, err := exists(txn, k)
		if err != nil {
			return err
		}
		if dup {
			return ErrCredentialExists
		}
		return txn.Set(k, val)
	})
	if err != nil {
		return fmt.Errorf("add security key: %w", err)
	}
	return nil
}

// Credentials returns every registered credential, oldest first.
func (s WebAuthn) Credentials(ctx context.Context) ([]WebAuthnCredential, error) {
	out, err := scanJSON[WebAuthnCredential](ctx, s.d, []byte(pfxWebAuthnCredential), "security key")
	if err != nil {
		return nil, fmt.Errorf("list security keys: %w", err)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].AddedAt.Before(out[j-1].AddedAt); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// UseCredential records that credential id confirmed an answer at now:
// its new record (the advanced sign count) and the time. An id no longer
// registered (removed meanwhile) is ErrNotFound, and the answer must not
// count.
func (s WebAuthn) UseCredential(ctx context.Context, id, record []byte, now time.Time) error {
	k, err := credentialKey(id)
	if err != nil {
		return fmt.Errorf("update security key: %w", err)
	}
	err = s.d.update(ctx, func(txn *wtxn) error {
		var c WebAuthnCredential
		if err := getValue(txn, k, func(v []byte) error { return decodeJSON(v, &c) }); err != nil {
			return err
		}
		at := now.UTC()
		c.Record, c.LastUsedAt = record, &at
		val, err := encodeJSON(&c)
		if err != nil {
			return err
		}
		return txn.Set(k, val)
	})
	if err != nil {
		return fmt.Errorf("update security key: %w", err)
	}
	return nil
}

// RemoveCredential deletes credential id and returns it; an unknown id is
// ErrNotFound.
func (s WebAuthn) RemoveCredential(ctx context.Context, id []byte) (WebAuthnCredential, error) {
	k, err := credentialKey(id)
	if err != nil {
		return WebAuthnCredential{}, fmt.Errorf("remove security key: %w", err)
	}
	var out WebAuthnCredential
	err = s.d.update(ctx, func(txn *wtxn) error {
		if err := getValue(txn, k, func(v []byte) error { return decodeJSON(v, &out) }); err != nil {
			return err
		}
		return txn.Delete(k)
	})
	if err != nil {
		return WebAuthnCredential{}, fmt.Errorf("remove security key: %w", err)
	}
	return out, nil
}

// Ceremony purposes.
const (
	// CeremonyRegister is a registration, under a random ceremony id.
	CeremonyRegister = "register"
	// CeremonyApprove is the assertion that confirms one card, under the
	// card's request id: a new one replaces the old, so only the latest
	// challenge for a card counts.
	CeremonyApprove = "approve"
)

func ceremonyKey(purpose, ref string) ([]byte, error) {
	if err := validID("ceremony purpose", purpose); err != nil {
		return nil, err
	}
	if err := validID("ceremony ref", ref); err != nil {
		return nil, err
	}
	return key2(pfxWebAuthnCeremony, purpose, ref), nil
}

// PutCeremony stores ceremony c under purpose and ref until c.ExpiresAt,
// replacing any earlier one.
func (s WebAuthn) PutCeremony(ctx context.Context, purpose, ref string, c WebAuthnCeremony, now time.Time) error {
	k, err := ceremonyKey(purpose, ref)
	if err != nil {
		return fmt.Errorf("put ceremony: %w", err)
	}
	ttl := c.ExpiresAt.Sub(now)
	if ttl <= 0 {
		return fmt.Errorf("put ceremony: expiry %s is not after %s: %w", c.ExpiresAt, now, ErrInvalid)
	}
	val, err := encodeJSON(&c)
	if err != nil {
		return fmt.Errorf("put ceremony: %w", err)
	}
	err = s.d.update(ctx, func(txn *wtxn) error {
		return txn.SetEntry(ttlEntry(k, val, ttl+time.Second))
	})
	if err != nil {
		return fmt.Errorf("put ceremony: %w", err)
	}
	return nil
}

// TakeCeremony returns the ceremony under purpose and ref and deletes it,
// in one transaction: a second take, or one after the expiry, is
// ErrNotFound.
func (s WebAuthn) TakeCeremony(ctx context.Context, purpose, ref string, now time.Time) (WebAuthnCeremony, error) {
	k, err := ceremonyKey(purpose, ref)
	if err != nil {
		return WebAuthnCeremony{}, fmt.Errorf("take ceremony: %w", err)
	}
	var out WebAuthnCeremony
	err = s.d.update(ctx, func(txn *wtxn) error {
		if err := getValue(txn, k, func(v []byte) error { return decodeJSON(v, &out) }); err != nil {
			return err
		}
		if err := txn.Delete(k); err != nil {
			return err
		}
		if !now.Before(out.ExpiresAt) {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return WebAuthnCeremony{}, fmt.Errorf("take ceremony: %w", err)
	}
	return out, nil
}
