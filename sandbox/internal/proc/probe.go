package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

// probeTimeout bounds a probe's trivial run.
const probeTimeout = 30 * time.Second

// Probe starts a trivial program (true) in a fresh instance of m, with
// every isolation in place, and returns an error wrapping
// sandbox.ErrBackendUnavailable when it cannot; hint is added to the error
// of a program that started but failed.
func Probe(ctx context.Context, m sandbox.Manager, hint string) error {
	in, err := m.Create(ctx, messages.DefaultSandboxConfig())
	if err != nil {
		return fmt.Errorf("%w: %s backend: %w", sandbox.ErrBackendUnavailable, m.Name(), err)
	}
	defer func() { _ = in.Destroy(context.WithoutCancel(ctx)) }()
	res, err := in.Run(ctx, sandbox.Command{Args: []string{"true"}, Timeout: probeTimeout})
	switch {
	case errors.Is(err, sandbox.ErrBackendUnavailable):
		return fmt.Errorf("%s backend: %w", m.Name(), err)
	case err != nil:
		return fmt.Errorf("%w: %s backend: %w", sandbox.ErrBackendUnavailable, m.Name(), err)
	case !res.Success():
		return fmt.Errorf("%w: %s backend: a trivial program failed in the sandbox (exit %d %s): %s%s",
			sandbox.ErrBackendUnavailable, m.Name(), res.ExitCode, res.Signal, res.Stderr, hint)
	}
	return nil
}

// ProbeDefault builds a backend with default options over a temporary root
// (removed afterwards) and runs its probe: whether this host can run it.
func ProbeDefault(ctx context.Context, name string, build func(root string) (func(context.Context) error, error)) error {
	root, err := os.MkdirTemp("", "silas-probe-")
	if err != nil {
		return fmt.Errorf("%w: %s backend: probe root: %w", sandbox.ErrBackendUnavailable, name, err)
	}
	defer func() { _ = os.RemoveAll(root) }()
	probe, err := build(root)
	if err != nil {
		if errors.Is(err, sandbox.ErrBackendUnavailable) {
			return err
		}
		return fmt.Errorf("%w: %s backend: %w", sandbox.ErrBackendUnavailable, name, err)
	}
	return probe(ctx)
}

// NewWorkDir checks what Create is asked (the context, the config, the
// filesystem_read and filesystem_write paths, which must exist) and makes
// the instance's fresh work dir under root.
func NewWorkDir(ctx context.Context, cfg messages.SandboxConfig, root string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("create sandbox: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return "", fmt.Errorf("%w: %w", sandbox.ErrInvalidConfig, err)
	}
	for _, p := range append(append([]string{}, cfg.FilesystemRead...), cfg.FilesystemWrite...) {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: sandbox path: %w", sandbox.ErrInvalidConfig, err)
		}
	}
	return sandbox.NewWorkDir(root)
}
