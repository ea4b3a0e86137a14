package backends

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Feature is one isolation feature of the host, as `silas doctor` shows it.
type Feature struct {
	// Name says what it is ("user namespaces", "seccomp", ...).
	Name string
	// OK reports that the feature is there as the sandbox needs it.
	OK bool
	// Detail is what was read, and for a missing feature what to change.
	Detail string
}

// Inspect reads the host's isolation features from /proc and /sys. It only
// reads; whether a backend really works is what Choose's probes tell.
func Inspect() []Feature {
	return []Feature{
		userNamespaces(),
		unprivilegedUserns(),
		seccompSupport(),
		cgroupV2(),
		bubblewrap(),
		daemonUser(),
	}
}

func readTrim(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

func userNamespaces() Feature {
	f := Feature{Name: "user namespaces"}
	v, ok := readTrim("/proc/sys/user/max_user_namespaces")
	switch {
	case !ok:
		f.Detail = "the kernel has no user namespaces (CONFIG_USER_NS)"
	case v == "0":
		f.Detail = "user.max_user_namespaces is 0; run `sysctl -w user.max_user_namespaces=15000`"
	default:
		f.OK, f.Detail = true, "user.max_user_namespaces = "+v
	}
	return f
}

// unprivilegedUserns covers the distribution switches that stop users
// other than root from creating user namespaces.
func unprivilegedUserns() Feature {
	f := Feature{Name: "unprivileged user namespaces", OK: true, Detail: "no distribution restriction found"}
	if v, ok := readTrim("/proc/sys/kernel/unprivileged_userns_clone"); ok && v == "0" {
		f.OK, f.Detail = false, "kernel.unprivileged_userns_clone is 0; run `sysctl -w kernel.unprivileged_userns_clone=1` (needed when Silas does not run as root)"
	}
	if v, ok := readTrim("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); ok && v == "1" {
		f.OK, f.Detail = false, "AppArmor restricts unprivileged user namespaces; run `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` or give silas an AppArmor profile that allows userns (needed when Silas does not run as root)"
	}
	return f
}

func seccompSupport() Feature {
	f := Feature{Name: "seccomp filters"}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		f.Detail = "cannot read /proc/self/status: " + err.Error()
		return f
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Seccomp:"); ok {
			f.OK, f.Detail = true, "supported (this process: mode "+strings.TrimSpace(v)+")"
			return f
		}
	}
	f.Detail = "the kernel reports no seccomp support (CONFIG_SECCOMP_FILTER)"
	return f
}

func cgroupV2() Feature {
	f := Feature{Name: "cgroup v2 (delegated)"}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
		f.Detail = "no unified cgroup v2 hierarchy at /sys/fs/cgroup; memory, CPU, process and file-size limits use rlimits"
		return f
	}
	f.OK, f.Detail = true, "unified hierarchy at /sys/fs/cgroup"
	return f
}

func bubblewrap() Feature {
	f := Feature{Name: "bubblewrap"}
	path, err := exec.LookPath("bwrap")
	if err != nil {
		f.Detail = "not installed (Debian package bubblewrap); the built-in namespaces backend does not need it"
		return f
	}
	f.OK, f.Detail = true, path
	return f
}

func daemonUser() Feature {
	f := Feature{Name: "daemon user", OK: true}
	if os.Geteuid() == 0 {
		f.Detail = "root: sandboxed code runs in a user namespace as an unprivileged host uid"
	} else {
		f.Detail = "uid " + strconv.Itoa(os.Geteuid()) + ": sandboxed code runs in a user namespace as this uid"
	}
	return f
}
