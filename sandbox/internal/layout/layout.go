// Package layout is the filesystem view the isolating backends (namespaces,
// bwrap) give a sandbox: which host paths it sees, in which order, and how.
// Everything else of the host, the data dir, keys, configuration and the
// server's home among it, is simply not there.
//
// It imports only the standard library: the re-executed sandbox init uses it.
package layout

import "path/filepath"

// Kind says how an Entry is bound.
type Kind int

// Entry kinds.
const (
	// System is bound read-only when it exists; a symlink (merged /usr) is
	// recreated as the same symlink.
	System Kind = iota + 1
	// Etc is one /etc entry bound read-only when it exists.
	Etc
	// Read is a filesystem_read path: read-only, must exist.
	Read
	// Write is a filesystem_write path: read-write, must exist.
	Write
	// Work is the instance's work dir: read-write, bound last so nothing
	// above hides it.
	Work
)

// Entry is one host path the sandbox sees, at the same path.
type Entry struct {
	Kind Kind
	Path string
}

// Writable reports whether the entry is bound read-write.
func (e Entry) Writable() bool { return e.Kind == Write || e.Kind == Work }

// Required reports whether a missing path is an error rather than skipped.
func (e Entry) Required() bool { return e.Kind == Read || e.Kind == Write || e.Kind == Work }

// SystemDirs are the program directories.
func SystemDirs() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
}

// EtcFiles are the /etc entries programs need to start, resolve users and
// verify TLS; nothing else of /etc is visible.
func EtcFiles() []string {
	return []string{
		"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
		"/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts",
		"/etc/ssl", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/mime.types",
	}
}

// NetFiles are the /etc entries added only with network access.
func NetFiles() []string { return []string{"/etc/resolv.conf", "/etc/gai.conf", "/etc/host.conf"} }

// For lists what an instance with work dir dir sees, with or without network
// access and with the filesystem_read and filesystem_write paths of its
// SandboxConfig, in mount order. Devices, /proc, /tmp and the empty /root are
// the backends' own.
func For(dir string, network bool, read, write []string) []Entry {
	var out []Entry
	for _, d := range SystemDirs() {
		out = append(out, Entry{System, d})
	}
	etc := EtcFiles()
	if network {
		etc = append(etc, NetFiles()...)
	}
	if py, _ := filepath.Glob("/etc/python3*"); len(py) > 0 {
		etc = append(etc, py...)
	}
	for _, f := range etc {
		out = append(out, Entry{Etc, f})
	}
	for _, p := range read {
		out = append(out, Entry{Read, p})
	}
	for _, p := range write {
		out = append(out, Entry{Write, p})
	}
	return append(out, Entry{Work, dir})
}
