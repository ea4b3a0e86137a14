package reexec

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// HelperName is argv[0] of the re-exec helper. A process started with it runs
// the helper instead of the program's main.
const HelperName = "silas-sandbox-exec"

// DefaultOpenFiles is the RLIMIT_NOFILE of a sandboxed process when Limits
// does not say otherwise.
const DefaultOpenFiles = 1024

// Limits are the rlimits applied to the sandboxed process before it execs.
// A zero field leaves that limit as inherited, except OpenFiles (zero means
// DefaultOpenFiles). Core dumps are always disabled.
type Limits struct {
	// MemoryBytes is RLIMIT_AS, the address-space size.
	MemoryBytes uint64
	// CPUSeconds is RLIMIT_CPU: SIGXCPU at the limit, SIGKILL one second later.
	CPUSeconds uint64
	// FileSizeBytes is RLIMIT_FSIZE, the largest file the process may write.
	FileSizeBytes uint64
	// Processes is RLIMIT_NPROC. Since Linux 5.14 the kernel counts the
	// processes of the real uid in the caller's user namespace (and those of
	// the namespace's creator above it); it does not enforce it for host root.
	Processes uint64
	// OpenFiles is RLIMIT_NOFILE.
	OpenFiles uint64
}

type rlimitArg struct {
	key      string
	resource int
}

// rlimitArgs lists the limits the helper understands, in argument order.
func rlimitArgs() []rlimitArg {
	return []rlimitArg{
		{"as", unix.RLIMIT_AS},
		{"cpu", unix.RLIMIT_CPU},
		{"fsize", unix.RLIMIT_FSIZE},
		{"nproc", unix.RLIMIT_NPROC},
		{"nofile", unix.RLIMIT_NOFILE},
		{"core", unix.RLIMIT_CORE},
	}
}

// args encodes l as helper arguments, "key=value" each.
func (l Limits) args() []string {
	nofile := l.OpenFiles
	if nofile == 0 {
		nofile = DefaultOpenFiles
	}
	vals := map[string]uint64{"as": l.MemoryBytes, "cpu": l.CPUSeconds, "fsize": l.FileSizeBytes, "nproc": l.Processes, "nofile": nofile}
	out := make([]string, 0, len(rlimitArgs()))
	for _, a := range rlimitArgs() {
		if v := vals[a.key]; v > 0 {
			out = append(out, a.key+"="+strconv.FormatUint(v, 10))
		}
	}
	return append(out, "core=0")
}

// rlimit is one limit the helper sets.
type rlimit struct {
	resource int
	lim      unix.Rlimit
}

// parseLimit decodes one limit argument; known is false for a key that is not
// a limit.
func parseLimit(key, val string) (r rlimit, known bool, err error) {
	for _, a := range rlimitArgs() {
		if a.key != key {
			continue
		}
		n, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return rlimit{}, true, fmt.Errorf("limit %s=%s: %w", key, val, err)
		}
		lim := unix.Rlimit{Cur: n, Max: n}
		if a.resource == unix.RLIMIT_CPU {
			lim.Max = n + 1 // SIGXCPU at the soft limit, SIGKILL a second later
		}
		return rlimit{resource: a.resource, lim: lim}, true, nil
	}
	return rlimit{}, false, nil
}
