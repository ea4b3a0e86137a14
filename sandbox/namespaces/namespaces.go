package namespaces

import (
	"context"
	"fmt"
	"os"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/internal/proc"
	"github.com/silas-ai/silas/sandbox/internal/seccomp"
)

// Name is the backend's name in SandboxConfig.Backend.
const Name = messages.BackendNamespaces

// Defaults of Options.
const (
	DefaultMaxFileSizeMB = 1024
	DefaultMaxProcesses  = 512
	DefaultTmpSizeMB     = 256
	// DefaultHostIDBase and DefaultHostIDCount are the host uids (and gids)
	// sandboxes run as when Silas is root: above the ranges /etc/subuid
	// (100000+) and systemd-nspawn (up to 0x6FFF0000) hand out, below 2^31.
	DefaultHostIDBase  = 2_000_000_000
	DefaultHostIDCount = 65_536
)

// Options configure the backend.
type Options struct {
	// Root holds one fresh 0700 work dir per instance. Required.
	Root string
	// Path is PATH inside the sandbox. Default sandbox.DefaultPath.
	Path string
	// MaxFileSizeMB is RLIMIT_FSIZE, the largest file a sandboxed process may
	// write. Default DefaultMaxFileSizeMB.
	MaxFileSizeMB int
	// MaxProcesses is RLIMIT_NPROC of every run: the kernel counts the
	// processes and threads of the sandbox's uid in its own user namespace,
	// so a fork bomb stops there. Default DefaultMaxProcesses.
	MaxProcesses int
	// TmpSizeMB is the size of the sandbox's private /tmp and /dev/shm (in
	// memory). Default DefaultTmpSizeMB.
	TmpSizeMB int
	// HostIDBase and HostIDCount are the unprivileged host ids (uid = gid)
	// handed to instances, one each, when Silas runs as root; they must
	// belong to no user and own no file. Defaults DefaultHostIDBase and
	// DefaultHostIDCount. Unused when Silas is not root: the sandbox then
	// runs as Silas's own uid, the only one an unprivileged user may map.
	HostIDBase, HostIDCount int
	// Cgroup is a delegated cgroup v2 directory (writable by Silas, with the
	// memory and pids controllers available to its children). When set, each
	// run gets its own child cgroup with memory.max = max_memory_mb and
	// pids.max = MaxProcesses for all its processes together, on top of the
	// rlimits. Empty: rlimits only (per process memory, per user namespace
	// process count).
	Cgroup string
}

// Backend is the namespaces sandbox.Manager.
type Backend struct {
	opts Options
	// ids is nil when Silas is not root.
	ids *proc.IDPool
}

var _ sandbox.Manager = (*Backend)(nil)

// New checks opts and returns the backend. It starts nothing; Probe checks
// that the host can run it.
func New(opts Options) (*Backend, error) {
	if opts.Root == "" {
		return nil, fmt.Errorf("%w: namespaces backend needs a root directory", sandbox.ErrInvalidConfig)
	}
	if opts.Path == "" {
		opts.Path = sandbox.DefaultPath
	}
	if opts.MaxFileSizeMB == 0 {
		opts.MaxFileSizeMB = DefaultMaxFileSizeMB
	}
	if opts.MaxProcesses == 0 {
		opts.MaxProcesses = DefaultMaxProcesses
	}
	if opts.TmpSizeMB == 0 {
		opts.TmpSizeMB = DefaultTmpSizeMB
	}
	if opts.HostIDBase == 0 {
		opts.HostIDBase = DefaultHostIDBase
	}
	if opts.HostIDCount == 0 {
		opts.HostIDCount = DefaultHostIDCount
	}
	if opts.MaxFileSizeMB < 0 || opts.MaxProcesses < 0 || opts.TmpSizeMB < 0 {
		return nil, fmt.Errorf("%w: max file size, max processes and tmp size must not be negative", sandbox.ErrInvalidConfig)
	}
	if _, err := seccomp.Program(); err != nil {
		return nil, fmt.Errorf("%w: %w", sandbox.ErrBackendUnavailable, err)
	}
	b := &Backend{opts: opts}
	if os.Geteuid() == 0 {
		ids, err := proc.NewIDPool(opts.HostIDBase, opts.HostIDCount)
		if err != nil {
			return nil, err
		}
		b.ids = ids
	}
	return b, nil
}

// Name implements sandbox.Manager.
func (b *Backend) Name() string { return Name }

// Create implements sandbox.Manager: a fresh work dir, owned by the
// instance's host id when Silas is root. The filesystem_read and
// filesystem_write paths must exist.
func (b *Backend) Create(ctx context.Context, cfg messages.SandboxConfig) (sandbox.Instance, error) {
	dir, err := proc.NewWorkDir(ctx, cfg, b.opts.Root)
	if err != nil {
		return nil, err
	}
	s := &spec{opts: b.opts, hostID: -1}
	if b.ids != nil {
		id, err := b.ids.Acquire()
		if err != nil {
			_ = sandbox.RemoveWorkDir(context.WithoutCancel(ctx), dir)
			return nil, err
		}
		s.hostID, s.release = id, func() { b.ids.Release(id) }
		if err := os.Chown(dir, id, id); err != nil {
			s.Release()
			_ = sandbox.RemoveWorkDir(context.WithoutCancel(ctx), dir)
			return nil, fmt.Errorf("sandbox work dir %s: hand it to the sandbox's uid %d: %w", dir, id, err)
		}
	}
	return proc.NewInstance(dir, cfg, s), nil
}

// Probe starts a trivial program (true) in a fresh sandbox, with every
// isolation in place, and returns an error wrapping
// sandbox.ErrBackendUnavailable that says what to enable when it cannot.
func (b *Backend) Probe(ctx context.Context) error {
	if b.opts.Cgroup != "" {
		if err := proc.ProbeCgroup(b.opts.Cgroup); err != nil {
			return fmt.Errorf("%w: namespaces backend: %w", sandbox.ErrBackendUnavailable, err)
		}
	}
	return proc.Probe(ctx, b, "; the silas binary must be executable by every user (mode 0755)")
}

// Probe reports whether this host can run the backend with default options:
// it runs Backend.Probe with work dirs under a temporary root, removed
// afterwards. The error wraps sandbox.ErrBackendUnavailable and says what to
// enable.
func Probe(ctx context.Context) error {
	return proc.ProbeDefault(ctx, Name, func(root string) (func(context.Context) error, error) {
		b, err := New(Options{Root: root})
		if err != nil {
			return nil, err
		}
		return b.Probe, nil
	})
}
