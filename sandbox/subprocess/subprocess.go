// Package subprocess is the unisolated sandbox backend (spec 9.1), for
// explicit opt-in only: each instance is a fresh 0700 work dir under a
// configured root, and each command runs
//
//   - with an argument list, never through a shell built from values;
//   - with only SandboxConfig.env (plus the command's own variables), PATH and
//     HOME (the work dir): nothing of the server's environment;
//   - in a new network namespace unless network_access is true (only a down
//     loopback inside, so no connection leaves it); if none can be created the
//     run fails with sandbox.ErrNetworkIsolationUnavailable;
//   - under rlimits set before exec by a re-exec helper: RLIMIT_AS from
//     max_memory_mb, RLIMIT_CPU from max_cpu_seconds, RLIMIT_FSIZE, optional
//     RLIMIT_NPROC, RLIMIT_NOFILE 1024, no core dumps, and no_new_privs;
//   - in its own process group, SIGKILLed as a whole on timeout and when the
//     first process ends, so background children die too;
//   - with stdout and stderr capped while they are read.
//
// It is process-level isolation only, and these are its gaps, each an attack
// the isolating backends' conformance tests try and this backend does not
// stop: the process runs as the server's user (root, if Silas is root) and
// sees the host's filesystem with that user's rights, so it can read the data
// dir, keys and tokens by absolute or ../ path and write outside its work dir
// (filesystem_read and filesystem_write are not enforced); it sees the host's
// PIDs, so it can read /proc/<daemon pid>/environ and, as root, nsenter the
// daemon's network namespace; it keeps every capability of that user and has
// no seccomp filter; as root RLIMIT_NPROC does not hold, so a fork bomb is
// not contained; and a process that calls setsid leaves the process group and
// survives the group kill. Use the namespaces or bwrap backend.
package subprocess

import (
	"context"
	"fmt"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/internal/proc"
)

// Name is the backend's name in SandboxConfig.Backend.
const Name = messages.BackendSubprocess

// DefaultMaxFileSizeMB is the RLIMIT_FSIZE of a sandboxed process when
// Options.MaxFileSizeMB is zero.
const DefaultMaxFileSizeMB = 1024

// Options configure the backend.
type Options struct {
	// Root holds one fresh 0700 work dir per instance; it is created 0700 if
	// missing. Required, e.g. <data_dir>/sandbox/work.
	Root string
	// Path is PATH inside the sandbox. Default sandbox.DefaultPath.
	Path string
	// MaxFileSizeMB is the largest file a sandboxed process may write.
	// Default DefaultMaxFileSizeMB.
	MaxFileSizeMB int
	// MaxProcesses sets RLIMIT_NPROC when positive. The kernel counts all
	// processes of the server's uid and ignores the limit for root, so it is
	// off by default.
	MaxProcesses int
}

// Backend is the subprocess sandbox.Manager.
type Backend struct {
	opts Options
}

var _ sandbox.Manager = (*Backend)(nil)

// New checks opts and returns the backend. It starts nothing.
func New(opts Options) (*Backend, error) {
	if opts.Root == "" {
		return nil, fmt.Errorf("%w: subprocess backend needs a root directory", sandbox.ErrInvalidConfig)
	}
	if opts.Path == "" {
		opts.Path = sandbox.DefaultPath
	}
	if opts.MaxFileSizeMB == 0 {
		opts.MaxFileSizeMB = DefaultMaxFileSizeMB
	}
	if opts.MaxFileSizeMB < 0 || opts.MaxProcesses < 0 {
		return nil, fmt.Errorf("%w: max file size and max processes must not be negative", sandbox.ErrInvalidConfig)
	}
	return &Backend{opts: opts}, nil
}

// Name implements sandbox.Manager.
func (b *Backend) Name() string { return Name }

// Create implements sandbox.Manager: a fresh work dir and an instance over it.
func (b *Backend) Create(ctx context.Context, cfg messages.SandboxConfig) (sandbox.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("create sandbox: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", sandbox.ErrInvalidConfig, err)
	}
	dir, err := sandbox.NewWorkDir(b.opts.Root)
	if err != nil {
		return nil, err
	}
	return proc.NewInstance(dir, cfg, spec{b.opts}), nil
}

// spec is the proc.Backend of this backend.
type spec struct{ opts Options }

// Spec implements proc.Backend.
func (s spec) Spec(cmd sandbox.Command, dir string, cfg messages.SandboxConfig) (proc.Spec, error) {
	return proc.Spec{
		Args:           cmd.Args,
		Env:            sandbox.Environ(cfg, cmd.Env, s.opts.Path, dir),
		Dir:            dir,
		Stdin:          cmd.Stdin,
		Input:          cmd.Input,
		Output:         cmd.Output,
		Limits:         proc.LimitsFor(cfg, s.opts.MaxFileSizeMB, s.opts.MaxProcesses),
		IsolateNetwork: !cfg.NetworkAccess,
		Timeout:        cmd.Timeout,
		MaxOutputBytes: cmd.MaxOutputBytes,
	}, nil
}

// Check implements proc.Backend; the subprocess backend has no setup stage
// that can fail after start.
func (spec) Check(sandbox.Result) error { return nil }
