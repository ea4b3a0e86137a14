// Package proc starts sandboxed processes for the sandbox backends: the one
// place that calls exec. It starts the re-exec helper or a backend's init
// (package reexec) as /proc/self/exe, puts the child in its own process group
// or session (and, when asked, a new network namespace, or the namespaces and
// cgroup a backend's init needs), feeds stdin, caps stdout and stderr while
// reading them, kills the whole group on timeout or when the run ends, and
// turns an init's status report into the Result.
//
// It also holds what the backends share around a run: the Instance (work dir,
// runs in flight, Destroy), the pool of unprivileged host ids a root Silas
// hands to sandboxes, and per-run cgroups.
package proc
