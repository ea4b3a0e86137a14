package namespaces

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/internal/layout"
	"github.com/silas-ai/silas/sandbox/internal/proc"
	"github.com/silas-ai/silas/sandbox/internal/reexec"
)

// spec is the proc.Backend of one instance.
type spec struct {
	opts Options
	// hostID is the instance's host uid and gid when Silas is root, -1
	// otherwise.
	hostID  int
	release func()
}

// Spec implements proc.Backend: the init, its namespaces and id mappings,
// what it must build, and the helper argv that applies the limits and the
// seccomp filter, then execs the command.
func (s *spec) Spec(cmd sandbox.Command, dir string, cfg messages.SandboxConfig) (proc.Spec, error) {
	limits := proc.LimitsFor(cfg, s.opts.MaxFileSizeMB, s.opts.MaxProcesses)
	helper := reexec.HelperArgs(limits, reexec.HelperOptions{Seccomp: true}, cmd.Args)
	entries := layout.For(dir, cfg.NetworkAccess, cfg.FilesystemRead, cfg.FilesystemWrite)
	var trees []*os.File
	if s.hostID >= 0 {
		var err error
		if trees, err = openTrees(entries); err != nil {
			return proc.Spec{}, err
		}
	}
	args := reexec.InitArgs(reexec.InitConfig{
		Entries:  entries,
		Network:  cfg.NetworkAccess,
		Trees:    trees != nil,
		TmpBytes: uint64(s.opts.TmpSizeMB) << 20,
	}, helper)
	var cg *proc.Cgroup
	if s.opts.Cgroup != "" {
		cg = &proc.Cgroup{Parent: s.opts.Cgroup, MemoryBytes: limits.MemoryBytes, Pids: limits.Processes}
	}
	return proc.Spec{
		Env:            sandbox.Environ(cfg, cmd.Env, s.opts.Path, dir),
		Dir:            "/",
		Stdin:          cmd.Stdin,
		Input:          cmd.Input,
		Output:         cmd.Output,
		ExtraFiles:     trees, // descriptors reexec.FirstTreeFD, ... after the status pipe
		Init:           &proc.Init{Args: args, Attr: s.attr(cfg.NetworkAccess)},
		Cgroup:         cg,
		Timeout:        cmd.Timeout,
		MaxOutputBytes: cmd.MaxOutputBytes,
	}, nil
}

// openTrees clones the mount trees of the required entries (work dir,
// filesystem_read and filesystem_write paths), in their order, for the init
// to attach. Silas, as root, reaches them wherever they are; the init, as the
// sandbox's unprivileged id, might not traverse their parents (the data dir
// is root's, another instance's work dir is its own id's).
func openTrees(entries []layout.Entry) ([]*os.File, error) {
	var trees []*os.File
	for _, e := range entries {
		if !e.Required() {
			continue
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, e.Path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			for _, f := range trees {
				_ = f.Close()
			}
			return nil, fmt.Errorf("%w: clone the mount tree of %s for the sandbox (open_tree, Linux 5.2 or later, "+
				"needs CAP_SYS_ADMIN): %w", sandbox.ErrBackendUnavailable, e.Path, err)
		}
		trees = append(trees, os.NewFile(uintptr(fd), "silas-tree:"+e.Path))
	}
	return trees, nil
}

// attr creates the init in new user, mount, PID, IPC, UTS, cgroup and
// (without network access) network namespaces, in its own session, as uid
// and gid 0 of the new user namespace, which map to the instance's host id
// (or to Silas's own ids). When Silas is root the init also leaves root's
// supplementary groups behind.
func (s *spec) attr(network bool) *syscall.SysProcAttr {
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC |
		syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP)
	if !network {
		flags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Geteuid(), os.Getegid()
	root := s.hostID >= 0
	if root {
		uid, gid = s.hostID, s.hostID
	}
	return &syscall.SysProcAttr{
		Cloneflags:  flags,
		Setsid:      true,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		// Only root may let the init's setgroups through; an unprivileged
		// user namespace must deny it, and Go then skips the call.
		GidMappingsEnableSetgroups: root,
		Credential:                 &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{}},
	}
}

// Check implements proc.Backend: setup failures arrive through the init's
// status report, so a finished run is always the program's result.
func (*spec) Check(sandbox.Result) error { return nil }

// Release implements proc.Releaser: the host id goes back to the pool.
func (s *spec) Release() {
	if s.release != nil {
		s.release()
	}
}
