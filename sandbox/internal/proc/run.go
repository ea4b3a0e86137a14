package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/internal/reexec"
)

// drainGrace bounds how long output is still read after the process group was
// killed; only a process that left the group can hold the pipes that long.
const drainGrace = 2 * time.Second

// Spec is one process to start.
type Spec struct {
	// Args is the program's argv; Args[0] is looked up in PATH from Env.
	Args []string
	// Env is the complete environment; nil means an empty one, never the
	// server's.
	Env []string
	// Dir is the working directory.
	Dir string
	// Stdin is written to the process's standard input; then Input, when
	// set, until it is closed or the process exits; then stdin is closed.
	Stdin []byte
	Input <-chan []byte
	// Output, when set, gets a copy of standard output as it is read.
	Output io.Writer
	// Limits are applied by the helper before the program runs.
	Limits reexec.Limits
	// Helper holds the helper's other duties (seccomp, dropping root).
	Helper reexec.HelperOptions
	// IsolateNetwork starts the process in a new network namespace; if none
	// can be created the run fails with sandbox.ErrNetworkIsolationUnavailable.
	IsolateNetwork bool
	// ExtraFiles are inherited by the process as descriptors 3, 4, ... (after
	// the status pipe when Init is set). Run closes them once the process
	// started, or failed to.
	ExtraFiles []*os.File
	// Init, when set, starts a backend's own init instead of the helper; Args,
	// Limits, Helper and IsolateNetwork are then the init's business.
	Init *Init
	// Cgroup, when set (only with Init), puts the run in its own cgroup.
	Cgroup *Cgroup
	// Timeout and MaxOutputBytes must be positive.
	Timeout        time.Duration
	MaxOutputBytes int
}

// Init is a backend's own first process: /proc/self/exe started with Args
// (Args[0] names it, for the backend's init function to recognise) and Attr
// (namespaces, id mappings, capabilities). Run adds Pdeathsig, and Setpgid
// unless Attr.Setsid. The init reports on reexec.StatusFD how the program
// ended; that report, not the init's own exit, makes the Result.
type Init struct {
	Args []string
	Attr *syscall.SysProcAttr
}

