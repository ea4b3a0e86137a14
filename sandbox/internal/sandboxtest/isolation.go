package sandboxtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

// otherID owns directories the sandbox must not be able to traverse: an id
// no sandbox gets (both backends hand out ids from 2000000000 by default).
const otherID = 1_999_999_999

// isolationTests are the promises of an isolating backend, each tried as an
// attacker inside the sandbox would.
func isolationTests() []test {
	return []test{
		{"DataDirUnreachable", true, testDataDirUnreachable},
		{"DaemonProcessesHidden", true, testDaemonProcessesHidden},
		{"WritesStayInside", true, testWritesStayInside},
		{"FilesystemReadWrite", true, testFilesystemReadWrite},
		{"RootOnlyFileUnreadable", true, testRootOnlyFileUnreadable},
		{"WorkDirWritableNotAsHostRoot", true, testWorkDirWritable},
		{"SetsidDoubleForkDies", true, testSetsidDoubleForkDies},
		{"ForkBombContained", true, testForkBombContained},
		{"NoCapabilities", true, testNoCapabilities},
		{"SeccompFilter", true, testSeccompFilter},
		{"Hostname", true, testHostname},
		{"HomeEmpty", true, testHomeEmpty},
		{"TmpPrivate", true, testTmpPrivate},
	}
}

// guard refuses to go on with an attack that would hit the host itself if the
// backend did not isolate it: writes outside the work dir and mounts when
// the sandbox shares the host's mount namespace, a fork bomb when it runs as
// host root (RLIMIT_NPROC does not hold for root). Such a backend fails the
// test instead.
func guard(t *testing.T, in sandbox.Instance, forkBomb bool) {
	t.Helper()
	hostNS, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	res := sh(t, in, `readlink /proc/self/ns/mnt; : > "$HOME/.guard"`)
	if strings.TrimSpace(string(res.Stdout)) == hostNS {
		t.Fatalf("the sandbox shares the host's mount namespace (%s): not isolated, so the attack is not tried", hostNS)
	}
	fi, err := os.Stat(filepath.Join(in.WorkDir(), ".guard"))
	if err != nil {
		t.Fatalf("guard file: %v (stderr %s)", err, res.Stderr)
	}
	_ = os.Remove(filepath.Join(in.WorkDir(), ".guard"))
	if forkBomb && fi.Sys().(*syscall.Stat_t).Uid == 0 {
		t.Fatal("the sandbox runs as host root, for which RLIMIT_NPROC does not hold: a fork bomb is not contained, so it is not tried")
	}
}

// testDataDirUnreachable: the data dir's keys and tokens cannot be read by
// absolute path, by ../ from the work dir, or found next to it.
func testDataDirUnreachable(t *testing.T, e *env) {
	in := create(t, e.m, messages.DefaultSandboxConfig())
	var paths []string
	for _, p := range e.secrets {
		rel, err := filepath.Rel(in.WorkDir(), p)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p, rel) // rel is ../../../keys/owner.key and the like
	}
	res := sh(t, in, `for p; do if cat "$p" 2>/dev/null; then echo "READ $p"; fi; done; ls -A ..`, paths...)
	if bytes.Contains(res.Stdout, []byte(e.canary)) || bytes.Contains(res.Stdout, []byte("READ ")) {
		t.Fatalf("a secret of the data dir was read from the sandbox:\n%s", res.Stdout)
	}
	// The work dir's parent shows the work dir alone, not the other
	// instances' work dirs nor the data dir.
	if got, want := strings.TrimSpace(string(res.Stdout)), filepath.Base(in.WorkDir()); got != want {
		t.Fatalf("ls -A of the work dir's parent: %q, want only %q", got, want)
	}
}

