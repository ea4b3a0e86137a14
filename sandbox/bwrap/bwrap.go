package bwrap

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/internal/layout"
	"github.com/silas-ai/silas/sandbox/internal/proc"
	"github.com/silas-ai/silas/sandbox/internal/reexec"
	"github.com/silas-ai/silas/sandbox/internal/seccomp"
)

// Name is the backend's name in SandboxConfig.Backend.
const Name = messages.BackendBubblewrap

// Defaults of Options.
const (
	DefaultMaxFileSizeMB = 1024
	DefaultMaxProcesses  = 512
	DefaultTmpSizeMB     = 256
	// DefaultHostIDBase and DefaultHostIDCount: see namespaces.Options; the
	// two backends may share the range (ids are per instance and only
	// bound the instance's process count).
	DefaultHostIDBase  = 2_000_000_000
	DefaultHostIDCount = 65_536
)

// Options configure the backend.
type Options struct {
	// Root holds one fresh 0700 work dir per instance. Required.
	Root string
	// Bwrap is the bwrap binary. Default: "bwrap" looked up in the server's PATH.
	Bwrap string
	// Path is PATH inside the sandbox. Default sandbox.DefaultPath.
	Path string
	// MaxFileSizeMB is the largest file a sandboxed process may write.
	// Default DefaultMaxFileSizeMB.
	MaxFileSizeMB int
	// MaxProcesses bounds the processes and threads of a run (RLIMIT_NPROC,
	// which the kernel counts per uid). Default DefaultMaxProcesses.
	MaxProcesses int
	// TmpSizeMB is the size of the sandbox's private /tmp. Default
	// DefaultTmpSizeMB.
	TmpSizeMB int
	// HostIDBase and HostIDCount are the unprivileged host ids (uid = gid)
	// bwrap runs as, one per instance, when Silas is root. Defaults
	// DefaultHostIDBase and DefaultHostIDCount.
	HostIDBase, HostIDCount int
}

// Backend is the bubblewrap sandbox.Manager.
type Backend struct {
	opts Options
	// filter is the seccomp program in bwrap's --seccomp format.
	filter []byte
	// ids is nil when Silas is not root.
	ids *proc.IDPool
}

var _ sandbox.Manager = (*Backend)(nil)

