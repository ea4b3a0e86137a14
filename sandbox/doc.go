// Package sandbox is the only place in Silas that starts processes (spec 9.1,
// INV-05). It defines the Manager interface that every backend implements and
// the values a run takes and returns; backends live in sub-packages:
//
//   - namespaces: the built-in isolating backend, no external binary. Each
//     run gets new user, mount, PID, network (unless network_access), IPC,
//     UTS and cgroup namespaces; a fresh read-only root with only the system
//     directories, a few /etc files, the filesystem_read/filesystem_write
//     paths and the work dir (the only writable host path); no capabilities;
//     a seccomp filter; rlimits (and a per-run cgroup where one is
//     delegated); and a PID 1 whose exit takes every process of the run with
//     it. When Silas is root the sandbox runs as an unprivileged host uid of
//     its own.
//   - bwrap: the same isolation built by bubblewrap (Debian package
//     "bubblewrap"), with the same seccomp filter, run as an unprivileged
//     host uid of its own when Silas is root.
//   - subprocess: a fresh work dir, a scrubbed environment, a new network
//     namespace unless network access is asked for, rlimits, a process group
//     killed as a whole, output caps. Process-level isolation only: the
//     program sees the host's files, processes and keys with the daemon's
//     rights, so it is for explicit opt-in only.
//
// The suite in internal/sandboxtest states and checks these promises, the
// isolating ones as an attacker inside the sandbox would try to break them,
// with Silas as root and as an ordinary user.
//
// Executors (shell_exec, python_exec, web_search) are in sandbox/executor.
//
// Deny by default: no network unless asked, no variable from the server's
// environment, and a backend that cannot enforce what a SandboxConfig asks
// for refuses to run rather than run with less isolation; each isolating
// backend's Probe starts a real sandboxed process and says what to enable
// when it cannot.
package sandbox