// testDaemonProcessesHidden: a process of the daemon's (a decoy with a
// canary in its environment) is not visible: not its environment, not its
// command line, not its namespaces (nsenter), and neither is the test
// process (in the unprivileged run its environment holds a canary too);
// /proc/1 is the sandbox's own.
func testDaemonProcessesHidden(t *testing.T, e *env) {
	marker := sleepMarker(300)
	decoy := exec.Command("sleep", marker)
	decoy.Env = []string{"PATH=/usr/bin:/bin", "SILAS_DAEMON_CANARY=" + e.canary}
	if err := decoy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = decoy.Process.Kill(); _ = decoy.Wait() })
	checkFor(t, 5*time.Second, func() error {
		if len(findCmdline(t, "sleep\x00"+marker)) == 0 {
			return fmt.Errorf("the decoy sleep %s is not running", marker)
		}
		return nil
	})
	in := create(t, e.m, messages.DefaultSandboxConfig())
	script := `
for pid in "$1" "$2" 1; do
	cat /proc/$pid/environ 2>/dev/null
	cat /proc/$pid/cmdline 2>/dev/null
	for ns in -n -m -p; do
		if nsenter -t "$pid" $ns true 2>/dev/null; then echo "ENTER""ED $ns $pid"; fi
	done
done
cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null
true`
	res := sh(t, in, script, strconv.Itoa(decoy.Process.Pid), strconv.Itoa(os.Getpid()))
	out := string(res.Stdout)
	leaks := []string{e.canary, marker, "ENTERED"}
	if c := os.Getenv(daemonCanaryEnv); c != "" {
		leaks = append(leaks, c) // in this test process's own /proc/<pid>/environ
	}
	for _, leak := range leaks {
		if strings.Contains(out, leak) {
			t.Fatalf("the sandbox reached a daemon process (%q found):\n%s", leak, out)
		}
	}
}

// testWritesStayInside: nothing outside the work dir and the private /tmp
// is writable, and nothing written lands on the host. (In tests the work dir
// lies under /tmp, so its parents are in the sandbox's private /tmp and may
// be written there; they must still never reach the host.)
func testWritesStayInside(t *testing.T, e *env) {
	in := create(t, e.m, messages.DefaultSandboxConfig())
	guard(t, in, false)
	outside := t.TempDir()
	if err := os.Chmod(outside, 0o777); err != nil { // writable by anyone on the host
		t.Fatal(err)
	}
	name := "silas-probe-" + uniq()
	targets := []string{
		"/usr/" + name, "/usr/bin/" + name, "/etc/" + name, "/" + name, "/root/" + name,
		filepath.Join(in.WorkDir(), "..", name), filepath.Join(e.data, name), filepath.Join(e.root, name),
		filepath.Join(outside, name),
	}
	res := sh(t, in, `for p; do if ( : > "$p" ) 2>/dev/null; then echo "$p"; fi; done`, targets...)
	for _, p := range strings.Fields(string(res.Stdout)) {
		if !strings.HasPrefix(filepath.Clean(p), "/tmp/") {
			t.Errorf("the sandbox wrote %s, outside its work dir and /tmp", p)
		}
	}
	for _, p := range targets {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists on the host after the sandbox tried to write it", p)
		}
	}
}

