package persistence

import (
	"context"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/messages"
)

// Connections stores service connection records (spec 2.5), one per
// connection id. A record never holds a credential, only its keystore ref.
type Connections struct{ d *DB }

// Connections returns the service connection store.
func (d *DB) Connections() Connections { return Connections{d: d} }

// Put stores c, replacing the earlier record of the same id (ErrInvalid
// when it does not validate).
func (s Connections) Put(ctx context.Context, c messages.Connection) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("put connection: %w: %w", ErrInvalid, err)
	}
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = time.Now().UTC()
	}
	val, err := encodeJSON(&c)
	if err != nil {
		return fmt.Errorf("put connection %s: %w", c.ConnectionID, err)
	}
	k := key1(pfxConnection, c.ConnectionID)
	if err := s.d.updateSized(ctx, int64(len(val))+defaultWriteSize, func(txn *wtxn) error { return txn.Set(k, val) }); err != nil {
		return fmt.Errorf("put connection %s: %w", c.ConnectionID, err)
	}
	return nil
}

// Get returns the record of id, or ErrNotFound.
func (s Connections) Get(ctx context.Context, id string) (messages.Connection, error) {
	if err := messages.ValidConnectionID(id); err != nil {
		return messages.Connection{}, fmt.Errorf("get connection: %w: %w", ErrNotFound, err)
	}
	var c messages.Connection
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		return getValue(txn, key1(pfxConnection, id), func(v []byte) error { return decodeJSON(v, &c) })
	})
	if err != nil {
		return messages.Connection{}, fmt.Errorf("get connection %s: %w", id, err)
	}
	return c, nil
}

// List returns every record, in id order.
func (s Connections) List(ctx context.Context) ([]messages.Connection, error) {
	all, err := scanJSON[messages.Connection](ctx, s.d, []byte(pfxConnection), "connection")
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	return all, nil
}

// Delete removes the record of id; a missing one is no error.
func (s Connections) Delete(ctx context.Context, id string) error {
	if err := messages.ValidConnectionID(id); err != nil {
		return fmt.Errorf("delete connection: %w: %w", ErrInvalid, err)
	}
	if err := s.d.update(ctx, func(txn *wtxn) error { return txn.Delete(key1(pfxConnection, id)) }); err != nil {
		return fmt.Errorf("delete connection %s: %w", id, err)
	}
	return nil
}
