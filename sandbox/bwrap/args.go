package bwrap

import (
	"os"
	"strconv"

	"github.com/silas-ai/silas/sandbox/internal/layout"
)

// seccompFD is the descriptor bwrap reads the seccomp program from: the
// first of proc.Spec.ExtraFiles.
const seccompFD = 3

// argsConfig is what Args needs besides the layout.
type argsConfig struct {
	network  bool
	tmpBytes uint64
	// source is the host path bwrap binds an entry from: the entry's own path,
	// or its staged path when Silas is root (see reexec.Drop).
	source func(layout.Entry) string
}

// Args returns the bwrap arguments, without the program and "--".
func Args(entries []layout.Entry, c argsConfig) []string {
	a := []string{"--unshare-all"}
	if c.network {
		a = append(a, "--share-net")
	}
	// A user namespace always, with uid and gid 0 inside (mapped to the
	// unprivileged uid bwrap runs as), nested user namespaces disabled,
	// every capability dropped.
	a = append(a, "--unshare-user", "--uid", "0", "--gid", "0", "--disable-userns",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox",
		"--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatUint(c.tmpBytes, 10), "--tmpfs", "/tmp",
		"--dir", "/root")
	var work string
	for _, e := range entries {
		switch e.Kind {
		case layout.System:
			a = appendSystem(a, e.Path)
		case layout.Etc:
			a = append(a, "--ro-bind-try", e.Path, e.Path)
		case layout.Read:
			a = append(a, "--ro-bind", c.source(e), e.Path)
		case layout.Write:
			a = append(a, "--bind", c.source(e), e.Path)
		case layout.Work:
			// The work dir last (layout.For's order), so nothing above hides it.
			a = append(a, "--bind", c.source(e), e.Path)
			work = e.Path
		}
	}
	return append(a, "--chdir", work, "--remount-ro", "/", "--seccomp", strconv.Itoa(seccompFD))
}

func appendSystem(a []string, d string) []string {
	fi, err := os.Lstat(d)
	switch {
	case err != nil:
		return a
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(d)
		if err != nil {
			return a
		}
		return append(a, "--symlink", target, d)
	default:
		return append(a, "--ro-bind", d, d)
	}
}