// Run starts s, waits for it and kills whatever is left of its process group.
// A non-zero exit, a signal or a timeout is reported in the Result; the error
// is for runs that could not start, and for a cancelled ctx (with the partial
// Result).
func Run(ctx context.Context, s Spec) (sandbox.Result, error) {
	if s.Timeout <= 0 || s.MaxOutputBytes <= 0 || (len(s.Args) == 0 && s.Init == nil) {
		return sandbox.Result{}, fmt.Errorf("%w: timeout, output cap and argv are required", sandbox.ErrInvalidCommand)
	}
	if s.Cgroup != nil && s.Init == nil {
		return sandbox.Result{}, fmt.Errorf("%w: a cgroup needs an init", sandbox.ErrInvalidConfig)
	}
	if err := ctx.Err(); err != nil {
		return sandbox.Result{}, fmt.Errorf("sandbox run not started: %w", err)
	}
	runCtx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()

	p, err := newPipes()
	if err != nil {
		return sandbox.Result{}, err
	}
	defer p.closeAll()

	extra := s.ExtraFiles
	var statusR *os.File
	if s.Init != nil {
		r, w, err := os.Pipe()
		if err != nil {
			return sandbox.Result{}, fmt.Errorf("%w: status pipe: %w", sandbox.ErrStart, err)
		}
		defer func() { _ = r.Close(); _ = w.Close() }()
		statusR = r
		extra = append([]*os.File{w}, extra...) // descriptor 3, reexec.StatusFD
	}
	cgroupFD := -1
	if s.Cgroup != nil {
		dir, f, err := s.Cgroup.create()
		if err != nil {
			return sandbox.Result{}, fmt.Errorf("%w: %w", sandbox.ErrBackendUnavailable, err)
		}
		defer func() { _ = removeCgroup(dir) }()
		defer func() { _ = f.Close() }()
		cgroupFD = int(f.Fd())
	}

	cmd, err := start(runCtx, s, p, extra, cgroupFD)
	for _, f := range s.ExtraFiles {
		_ = f.Close()
	}
	if err != nil {
		return sandbox.Result{}, err
	}
	started := time.Now()
	p.closeChildEnds()
	if s.Init != nil {
		_ = extra[0].Close() // only the init holds the writing end now
	}

	stdout, stderr := newCapture(s.MaxOutputBytes), newCapture(s.MaxOutputBytes)
	stdout.tee = s.Output
	exited := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); stdout.readFrom(p.outR) }()
	go func() { defer wg.Done(); stderr.readFrom(p.errR) }()
	go func() {
		defer wg.Done()
		writeInput(p.inW, s.Stdin, s.Input, exited)
	}()

	waitErr := cmd.Wait()
	close(exited)
	duration := time.Since(started)
	// The run is over when its first process ends: take its children with it.
	_ = killGroup(cmd.Process.Pid)
	_ = p.inW.Close()
	drain(&wg, p)

	res := sandbox.Result{
		Stdout: stdout.buf, StdoutTruncated: stdout.truncated,
		Stderr: stderr.buf, StderrTruncated: stderr.truncated,
		Duration: duration,
	}
	if cmd.ProcessState == nil {
		return res, fmt.Errorf("%w: wait: %w", sandbox.ErrStart, waitErr)
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if statusR != nil {
		st, err := readStatus(statusR)
		if err != nil {
			return res, err
		}
		if st.failure != nil {
			return res, st.failure
		}
		if st.reported {
			ws = st.ws
		}
	}
	res.ExitCode = ws.ExitStatus()
	if ws.Signaled() {
		res.ExitCode = -1
		res.Signal = unix.SignalName(ws.Signal())
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("sandbox run cancelled: %w", ctx.Err())
	}
	res.TimedOut = errors.Is(runCtx.Err(), context.DeadlineExceeded)
	return res, nil
}

// writeInput writes stdin, then whatever input brings until it is closed
// or the process exited, and closes w.
func writeInput(w *os.File, stdin []byte, input <-chan []byte, exited <-chan struct{}) {
	defer func() { _ = w.Close() }()
	if _, err := bytes.NewReader(stdin).WriteTo(w); err != nil || input == nil {
		return
	}
	for {
		select {
		case b, ok := <-input:
			if !ok {
				return
			}
			if _, err := w.Write(b); err != nil {
				return
			}
		case <-exited:
			return
		}
	}
}

// start starts the init, or the helper trying each way of isolating the
// network in turn.
func start(ctx context.Context, s Spec, p *pipes, extra []*os.File, cgroupFD int) (*exec.Cmd, error) {
	env := s.Env
	if env == nil {
		env = []string{} // nil would hand the child the server's environment
	}
	newCmd := func(args []string, attr *syscall.SysProcAttr) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "/proc/self/exe")
		cmd.Args = args
		cmd.Env = env
		cmd.Dir = s.Dir
		cmd.Stdin, cmd.Stdout, cmd.Stderr = p.inR, p.outW, p.errW
		cmd.ExtraFiles = extra
		cmd.SysProcAttr = attr
		cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
		return cmd
	}
	if s.Init != nil {
		attr := *s.Init.Attr
		attr.Pdeathsig = syscall.SIGKILL
		attr.Setpgid = !attr.Setsid
		if cgroupFD >= 0 {
			attr.UseCgroupFD, attr.CgroupFD = true, cgroupFD
		}
		cmd := newCmd(s.Init.Args, &attr)
		if err := cmd.Start(); err != nil {
			if isNamespaceErr(err) {
				return nil, fmt.Errorf("%w: cannot create the sandbox's namespaces (%w); enable user namespaces: "+
					"sysctl user.max_user_namespaces > 0, on Debian kernel.unprivileged_userns_clone=1, on Ubuntu "+
					"kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile that allows userns for silas",
					sandbox.ErrBackendUnavailable, err)
			}
			return nil, fmt.Errorf("%w: %w", sandbox.ErrStart, err)
		}
		return cmd, nil
	}
	args := reexec.HelperArgs(s.Limits, s.Helper, s.Args)
	var lastErr error
	for _, attr := range sysProcAttrs(s.IsolateNetwork) {
		cmd := newCmd(args, attr)
		err := cmd.Start()
		if err == nil {
			return cmd, nil
		}
		lastErr = err
		if !s.IsolateNetwork || !isNamespaceErr(err) {
			return nil, fmt.Errorf("%w: %w", sandbox.ErrStart, err)
		}
	}
	return nil, fmt.Errorf("%w: cannot create a network namespace (%w); run Silas as root or with "+
		"CAP_SYS_ADMIN, or enable unprivileged user namespaces (sysctl user.max_user_namespaces > 0, "+
		"kernel.unprivileged_userns_clone=1), or set network_access: true if the task needs network",
		sandbox.ErrNetworkIsolationUnavailable, lastErr)
}

