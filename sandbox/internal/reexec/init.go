package reexec

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// Exit status of the init when it cannot report (Silas reads the report, not
// this status, whenever there is one).
const exitInitFailed = 126

// initMain is PID 1 of a sandbox: it builds the sandbox (setup), starts the
// helper that execs the program, reaps every process until the program ends,
// reports how it ended and exits, which makes the kernel kill whatever else
// is left in the PID namespace.
func initMain(args []string) int {
	// Credentials, capabilities and no_new_privs belong to a thread: set them
	// on this one and fork the program from it.
	runtime.LockOSThread()
	st, err := openStatus()
	if err != nil {
		fmt.Fprintf(os.Stderr, "silas-sandbox-init: %v\n", err)
		return exitInitFailed
	}
	fail := func(kind FailureKind, err error) int {
		if rerr := st.reportFailure(kind, err); rerr != nil {
			fmt.Fprintf(os.Stderr, "silas-sandbox-init: %v\n", err)
		}
		return exitInitFailed
	}
	cfg, helper, err := parseInitArgs(args)
	if err != nil {
		return fail(FailSetup, err)
	}
	if kind, err := setup(cfg); err != nil {
		return fail(kind, err)
	}
	if st.parentGone() {
		// Silas exited before its parent-death signal was armed (the check
		// Go makes for it cannot see a parent outside the PID namespace).
		return exitInitFailed
	}
	ws, err := runProgram(helper, cfg.workDir())
	if err != nil {
		return fail(FailSetup, err)
	}
	if err := st.reportExit(ws); err != nil {
		return exitInitFailed
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// setup builds the sandbox from inside its new namespaces, where the init
// runs as uid 0 with every capability of the new user namespace (and none
// outside it), and leaves the calling thread without any privilege.
func setup(c InitConfig) (FailureKind, error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return FailSetup, fmt.Errorf("make mounts private: %w", err)
	}
	srcs, err := openSources(c.Entries, c.Trees)
	if err != nil {
		return FailSetup, err
	}
	defer srcs.close()
	if err := buildRoot(c, srcs); err != nil {
		return FailSetup, err
	}
	if err := unix.Sethostname([]byte(hostname)); err != nil {
		return FailSetup, fmt.Errorf("hostname: %w", err)
	}
	if !c.Network {
		if err := loopbackUp(); err != nil {
			return FailNetwork, fmt.Errorf("loopback of the sandbox's network namespace: %w", err)
		}
	}
	if err := dropPrivileges(); err != nil {
		return FailSetup, err
	}
	return "", nil
}

// hostname is the sandbox's host name.
const hostname = "sandbox"

// runProgram starts the helper (from this thread, so it inherits its
// credentials) in dir and reaps children until the helper's process ends.
func runProgram(helper []string, dir string) (syscall.WaitStatus, error) {
	pid, err := syscall.ForkExec("/proc/self/exe", helper, &syscall.ProcAttr{
		Dir:   dir,
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		return 0, fmt.Errorf("start the program: %w", err)
	}
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return 0, fmt.Errorf("wait for the program: %w", err)
		case got == pid:
			return syscall.WaitStatus(ws), nil
		}
	}
}