// New checks opts and finds bwrap; it fails with sandbox.ErrBackendUnavailable
// when bwrap is not installed. It starts nothing; Probe checks that bwrap
// works on this host.
func New(opts Options) (*Backend, error) {
	if opts.Root == "" {
		return nil, fmt.Errorf("%w: bwrap backend needs a root directory", sandbox.ErrInvalidConfig)
	}
	if opts.Bwrap == "" {
		opts.Bwrap = "bwrap"
	}
	path, err := exec.LookPath(opts.Bwrap)
	if err != nil {
		return nil, fmt.Errorf("%w: bwrap not found (%w); install the Debian package bubblewrap or use the namespaces backend",
			sandbox.ErrBackendUnavailable, err)
	}
	if opts.Bwrap, err = filepath.Abs(path); err != nil {
		return nil, fmt.Errorf("%w: bwrap path: %w", sandbox.ErrBackendUnavailable, err)
	}
	if opts.Path == "" {
		opts.Path = sandbox.DefaultPath
	}
	defaults := []struct {
		v   *int
		def int
	}{
		{&opts.MaxFileSizeMB, DefaultMaxFileSizeMB}, {&opts.MaxProcesses, DefaultMaxProcesses},
		{&opts.TmpSizeMB, DefaultTmpSizeMB}, {&opts.HostIDBase, DefaultHostIDBase}, {&opts.HostIDCount, DefaultHostIDCount},
	}
	for _, d := range defaults {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if opts.MaxFileSizeMB < 0 || opts.MaxProcesses < 0 || opts.TmpSizeMB < 0 {
		return nil, fmt.Errorf("%w: max file size, max processes and tmp size must not be negative", sandbox.ErrInvalidConfig)
	}
	prog, err := seccomp.Program()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", sandbox.ErrBackendUnavailable, err)
	}
	b := &Backend{opts: opts, filter: seccomp.Marshal(prog)}
	if os.Geteuid() == 0 {
		if b.ids, err = proc.NewIDPool(opts.HostIDBase, opts.HostIDCount); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Name implements sandbox.Manager.
func (b *Backend) Name() string { return Name }

// Create implements sandbox.Manager. The filesystem_read and
// filesystem_write paths must exist.
func (b *Backend) Create(ctx context.Context, cfg messages.SandboxConfig) (sandbox.Instance, error) {
	dir, err := proc.NewWorkDir(ctx, cfg, b.opts.Root)
	if err != nil {
		return nil, err
	}
	s := &spec{b: b, hostID: -1}
	if b.ids != nil {
		id, err := b.ids.Acquire()
		if err != nil {
			_ = sandbox.RemoveWorkDir(context.WithoutCancel(ctx), dir)
			return nil, err
		}
		s.hostID = id
		if err := os.Chown(dir, id, id); err != nil {
			s.Release()
			_ = sandbox.RemoveWorkDir(context.WithoutCancel(ctx), dir)
			return nil, fmt.Errorf("sandbox work dir %s: hand it to the sandbox's uid %d: %w", dir, id, err)
		}
	}
	return proc.NewInstance(dir, cfg, s), nil
}

// spec is the proc.Backend of one instance.
type spec struct {
	b *Backend
	// hostID is the uid and gid bwrap runs as when Silas is root, -1
	// otherwise.
	hostID int
}

// Spec implements proc.Backend: the helper (dropping to the instance's
// host id first when Silas is root), then bwrap with its arguments, then the
// command.
func (s *spec) Spec(cmd sandbox.Command, dir string, cfg messages.SandboxConfig) (proc.Spec, error) {
	o := s.b.opts
	entries := layout.For(dir, cfg.NetworkAccess, cfg.FilesystemRead, cfg.FilesystemWrite)
	var drop *reexec.Drop
	source := func(e layout.Entry) string { return e.Path }
	if s.hostID >= 0 {
		// bwrap runs as the instance's id and may not traverse the parents of
		// the work dir (the data dir is root's): the helper stages the paths
		// it binds while still root.
		drop = &reexec.Drop{UID: s.hostID, GID: s.hostID}
		staged := map[string]string{}
		for _, e := range entries {
			if e.Required() {
				staged[e.Path] = reexec.StagePath(len(drop.Stage))
				drop.Stage = append(drop.Stage, e.Path)
			}
		}
		source = func(e layout.Entry) string { return staged[e.Path] }
	}
	args := append([]string{o.Bwrap}, Args(entries, argsConfig{
		network: cfg.NetworkAccess, tmpBytes: uint64(o.TmpSizeMB) << 20, source: source,
	})...)
	// bwrap sets PWD after --chdir; env(1) removes it again so the program
	// sees exactly the sandbox environment. env also reports a missing
	// program with status 127, like the other backends.
	args = append(append(args, "--", "/usr/bin/env", "-u", "PWD", "--"), cmd.Args...)
	limits := proc.LimitsFor(cfg, o.MaxFileSizeMB, o.MaxProcesses)
	if s.hostID < 0 {
		// bwrap's user namespace is created under the limit: the kernel then
		// also counts every task of Silas's uid against it.
		limits.Processes += uint64(proc.TasksOf(os.Getuid()))
	}
	filter, err := s.filterFile()
	if err != nil {
		return proc.Spec{}, err
	}
	return proc.Spec{
		Args:           args,
		Env:            sandbox.Environ(cfg, cmd.Env, o.Path, dir),
		Dir:            dir,
		Stdin:          cmd.Stdin,
		Input:          cmd.Input,
		Output:         cmd.Output,
		Limits:         limits,
		Helper:         reexec.HelperOptions{Drop: drop},
		ExtraFiles:     []*os.File{filter},
		Timeout:        cmd.Timeout,
		MaxOutputBytes: cmd.MaxOutputBytes,
	}, nil
}

// filterFile returns a sealed in-memory file holding the seccomp program,
// positioned at its start, for bwrap's --seccomp.
func (s *spec) filterFile() (*os.File, error) {
	fd, err := unix.MemfdCreate("silas-seccomp", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("%w: seccomp program file: %w", sandbox.ErrStart, err)
	}
	f := os.NewFile(uintptr(fd), "silas-seccomp")
	if _, err := f.Write(s.b.filter); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%w: seccomp program file: %w", sandbox.ErrStart, err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%w: seal seccomp program file: %w", sandbox.ErrStart, err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%w: seccomp program file: %w", sandbox.ErrStart, err)
	}
	return f, nil
}

// Check implements proc.Backend: bwrap reports a failure to build the sandbox
// (namespaces, mounts) on stderr as "bwrap: ..." with exit status 1, and the
// helper a failure to drop to the instance's id as "silas-sandbox: ..." with
// status 126, before the command runs. Such a run is an error, not a result.
// A command that prints the same only turns its own result into an error.
func (*spec) Check(res sandbox.Result) error {
	msg := bytes.TrimSpace(res.Stderr)
	switch {
	case res.ExitCode == 1 && bytes.HasPrefix(res.Stderr, []byte("bwrap: ")):
		if bytes.Contains(msg, []byte("etwork")) || bytes.Contains(msg, []byte("loopback")) {
			return fmt.Errorf("%w: %s", sandbox.ErrNetworkIsolationUnavailable, msg)
		}
		if bytes.Contains(msg, []byte("Resource temporarily unavailable")) {
			// EAGAIN: the host can build namespaces, just not at this
			// moment (a task limit reached under load). Not a reason to
			// call the backend unavailable and block the work.
			return fmt.Errorf("%w: %w: %s", sandbox.ErrStart, proc.ErrTransient, msg)
		}
		return fmt.Errorf("%w: bubblewrap could not build the sandbox: %s; unprivileged user namespaces must be "+
			"enabled for bwrap (sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone=1, "+
			"kernel.apparmor_restrict_unprivileged_userns=0 or bwrap's AppArmor profile)", sandbox.ErrBackendUnavailable, msg)
	case res.ExitCode == 126 && bytes.HasPrefix(res.Stderr, []byte("silas-sandbox: ")):
		return fmt.Errorf("%w: %s", sandbox.ErrBackendUnavailable, msg)
	}
	return nil
}

// Release implements proc.Releaser: the host id goes back to the pool.
func (s *spec) Release() {
	if s.hostID >= 0 {
		s.b.ids.Release(s.hostID)
	}
}
