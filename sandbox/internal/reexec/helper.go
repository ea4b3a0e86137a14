package reexec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/silas-ai/silas/sandbox/internal/seccomp"
)

// Exit statuses of the helper when it cannot exec the program, as a shell
// reports them.
const (
	exitSetupFailed = 126
	exitNotFound    = 127
)

// helperMain applies the limits and options and execs the program. It
// returns only on failure, with the exit status to report.
func helperMain(args []string) int {
	// Credentials, no_new_privs and the seccomp filter belong to a thread: do
	// everything on this one and exec from it.
	runtime.LockOSThread()
	cfg, argv, err := parseHelperArgs(args)
	if err != nil {
		return helperFail(exitSetupFailed, err)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		code := exitSetupFailed
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = exitNotFound
		}
		return helperFail(code, err)
	}
	// Build every C string and the filter before the limits are set: after
	// RLIMIT_AS is lowered the Go runtime may not be able to map more memory,
	// so nothing below the limits allocates or enters the scheduler.
	pathp, err := unix.BytePtrFromString(path)
	if err != nil {
		return helperFail(exitSetupFailed, err)
	}
	argvp, err := cStrings(argv)
	if err != nil {
		return helperFail(exitSetupFailed, err)
	}
	envp, err := cStrings(os.Environ())
	if err != nil {
		return helperFail(exitSetupFailed, err)
	}
	var filter []unix.SockFilter
	if cfg.seccomp {
		if filter, err = seccomp.Program(); err != nil {
			return helperFail(exitSetupFailed, err)
		}
	}
	if cfg.drop != nil {
		if err := stageAndDrop(*cfg.drop); err != nil {
			return helperFail(exitSetupFailed, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return helperFail(exitSetupFailed, fmt.Errorf("no_new_privs: %w", err))
	}
	for _, l := range cfg.lims {
		if _, _, e := unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, uintptr(l.resource),
			uintptr(unsafe.Pointer(&l.lim)), 0, 0, 0); e != 0 {
			return helperFail(exitSetupFailed, fmt.Errorf("setrlimit %d: %w", l.resource, e))
		}
	}
	if filter != nil {
		if err := seccomp.Install(filter); err != nil {
			return helperFail(exitSetupFailed, err)
		}
	}
	_, _, e := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(pathp)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
	return helperFail(exitSetupFailed, fmt.Errorf("exec %s: %w", path, e))
}

func helperFail(code int, err error) int {
	fmt.Fprintf(os.Stderr, "silas-sandbox: %v\n", err)
	return code
}

// cStrings returns a NULL-terminated array of C strings for execve.
func cStrings(ss []string) ([]*byte, error) {
	out := make([]*byte, len(ss)+1)
	for i, s := range ss {
		p, err := unix.BytePtrFromString(s)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}
