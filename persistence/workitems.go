package persistence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// WorkItems keeps the active (approved and unfinished) work items of each
// scope, with their runtime state (status, attempts, budget used,
// verification results and the approval token), so that a work item resumes
// after a crash. A finished work item is deleted: its outcome is in the
// audit log and was sent to the owner.
type WorkItems struct{ d *DB }

// Put stores w (its current state) under scope, replacing an older version.
func (s WorkItems) Put(ctx context.Context, scope string, w *messages.WorkItem) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("put work item: %w", err)
	}
	if w == nil {
		return fmt.Errorf("put work item in %s: nil work item: %w", scope, ErrInvalid)
	}
	if err := validID("work item id", w.ID); err != nil {
		return fmt.Errorf("put work item in %s: %w", scope, err)
	}
	val, err := encodeJSON(w)
	if err != nil {
		return fmt.Errorf("put work item %s in %s: %w", w.ID, scope, err)
	}
	err = s.d.updateSized(ctx, int64(len(val))+defaultWriteSize, func(txn *wtxn) error {
		return txn.Set(key2(pfxWorkItem, scope, w.ID), val)
	})
	if err != nil {
		return fmt.Errorf("put work item %s in %s: %w", w.ID, scope, err)
	}
	return nil
}

// Delete removes work item id of scope; deleting a missing item is no error.
func (s WorkItems) Delete(ctx context.Context, scope, id string) error {
	if err := validID("scope", scope); err != nil {
		return fmt.Errorf("delete work item: %w", err)
	}
	if err := validID("work item id", id); err != nil {
		return fmt.Errorf("delete work item in %s: %w", scope, err)
	}
	if err := s.d.update(ctx, func(txn *wtxn) error { return txn.Delete(key2(pfxWorkItem, scope, id)) }); err != nil {
		return fmt.Errorf("delete work item %s in %s: %w", id, scope, err)
	}
	return nil
}

// List returns the stored work items of scope, ordered by id.
func (s WorkItems) List(ctx context.Context, scope string) ([]*messages.WorkItem, error) {
	if err := validID("scope", scope); err != nil {
		return nil, fmt.Errorf("list work items: %w", err)
	}
	var out []*messages.WorkItem
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: scopePrefix(pfxWorkItem, scope), PrefetchValues: true, PrefetchSize: 16})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			w := &messages.WorkItem{}
			if err := it.Item().Value(func(v []byte) error { return decodeJSON(v, w) }); err != nil {
				return fmt.Errorf("decode %q: %w", it.Item().Key(), err)
			}
			out = append(out, w)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list work items of %s: %w", scope, err)
	}
	return out, nil
}

// Scopes returns every scope that has a stored work item, in byte order.
func (s WorkItems) Scopes(ctx context.Context) ([]string, error) {
	var out []string
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		p := []byte(pfxWorkItem)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			rest := it.Item().Key()[len(p):]
			i := bytes.IndexByte(rest, 0)
			if i < 0 {
				return fmt.Errorf("work item key %q has no scope terminator: %w", it.Item().Key(), ErrCorrupt)
			}
			if sc := string(rest[:i]); len(out) == 0 || out[len(out)-1] != sc {
				out = append(out, sc)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list work item scopes: %w", err)
	}
	return out, nil
}

// PutStanding stores tok, the standing approval token of goal goalID in
// scope, as it stands after its last verification, so that a restarted
// daemon keeps using it (spec 5.2.3). It is forgotten when it expires. The
// engine's execution slots, not this copy, bound its executions: a copy
// older than a consumed slot fails verification as a replay.
func (s WorkItems) PutStanding(ctx context.Context, scope, goalID string, tok *messages.ApprovalToken) error {
	if err := errors.Join(validID("scope", scope), validID("goal id", goalID)); err != nil {
		return fmt.Errorf("put standing token: %w", err)
	}
	if tok == nil {
		return fmt.Errorf("put standing token of %s: nil token: %w", goalID, ErrInvalid)
	}
	ttl := time.Until(tok.ExpiresAt)
	if ttl <= 0 {
		return fmt.Errorf("put standing token of %s: it expired at %s: %w", goalID, tok.ExpiresAt.Format(time.RFC3339), ErrInvalid)
	}
	val, err := encodeJSON(tok)
	if err != nil {
		return fmt.Errorf("put standing token of %s: %w", goalID, err)
	}
	err = s.d.update(ctx, func(txn *wtxn) error {
		// Badger expires whole seconds; round up so the key outlives the
		// token, whose own expiry Verify enforces.
		return txn.SetEntry(ttlEntry(key2(pfxStandingToken, scope, goalID), val, ttl+time.Second))
	})
	if err != nil {
		return fmt.Errorf("put standing token of %s: %w", goalID, err)
	}
	return nil
}

// Standing returns the stored standing token of goal goalID in scope, or
// ErrNotFound.
func (s WorkItems) Standing(ctx context.Context, scope, goalID string) (*messages.ApprovalToken, error) {
	if err := errors.Join(validID("scope", scope), validID("goal id", goalID)); err != nil {
		return nil, fmt.Errorf("get standing token: %w", err)
	}
	tok := &messages.ApprovalToken{}
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		return getValue(txn, key2(pfxStandingToken, scope, goalID), func(v []byte) error { return decodeJSON(v, tok) })
	})
	if err != nil {
		return nil, fmt.Errorf("get standing token of %s: %w", goalID, err)
	}
	return tok, nil
}

// DeleteStanding forgets the standing token of goal goalID in scope;
// deleting a missing token is no error.
func (s WorkItems) DeleteStanding(ctx context.Context, scope, goalID string) error {
	if err := errors.Join(validID("scope", scope), validID("goal id", goalID)); err != nil {
		return fmt.Errorf("delete standing token: %w", err)
	}
	if err := s.d.update(ctx, func(txn *wtxn) error { return txn.Delete(key2(pfxStandingToken, scope, goalID)) }); err != nil {
		return fmt.Errorf("delete standing token of %s: %w", goalID, err)
	}
	return nil
}
