// Package namespaces is Silas's built-in isolating sandbox backend: Linux
// namespaces, a seccomp filter and rlimits set up by Silas's own binary, with
// no external program. Each run starts /proc/self/exe as the sandbox's init
// (package internal/reexec) in new namespaces, as uid 0 of its new user
// namespace; the init builds the sandbox from inside (with the work dir and
// the filesystem paths handed over as mount trees when Silas is root), drops
// every privilege and starts the helper that applies the limits and the
// seccomp filter and execs the command.
//
// New and Probe are the API: New(Options) checks the options and starts
// nothing; Probe(ctx) (or Backend.Probe with the real options) starts a
// trivial sandboxed program and returns sandbox.ErrBackendUnavailable with
// what to enable when it cannot.
//
// # What a run gets
//
//   - Namespaces: new user, mount, PID, IPC, UTS (host name "sandbox") and
//     cgroup namespaces, and a new network namespace unless network_access
//     (with only its own loopback, up; nothing outside is reachable).
//   - Identity: uid and gid 0 inside map to an unprivileged host id. When
//     Silas is root, each instance gets its own id from Options.HostIDBase
//     (its work dir is handed to it) and its supplementary groups are
//     cleared, so the program is not host root: RLIMIT_NPROC holds and host
//     files of root's with mode 0600 stay closed even where reachable. When
//     Silas is not root, the id is Silas's own uid, the only one it can map.
//   - Privileges: no capability in any set (bounding and ambient sets
//     cleared), secure bits NOROOT and NO_SETUID_FIXUP locked, no_new_privs,
//     and the seccomp filter of package internal/seccomp, installed last
//     before execve.
//   - Filesystem: a new root (a read-only tmpfs, the old root detached) made
//     of read-only, nosuid, nodev binds of /usr, /bin, /sbin and /lib*
//     (symlinks of a merged /usr recreated), the /etc entries of
//     internal/layout (plus resolv.conf and friends only with network access),
//     a /proc of the new PID namespace, a read-only /dev with null, zero,
//     full, random, urandom and tty bound from the host, a private devpts and
//     /dev/shm, a private /tmp, an empty read-only /root, the filesystem_read
//     paths read-only, the filesystem_write paths read-write, and the work dir
//     read-write at its host path, which is also HOME. The data dir, keys,
//     configuration and the server's home are not there at all.
//   - Processes: the init is PID 1 of the run. It reaps, and when the
//     command exits it reports how and exits, upon which the kernel kills
//     every process left in the PID namespace, setsid double-forks and
//     daemons included. A timeout, a cancelled context, Destroy and Silas's
//     own death (a parent-death signal) kill the init and so the whole run.
//   - Limits: RLIMIT_AS (max_memory_mb), RLIMIT_CPU (max_cpu_seconds),
//     RLIMIT_FSIZE, RLIMIT_NOFILE 1024, no core dumps, and RLIMIT_NPROC
//     (Options.MaxProcesses), which the kernel (5.14 and later) counts per
//     user namespace, that is per run, so a fork bomb stops there. With
//     Options.Cgroup, a delegated cgroup v2 directory, each run also gets a
//     cgroup of its own with memory.max and pids.max for all its processes
//     together.
//   - Failing closed: a sandbox the init cannot build is an error wrapping
//     sandbox.ErrBackendUnavailable (or ErrNetworkIsolationUnavailable) that
//     names the cause; nothing runs with less isolation. Probe starts a real
//     sandboxed process and says what to enable when it cannot.
//
// # Gaps
//
//   - The program reaches bound host paths with its own host id's rights:
//     the filesystem_read and filesystem_write paths themselves must be
//     readable (writable) by it. Their parents need not be: when Silas is
//     root it hands them to the init as mount trees (open_tree), and
//     otherwise the init opens them with Silas's own rights.
//   - Without a delegated cgroup (this is the case on hosts with a hybrid
//     cgroup hierarchy, where cgroup v2 has no memory or pids controller),
//     memory is bounded per process (address space), not for the run as a
//     whole, and CPU time per process; the private /tmp and /dev/shm are in
//     memory, each bounded by Options.TmpSizeMB; the work dir has no quota
//     beyond RLIMIT_FSIZE per file.
//   - With network_access the run shares the host's network namespace and can
//     reach services on the host's loopback, the daemon's ports included.
//   - /proc shows the host kernel's global files (meminfo, cpuinfo, ...), and
//     the host's /etc/passwd and /etc/group are visible; /sys is not mounted.
//   - When Silas is not root, the daemon user's supplementary groups stay
//     (an unprivileged user namespace cannot drop them).
//   - The init's idle threads keep its capabilities in the run's own user
//     namespace; the program cannot reach them (ptrace is filtered, the init
//     is not dumpable and holds what the program lacks).
//   - It needs Linux 5.12 or later (mount_setattr), user namespaces, an
//     amd64 or arm64 kernel (the seccomp filter has no other table), and a
//     silas binary every user may execute (mode 0755): the helper is
//     re-executed after the switch to the sandbox's id.
package namespaces
