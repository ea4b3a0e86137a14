package bwrap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

// probeTimeout bounds Probe's trivial run.
const probeTimeout = 30 * time.Second

// Probe starts a trivial program (true) in a fresh sandbox, with every
// isolation in place, and returns an error wrapping
// sandbox.ErrBackendUnavailable that says what to install or enable when it
// cannot.
func (b *Backend) Probe(ctx context.Context) error {
	in, err := b.Create(ctx, messages.DefaultSandboxConfig())
	if err != nil {
		return fmt.Errorf("%w: bwrap backend: %w", sandbox.ErrBackendUnavailable, err)
	}
	defer func() { _ = in.Destroy(context.WithoutCancel(ctx)) }()
	res, err := in.Run(ctx, sandbox.Command{Args: []string{"true"}, Timeout: probeTimeout})
	switch {
	case errors.Is(err, sandbox.ErrBackendUnavailable):
		return fmt.Errorf("bwrap backend: %w", err)
	case err != nil:
		return fmt.Errorf("%w: bwrap backend: %w", sandbox.ErrBackendUnavailable, err)
	case !res.Success():
		return fmt.Errorf("%w: bwrap backend: a trivial program failed in the sandbox (exit %d %s): %s",
			sandbox.ErrBackendUnavailable, res.ExitCode, res.Signal, res.Stderr)
	}
	return nil
}

// Probe reports whether this host can run the backend with default options
// (bwrap from PATH): it runs Backend.Probe with work dirs under a temporary
// root, removed afterwards.
func Probe(ctx context.Context) error {
	root, err := os.MkdirTemp("", "silas-probe-")
	if err != nil {
		return fmt.Errorf("%w: bwrap backend: probe root: %w", sandbox.ErrBackendUnavailable, err)
	}
	defer func() { _ = os.RemoveAll(root) }()
	b, err := New(Options{Root: root})
	if err != nil {
		return err
	}
	return b.Probe(ctx)
}
