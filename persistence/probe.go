package persistence

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"
)

// probeTTL is how long Badger keeps the readiness probe's key.
const probeTTL = time.Hour

// Probe proves the store takes writes: it commits one small key through
// the group committer, as every write does, and returns the error a real
// write would get (ErrClosed, ErrDiskFull on ENOSPC, a Badger I/O error).
// It is meant for readiness checks; callers cache its result rather than
// probe on every request. The free-space watermark does not apply to it:
// see Space for that.
func (d *DB) Probe(ctx context.Context) error {
	val := binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano()))
	err := d.update(ctx, func(txn *wtxn) error {
		return txn.SetEntry(ttlEntry([]byte(keyProbe), val, probeTTL))
	})
	if err != nil {
		return fmt.Errorf("probe the database with a write: %w", err)
	}
	return nil
}