// sysProcAttrs lists the ways to start the child, in order of preference. As
// root a network namespace alone works; otherwise (or when root lacks
// CAP_SYS_ADMIN, as in a container) a user namespace owned by the current
// user makes the network namespace possible.
func sysProcAttrs(isolate bool) []*syscall.SysProcAttr {
	base := func() *syscall.SysProcAttr {
		// Pdeathsig kills the child if Silas dies (it fires when the forking
		// OS thread exits; Go keeps threads alive unless a locked goroutine
		// exits, which the sandbox never does).
		return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	if !isolate {
		return []*syscall.SysProcAttr{base()}
	}
	uid, gid := os.Geteuid(), os.Getegid()
	userns := base()
	userns.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
	userns.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	userns.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	userns.GidMappingsEnableSetgroups = false
	if uid != 0 {
		return []*syscall.SysProcAttr{userns}
	}
	netns := base()
	netns.Cloneflags = syscall.CLONE_NEWNET
	return []*syscall.SysProcAttr{netns, userns}
}

// isNamespaceErr reports whether err is how clone(2) refuses a namespace.
func isNamespaceErr(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case syscall.EPERM, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS, syscall.EACCES:
		return true
	}
	return false
}

// killGroup sends SIGKILL to the process group led by pid.
func killGroup(pid int) error {
	if err := unix.Kill(-pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("kill process group %d: %w", pid, err)
	}
	return nil
}

// drain waits for the readers and the stdin writer; past drainGrace (a
// process that left the group still holds a pipe) it closes our ends.
func drain(wg *sync.WaitGroup, p *pipes) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(drainGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		p.closeAll()
		<-done
	}
}

// pipes are the three standard streams: the child's ends and ours.
type pipes struct {
	inR, inW, outR, outW, errR, errW *os.File
	once                             sync.Once
}

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.inR, p.inW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("%w: stdin pipe: %w", sandbox.ErrStart, err)
	}
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		p.closeAll()
		return nil, fmt.Errorf("%w: stdout pipe: %w", sandbox.ErrStart, err)
	}
	if p.errR, p.errW, err = os.Pipe(); err != nil {
		p.closeAll()
		return nil, fmt.Errorf("%w: stderr pipe: %w", sandbox.ErrStart, err)
	}
	return &p, nil
}

// closeChildEnds closes our copies of the child's ends, so EOF arrives when
// the last process holding them exits.
func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.inR, p.outW, p.errW} {
		_ = f.Close()
	}
}

func (p *pipes) closeAll() {
	p.once.Do(func() {
		for _, f := range []*os.File{p.inR, p.inW, p.outR, p.outW, p.errR, p.errW} {
			if f != nil {
				_ = f.Close()
			}
		}
	})
}
