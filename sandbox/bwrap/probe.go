package bwrap

import (
	"context"

	"github.com/silas-ai/silas/sandbox/internal/proc"
)

// Probe starts a trivial program (true) in a fresh sandbox, with every
// isolation in place, and returns an error wrapping
// sandbox.ErrBackendUnavailable that says what to install or enable when it
// cannot.
func (b *Backend) Probe(ctx context.Context) error { return proc.Probe(ctx, b, "") }

// Probe reports whether this host can run the backend with default options
// (bwrap from PATH): it runs Backend.Probe with work dirs under a temporary
// root, removed afterwards.
func Probe(ctx context.Context) error {
	return proc.ProbeDefault(ctx, Name, func(root string) (func(context.Context) error, error) {
		b, err := New(Options{Root: root})
		if err != nil {
			return nil, err
		}
		return b.Probe, nil
	})
}
