package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/silas-ai/silas/messages"
)

// The ConnectionManager as the owner's HTTP endpoints call it (silas
// connections add|list|check|remove) and as the secure-input endpoint
// tells it a value arrived.

// connCallTimeout bounds a call without a deadline: a health check runs
// scripts in the sandbox.
const connCallTimeout = 2 * time.Minute

func (s *System) askConnections(ctx context.Context, msg any) (any, error) {
	timeout := connCallTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if timeout <= 0 {
		return nil, context.DeadlineExceeded
	}
	res, err := s.d.sys.Root.RequestFuture(s.d.connections, msg, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("ask the connection manager: %w", err)
	}
	return res, nil
}

func (s *System) connAnswer(ctx context.Context, msg any) (messages.ConnectionSummary, error) {
	res, err := s.askConnections(ctx, msg)
	if err != nil {
		return messages.ConnectionSummary{}, err
	}
	a, ok := res.(*ConnectionAnswer)
	if !ok {
		return messages.ConnectionSummary{}, fmt.Errorf("ask the connection manager: unexpected answer %T", res)
	}
	return a.Connection, a.Err
}

// ProposeConnection records a new connection (status proposed) and starts
// its discovery; the owner then gets its connection_manage card.
func (s *System) ProposeConnection(ctx context.Context, p ProposeConnection) (messages.ConnectionSummary, error) {
	return s.connAnswer(ctx, &p)
}

// CheckConnection runs a connection's health check now and returns the
// connection as it is afterwards.
func (s *System) CheckConnection(ctx context.Context, id string) (messages.ConnectionSummary, error) {
	return s.connAnswer(ctx, &CheckConnection{ID: id})
}

// RemoveConnection stops a connection and deletes its credential and
// record.
func (s *System) RemoveConnection(ctx context.Context, id string) (messages.ConnectionSummary, error) {
	return s.connAnswer(ctx, &RemoveConnection{ID: id})
}

// Connections lists every connection, in id order.
func (s *System) Connections(ctx context.Context) ([]messages.ConnectionSummary, error) {
	res, err := s.askConnections(ctx, &ListConnections{})
	if err != nil {
		return nil, err
	}
	l, ok := res.(*ConnectionList)
	if !ok {
		return nil, fmt.Errorf("ask the connection manager: unexpected answer %T", res)
	}
	return l.Connections, nil
}

// SecretStored tells the connection waiting for a secure input that its
// value is in the vault.
func (s *System) SecretStored(refID string) {
	s.d.sys.Root.Send(s.d.connections, &SecretStored{RefID: refID})
}