// testFilesystemReadWrite: filesystem_read paths are readable and read-only,
// filesystem_write paths writable, and both reach the host.
func testFilesystemReadWrite(t *testing.T, e *env) {
	// The read-only path lies in a 0700 directory the sandbox's uid cannot
	// traverse (as the verification runner's artifacts lie in another
	// instance's work dir, owned by that instance's id when Silas is root):
	// the backend must still bind it.
	closed := t.TempDir()
	if os.Geteuid() == 0 {
		if err := os.Chown(closed, otherID, otherID); err != nil {
			t.Fatal(err)
		}
	}
	ro, rw := filepath.Join(closed, "ro"), t.TempDir()
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	// The sandbox runs under its own uid: the paths themselves must be open
	// to it.
	for _, d := range []string{ro, rw} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ro, "in.txt"), []byte("readable"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := messages.DefaultSandboxConfig()
	cfg.FilesystemRead = []string{ro}
	cfg.FilesystemWrite = []string{rw}
	in := create(t, e.m, cfg)
	guard(t, in, false)
	cases := []struct {
		name   string
		script string
		wantOK bool
	}{
		{"filesystem_read is readable", `[ "$(cat "$1/in.txt")" = readable ]`, true},
		{"filesystem_read is read-only", `echo x > "$1/new.txt"`, false},
		{"filesystem_read cannot be removed from", `rm -f "$1/in.txt"`, false},
		{"filesystem_write is writable", `echo x > "$2/new.txt"`, true},
		{"/usr is read-only", `touch /usr/silas-probe`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := sh(t, in, tc.script, ro, rw)
			if res.Success() != tc.wantOK {
				t.Fatalf("exit %d, want success=%v; stdout %q stderr %q", res.ExitCode, tc.wantOK, res.Stdout, res.Stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(rw, "new.txt")); err != nil {
		t.Fatalf("write through filesystem_write not visible on the host: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ro, "new.txt")); err == nil {
		t.Fatal("write through filesystem_read reached the host")
	}
	if _, err := os.Stat(filepath.Join(ro, "in.txt")); err != nil {
		t.Fatalf("a filesystem_read file was removed: %v", err)
	}
}

// testRootOnlyFileUnreadable: even a file the sandbox can reach (through
// filesystem_read) stays closed when it is root's and 0600: the sandbox is
// not host root.
func testRootOnlyFileUnreadable(t *testing.T, e *env) {
	if os.Geteuid() != 0 {
		t.Skipf("as uid %d the sandbox runs as that same uid, so a 0600 file of it is readable by design; "+
			"this covers a daemon running as root", os.Geteuid())
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "root-only")
	if err := os.WriteFile(secret, []byte(e.canary), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := messages.DefaultSandboxConfig()
	cfg.FilesystemRead = []string{dir}
	res := sh(t, create(t, e.m, cfg), `cat "$1"`, secret)
	if res.Success() || bytes.Contains(res.Stdout, []byte(e.canary)) {
		t.Fatalf("a root-only file was read from the sandbox: exit %d, stdout %q", res.ExitCode, res.Stdout)
	}
}

// testWorkDirWritable: the work dir is writable and what is written there is
// on the host, owned by an unprivileged uid when the daemon is root.
func testWorkDirWritable(t *testing.T, e *env) {
	in := create(t, e.m, messages.DefaultSandboxConfig())
	res := sh(t, in, `echo data > "$HOME/out.txt" && mkdir "$HOME/sub" && echo more > "$HOME/sub/f"`)
	if !res.Success() {
		t.Fatalf("write in the work dir: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
	p := filepath.Join(in.WorkDir(), "out.txt")
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "data\n" {
		t.Fatalf("work dir file on the host: %q, %v", b, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if owner := fi.Sys().(*syscall.Stat_t).Uid; os.Geteuid() == 0 && owner == 0 {
		t.Fatalf("the sandbox wrote %s as host root; it must run as an unprivileged host uid", p)
	}
}

// testSetsidDoubleForkDies: a daemon started with setsid and a double fork,
// which leaves the process group, dies with the run.
func testSetsidDoubleForkDies(t *testing.T, e *env) {
	in := create(t, e.m, messages.DefaultSandboxConfig())
	marker := sleepMarker(30)
	res := sh(t, in, `( setsid sh -c 'sleep "$1"; echo late > "$HOME/late"' sh "$1" & ) ; sleep 0.2; echo started`, marker)
	if !res.Success() || !bytes.Contains(res.Stdout, []byte("started")) {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	checkFor(t, 10*time.Second, func() error {
		if pids := findCmdline(t, "sleep\x00"+marker+"\x00"); len(pids) > 0 {
			return fmt.Errorf("the setsid double-fork outlived the run as pids %v", pids)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(in.WorkDir(), "late")); err == nil {
		t.Fatal("the escaped process wrote its marker")
	}
}

// testForkBombContained: a fork bomb hits the process limit instead of the
// host's, and nothing of it survives the run.
func testForkBombContained(t *testing.T, e *env) {
	in := create(t, e.m, messages.DefaultSandboxConfig())
	guard(t, in, true)
	marker := "bomb-" + uniq()
	res := run(t, in, sandbox.Command{
		// The main shell keeps forking sleeps until a fork fails, so the run
		// lasts until the bomb has hit the limit (or the timeout).
		Args:    []string{"sh", "-c", `b() { b | b & }; b; while sleep 0.05; do :; done`, marker},
		Timeout: 3 * time.Second,
	})
	if !bytes.Contains(bytes.ToLower(res.Stderr), []byte("fork")) {
		t.Fatalf("the fork bomb never hit the process limit (exit %d, timed out %v); stderr %q",
			res.ExitCode, res.TimedOut, firstLine(res.Stderr))
	}
	checkFor(t, 10*time.Second, func() error {
		if pids := findCmdline(t, marker); len(pids) > 0 {
			return fmt.Errorf("%d fork bomb processes outlived the run", len(pids))
		}
		return nil
	})
}

func firstLine(b []byte) []byte {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return line
}

// testNoCapabilities: every capability set is empty and no_new_privs is set.
func testNoCapabilities(t *testing.T, e *env) {
	res := sh(t, create(t, e.m, messages.DefaultSandboxConfig()), `grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status`)
	want := map[string]string{"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000",
		"CapBnd": "0000000000000000", "CapAmb": "0000000000000000", "NoNewPrivs": "1"}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		k, v, _ := strings.Cut(line, ":")
		got[k] = strings.TrimSpace(v)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// seccompProbe makes raw system calls through ctypes and prints the errno
// of each ("0" when the call succeeded).
const seccompProbe = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
nr = dict(a.split("=", 1) for a in sys.argv[1:])
def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(int(nr[name])), *args)
    print(name, ctypes.get_errno() if r == -1 else 0)
L = ctypes.c_long
call("ptrace", L(16), L(1), None, None)                        # PTRACE_ATTACH to pid 1
call("traceme", L(0), L(0), None, None)                        # PTRACE_TRACEME
call("mount", b"none", nr["mnt"].encode(), b"tmpfs", L(0), None)   # a directory of the work dir
call("unshare", L(0x10000000))                                 # CLONE_NEWUSER
call("setns", L(-1), L(0))
call("keyctl", L(0), L(-3), L(0))                              # KEYCTL_GET_KEYRING_ID, session keyring
call("bpf", L(0), None, L(0))
call("io_uring_setup", L(1), None)
call("userfaultfd", L(0))
call("clone3", None, L(0))
`

// testSeccompFilter: the filter is installed and refuses what it must, in
// ways only the filter explains (unshare of a user namespace needs no
// privilege, keyctl and io_uring neither).
func testSeccompFilter(t *testing.T, e *env) {
	in := create(t, e.m, messages.DefaultSandboxConfig())
	guard(t, in, false)
	nrs := map[string]int{
		"ptrace": unix.SYS_PTRACE, "traceme": unix.SYS_PTRACE, "mount": unix.SYS_MOUNT, "unshare": unix.SYS_UNSHARE,
		"setns": unix.SYS_SETNS, "keyctl": unix.SYS_KEYCTL, "bpf": unix.SYS_BPF, "io_uring_setup": unix.SYS_IO_URING_SETUP,
		"userfaultfd": unix.SYS_USERFAULTFD, "clone3": unix.SYS_CLONE3,
	}
	mnt := filepath.Join(in.WorkDir(), "mnt")
	if err := os.Mkdir(mnt, 0o777); err != nil {
		t.Fatal(err)
	}
	args := []string{"python3", "-c", seccompProbe, "mnt=" + mnt}
	for k, v := range nrs {
		args = append(args, k+"="+strconv.Itoa(v))
	}
	res := run(t, in, sandbox.Command{Args: args})
	if !res.Success() {
		t.Fatalf("probe failed: exit %d, stderr %s", res.ExitCode, res.Stderr)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		got[k] = v
	}
	eperm, enosys := strconv.Itoa(int(unix.EPERM)), strconv.Itoa(int(unix.ENOSYS))
	for name := range nrs {
		want := eperm
		if name == "clone3" {
			want = enosys
		}
		if got[name] != want {
			t.Errorf("%s: errno %q, want %s", name, got[name], want)
		}
	}
	res = sh(t, in, `grep '^Seccomp:' /proc/self/status; for ns in -U -m -n -p; do if unshare $ns -f true 2>/dev/null; then echo "UNSHARE $ns"; fi; done`)
	if !bytes.Contains(res.Stdout, []byte("Seccomp:\t2")) || bytes.Contains(res.Stdout, []byte("UNSHARE")) {
		t.Fatalf("want a seccomp filter (mode 2) and every unshare refused, got:\n%s", res.Stdout)
	}
}

func testHostname(t *testing.T, e *env) {
	res := sh(t, create(t, e.m, messages.DefaultSandboxConfig()), `cat /proc/sys/kernel/hostname`)
	if got := strings.TrimSpace(string(res.Stdout)); got != "sandbox" {
		t.Fatalf("host name %q, want sandbox", got)
	}
}

// testHomeEmpty: a fresh instance's HOME (its work dir) is empty, and
// neither /root nor the daemon's home shows anything of the host.
func testHomeEmpty(t *testing.T, e *env) {
	in := create(t, e.m, messages.DefaultSandboxConfig())
	homes := []string{"$HOME", "/root"}
	if h, err := os.UserHomeDir(); err == nil {
		homes = append(homes, h)
	}
	for _, h := range homes {
		res := sh(t, in, `ls -A "`+strings.ReplaceAll(h, `"`, ``)+`" 2>/dev/null; true`)
		if out := strings.TrimSpace(string(res.Stdout)); out != "" {
			t.Errorf("%s is not empty in the sandbox: %q", h, out)
		}
	}
}

// testTmpPrivate: /tmp shows nothing of the host's, holds nothing from an
// earlier run, and writes to it never reach the host.
func testTmpPrivate(t *testing.T, e *env) {
	hostFile, err := os.CreateTemp("", "silas-host-canary-")
	if err != nil {
		t.Fatal(err)
	}
	_ = hostFile.Close()
	t.Cleanup(func() { _ = os.Remove(hostFile.Name()) })
	in := create(t, e.m, messages.DefaultSandboxConfig())
	name := "/tmp/silas-inside-" + uniq()
	res := sh(t, in, `if [ -e "$1" ]; then echo "HOST-VISIBLE"; fi; ls -A /tmp; echo x > "$2" && echo wrote`, hostFile.Name(), name)
	out := string(res.Stdout)
	if strings.Contains(out, "HOST-VISIBLE") || !strings.Contains(out, "wrote") {
		t.Fatalf("want the host's /tmp invisible and /tmp writable, got:\n%s\nstderr %s", out, res.Stderr)
	}
	// Only the path down to the work dir (when it lies under /tmp, as in
	// tests) may show in /tmp.
	for _, entry := range strings.Fields(strings.TrimSuffix(out, "wrote\n")) {
		if !strings.HasPrefix(in.WorkDir(), "/tmp/"+entry+"/") {
			t.Errorf("/tmp holds %q at the start of a run", entry)
		}
	}
	if _, err := os.Stat(name); err == nil {
		_ = os.Remove(name)
		t.Fatalf("%s written in the sandbox appeared on the host", name)
	}
	res = sh(t, in, `if [ -e "$1" ]; then echo PERSISTED; fi`, name)
	if bytes.Contains(res.Stdout, []byte("PERSISTED")) {
		t.Fatal("/tmp of an earlier run is still there")
	}
}
