package persistence

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// OwnerVisits remembers when the owner last opened the PWA, so that the
// Activity surface can show what happened since then first.
type OwnerVisits struct{ d *DB }

// OwnerVisits returns the owner visit store.
func (d *DB) OwnerVisits() OwnerVisits { return OwnerVisits{d: d} }

// Last returns the last recorded visit, or the zero time when none was.
func (s OwnerVisits) Last(ctx context.Context) (time.Time, error) {
	var last time.Time
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		var err error
		last, err = readVisit(txn)
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("last owner visit: %w", err)
	}
	return last, nil
}

// Record stores at as the last visit and returns the previous one (zero
// when there was none).
func (s OwnerVisits) Record(ctx context.Context, at time.Time) (previous time.Time, err error) {
	val := binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano()))
	err = s.d.update(ctx, func(txn *wtxn) error {
		var err error
		if previous, err = readVisit(txn); err != nil {
			return err
		}
		if !previous.IsZero() {
			// Kept for "what did you do while I was away?", asked right
			// after the app recorded this visit (away.go).
			prev := binary.BigEndian.AppendUint64(nil, uint64(previous.UnixNano()))
			if err := txn.Set([]byte(keyOwnerPrev), prev); err != nil {
				return err
			}
		}
		return txn.Set([]byte(keyOwnerVisit), val)
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("record owner visit: %w", err)
	}
	return previous, nil
}

// Before returns the visit before the last one, or the zero time when
// there were fewer than two.
func (s OwnerVisits) Before(ctx context.Context) (time.Time, error) {
	var prev time.Time
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		var err error
		prev, err = readVisitKey(txn, keyOwnerPrev)
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("owner visit before the last: %w", err)
	}
	return prev, nil
}

func readVisit(txn reader) (time.Time, error) { return readVisitKey(txn, keyOwnerVisit) }

func readVisitKey(txn reader, key string) (time.Time, error) {
	var t time.Time
	err := getValue(txn, []byte(key), func(v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("owner visit value has %d bytes: %w", len(v), ErrCorrupt)
		}
		t = time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC()
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return time.Time{}, nil
	}
	return t, err
}
