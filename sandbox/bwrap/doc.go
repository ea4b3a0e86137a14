// Package bwrap is a sandbox backend that runs every command inside
// bubblewrap (the Debian package "bubblewrap", binary bwrap, 0.8 or later),
// on top of what the subprocess backend does (scrubbed environment, rlimits
// set before exec by the re-exec helper, process-group kill on timeout,
// output caps).
//
// New and Probe are the API: New(Options) finds bwrap and starts nothing;
// Probe(ctx) (or Backend.Probe with the real options) starts a trivial
// sandboxed program and returns sandbox.ErrBackendUnavailable with what to
// install or enable when it cannot.
//
// # What a run gets
//
//   - Namespaces: new user, PID, IPC, UTS (host name "sandbox"), cgroup and,
//     unless network_access, network namespaces (--unshare-all, --share-net
//     only when asked); nested user namespaces disabled (--disable-userns).
//   - Identity: uid and gid 0 inside, mapped to the uid bwrap runs as. When
//     Silas is root, bwrap does not run as root: the helper first binds the
//     work dir and the filesystem_read/filesystem_write paths into a private
//     mount namespace (bwrap could not traverse the root-only data dir to
//     reach them), clears the supplementary groups and switches to the
//     instance's own unprivileged host id (Options.HostIDBase; the work dir is
//     handed to it), then execs bwrap. The program is then not host root:
//     RLIMIT_NPROC holds and root's 0600 files stay closed.
//   - Privileges: --cap-drop ALL (every capability set empty), no_new_privs,
//     and the seccomp filter of package internal/seccomp, handed to bwrap as
//     a sealed memfd (--seccomp), which installs it right before exec.
//   - Filesystem: a new root, read-only after setup (--remount-ro /), of
//     read-only binds of /usr, /bin, /sbin, /lib* and the /etc entries of
//     internal/layout, a fresh /proc, a minimal /dev, a private /tmp of
//     Options.TmpSizeMB, an empty /root, the filesystem_read paths read-only,
//     the filesystem_write paths and the work dir (HOME) read-write.
//   - Processes: --die-with-parent and bwrap's PID 1: when the command exits,
//     or bwrap is killed on timeout, the whole PID namespace goes, setsid
//     double-forks included. --new-session keeps the program off Silas's
//     terminal.
//   - Limits: RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE, no core
//     dumps, and RLIMIT_NPROC (Options.MaxProcesses per instance id).
//
// # Gaps
//
//   - bwrap runs unprivileged in every case, so it needs unprivileged user
//     namespaces even when Silas is root (sysctl user.max_user_namespaces > 0,
//     on Debian kernel.unprivileged_userns_clone=1, on Ubuntu
//     kernel.apparmor_restrict_unprivileged_userns=0 or bwrap's AppArmor
//     profile); Probe reports it.
//   - When Silas is not root, bwrap creates its user namespace under the
//     process limit, so the kernel counts every task of Silas's uid against
//     it: the limit is set to the tasks that uid has now plus MaxProcesses,
//     which other processes of that user starting at the same time can eat
//     into. The daemon user's supplementary groups stay.
//   - No cgroup: memory and CPU are bounded per process only; /tmp is in
//     memory (bounded by TmpSizeMB) and the work dir has no quota beyond
//     RLIMIT_FSIZE per file. bwrap's /dev is a writable tmpfs (inside the
//     sandbox only).
//   - The same as the namespaces backend: bound paths must be open to the
//     sandbox's host id; with network_access the host's loopback services
//     are reachable; /proc shows the host kernel's global files.
package bwrap
