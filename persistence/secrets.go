package persistence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// ErrFulfilled means a secure-input request was already answered; a second
// value for the same ref_id is refused (HTTP 409).
var ErrFulfilled = errors.New("persistence: secure input already fulfilled")

// maxRefIDLen bounds a secure-input ref_id; it appears in URLs and keys.
const maxRefIDLen = 128

// SecureInputRequest is a pending or fulfilled request for a secret (spec
// 3.12 SecureInputRequest, 5.10.1). It never holds the secret itself: the
// value lives in the keystore under a name derived from RefID.
type SecureInputRequest struct {
	// RefID is the opaque reference the channel posts the value to
	// (POST /secrets/{ref_id}): 1 to 128 of [A-Za-z0-9._-], not starting
	// with a dot.
	RefID string `json:"ref_id"`
	// Label is what the owner is asked for ("Notion integration token").
	Label string `json:"label"`
	// InputHint is a visual prefix hint ("ntn_..."), never validation.
	InputHint string `json:"input_hint,omitempty"`
	// Guidance is rendered by the channel.
	Guidance SecureInputGuidance `json:"guidance"`
	// Scope is the scope whose connection setup asked for the secret.
	Scope     string    `json:"scope"`
	CreatedAt time.Time `json:"created_at"`
	// FulfilledAt is set once the value is stored.
	FulfilledAt *time.Time `json:"fulfilled_at,omitempty"`
}

// SecureInputGuidance is the guidance dict of spec 3.12.
type SecureInputGuidance struct {
	Instructions string  `json:"instructions"`
	HelpURL      *string `json:"help_url"`
}

// CheckRefID reports whether ref can name a secure-input request.
func CheckRefID(ref string) error {
	if ref == "" || len(ref) > maxRefIDLen || ref[0] == '.' {
		return fmt.Errorf("ref_id %q: want 1 to %d characters, not starting with '.': %w", ref, maxRefIDLen, ErrInvalid)
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("ref_id %q: only letters, digits, '.', '_' and '-' are allowed: %w", ref, ErrInvalid)
		}
	}
	return nil
}

// SecureInputs stores secure-input requests: created pending by the runtime
// when a connection skill needs a secret, marked fulfilled when the owner
// posts the value.
type SecureInputs struct{ d *DB }

// SecureInputs returns the secure-input request store.
func (d *DB) SecureInputs() SecureInputs { return SecureInputs{d: d} }

// Create stores r as pending. A ref_id already used (pending or fulfilled)
// is ErrInvalid: ref ids are single-use.
func (s SecureInputs) Create(ctx context.Context, r SecureInputRequest) error {
	if err := CheckRefID(r.RefID); err != nil {
		return fmt.Errorf("create secure input: %w", err)
	}
	if r.Label == "" {
		return fmt.Errorf("create secure input %s: label is empty: %w", r.RefID, ErrInvalid)
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now().UTC()
	}
	r.FulfilledAt = nil
	val, err := encodeJSON(&r)
	if err != nil {
		return fmt.Errorf("create secure input %s: %w", r.RefID, err)
	}
	k := key1(pfxSecureInput, r.RefID)
	err = s.d.updateSized(ctx, int64(len(val))+defaultWriteSize, func(txn *wtxn) error {
		dup, err := exists(txn, k)
		if err != nil {
			return err
		}
		if dup {
			return fmt.Errorf("ref_id already used: %w", ErrInvalid)
		}
		return txn.Set(k, val)
	})
	if err != nil {
		return fmt.Errorf("create secure input %s: %w", r.RefID, err)
	}
	return nil
}

// Get returns the request ref, or ErrNotFound.
func (s SecureInputs) Get(ctx context.Context, ref string) (SecureInputRequest, error) {
	if err := CheckRefID(ref); err != nil {
		return SecureInputRequest{}, fmt.Errorf("get secure input: %w: %w", ErrNotFound, err)
	}
	var r SecureInputRequest
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		return getValue(txn, key1(pfxSecureInput, ref), func(v []byte) error { return decodeJSON(v, &r) })
	})
	if err != nil {
		return SecureInputRequest{}, fmt.Errorf("get secure input %s: %w", ref, err)
	}
	return r, nil
}

// Pending returns the requests not fulfilled yet, oldest first.
func (s SecureInputs) Pending(ctx context.Context) ([]SecureInputRequest, error) {
	all, err := scanJSON[SecureInputRequest](ctx, s.d, []byte(pfxSecureInput), "secure input")
	if err != nil {
		return nil, fmt.Errorf("pending secure inputs: %w", err)
	}
	out := all[:0]
	for _, r := range all {
		if r.FulfilledAt == nil {
			out = append(out, r)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].CreatedAt.Before(out[j-1].CreatedAt); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// MarkFulfilled records that the value of ref was stored. An unknown ref is
// ErrNotFound and one already fulfilled ErrFulfilled; of concurrent calls
// for one ref exactly one succeeds.
func (s SecureInputs) MarkFulfilled(ctx context.Context, ref string, now time.Time) error {
	if err := CheckRefID(ref); err != nil {
		return fmt.Errorf("fulfil secure input: %w: %w", ErrNotFound, err)
	}
	k := key1(pfxSecureInput, ref)
	err := s.d.update(ctx, func(txn *wtxn) error {
		var r SecureInputRequest
		if err := getValue(txn, k, func(v []byte) error { return decodeJSON(v, &r) }); err != nil {
			return err
		}
		if r.FulfilledAt != nil {
			return ErrFulfilled
		}
		at := now.UTC()
		r.FulfilledAt = &at
		val, err := encodeJSON(&r)
		if err != nil {
			return err
		}
		return txn.Set(k, val)
	})
	if err != nil {
		return fmt.Errorf("fulfil secure input %s: %w", ref, err)
	}
	return nil
}

// Delete removes request ref (the owner cancelled the setup); deleting a
// missing request is no error. The caller removes any stored value.
func (s SecureInputs) Delete(ctx context.Context, ref string) error {
	if err := CheckRefID(ref); err != nil {
		return fmt.Errorf("delete secure input: %w", err)
	}
	if err := s.d.update(ctx, func(txn *wtxn) error { return txn.Delete(key1(pfxSecureInput, ref)) }); err != nil {
		return fmt.Errorf("delete secure input %s: %w", ref, err)
	}
	return nil
}
