// Package reexec is the code that runs in the processes Silas starts by
// re-executing its own binary (/proc/self/exe) under a special argv[0]:
//
//   - HelperName, the helper every backend starts: it sets the rlimits and
//     no_new_privs, optionally installs the seccomp filter and (for bwrap
//     when Silas is root) drops to an unprivileged host id, then execve(2)s
//     the real program, which inherits all of it. Go cannot run code between
//     fork and exec, and setting limits on a started pid races with it.
//   - InitName, PID 1 of a namespaces sandbox: started as uid 0 of a new
//     user namespace, it builds the sandbox from inside its new namespaces
//     (binds, mount trees handed over by Silas, /proc, /dev, pivot_root, host
//     name, loopback), drops every privilege on the thread it forks from,
//     starts the helper, reaps, and reports how the program ended on
//     StatusFD.
//
// The init function of this package recognises those names before main
// runs. Any binary that links a sandbox backend (silas, and every test binary
// of the sandbox packages) therefore carries both; nothing has to be called
// from main.
//
// This package imports only the standard library, golang.org/x/sys and the
// sandbox's own leaf packages (seccomp, layout), never the rest of Silas. Go
// initialises packages in dependency order, and among ready ones in import
// path order; a leaf package here is initialised before Silas's heavy
// dependencies (actor system, telemetry, protobuf), so a re-executed process
// skips their initialisation and starts in about a millisecond.
package reexec

import (
	"os"
	"syscall"
)

func init() {
	if len(os.Args) == 0 {
		return
	}
	// syscall.Exit, not os.Exit: nothing is buffered or deferred here, and
	// under the race detector os.Exit sleeps a second before exiting, which
	// every sandboxed run would wait for.
	switch os.Args[0] {
	case HelperName:
		syscall.Exit(helperMain(os.Args[1:]))
	case InitName:
		syscall.Exit(initMain(os.Args[1:]))
	}
}
