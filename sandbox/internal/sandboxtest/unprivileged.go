package sandboxtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// unprivilegedEnv marks a test binary re-executed by RunUnprivileged.
const unprivilegedEnv = "SILAS_SANDBOX_TEST_UNPRIVILEGED"

// daemonCanaryEnv holds a secret in the environment the unprivileged child
// starts with, so /proc/<its pid>/environ really holds it (variables set
// later with os.Setenv never show there).
const daemonCanaryEnv = "SILAS_SANDBOX_TEST_DAEMON_CANARY"

// unavailableMarker starts the line a child prints when its backend's Probe
// failed (fail closed), so the parent can say so.
const unavailableMarker = "SANDBOX-BACKEND-UNAVAILABLE:"

// NobodyID is the uid and gid the unprivileged run uses.
const NobodyID = 65534

// Unprivileged reports whether this test binary is the unprivileged child of
// RunUnprivileged.
func Unprivileged() bool { return os.Getenv(unprivilegedEnv) == "1" }

// SkipUnavailable skips t because the backend's Probe failed, after printing
// the reason where RunUnprivileged's parent finds it. Backends call it from
// their NewManager when Probe returns sandbox.ErrBackendUnavailable.
func SkipUnavailable(t *testing.T, err error) {
	t.Helper()
	fmt.Printf("%s %v\n", unavailableMarker, strings.ReplaceAll(err.Error(), "\n", " "))
	t.Skipf("the backend refused to run on this host (fail closed): %v", err)
}

// RunUnprivileged runs the tests matching pattern (a -test.run expression)
// again as uid and gid NobodyID, when this test runs as root, so a backend
// is checked both with Silas as root and as an ordinary user. It copies the
// test binary to a directory that user can read, runs it with
// SysProcAttr.Credential and fails with the child's output if the child
// fails. If the child's backend refused to run (its Probe failed, as on a
// host without unprivileged user namespaces), the test is skipped and says
// why.
func RunUnprivileged(t *testing.T, pattern string) {
	if Unprivileged() {
		t.Skip("this is already the unprivileged run")
	}
	if os.Geteuid() != 0 {
		t.Skipf("the tests already run as uid %d; re-running them as another user needs root", os.Geteuid())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "silas-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(exe))
	if err := copyFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", pattern, "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "TMPDIR=" + os.TempDir(), unprivilegedEnv + "=1",
		daemonCanaryEnv + "=silas-daemon-canary-" + uniq(),
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: NobodyID, Gid: NobodyID, Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL,
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests failed as uid %d: %v\n%s", NobodyID, err, out)
	}
	if reason, ok := unavailable(out); ok {
		t.Skipf("as uid %d the backend refuses to run (fail closed), so the unprivileged run was skipped: %s", NobodyID, reason)
	}
	if !bytes.Contains(out, []byte("--- PASS")) {
		t.Fatalf("the unprivileged run ran no test matching %q:\n%s", pattern, out)
	}
	t.Logf("as uid %d:\n%s", NobodyID, summary(out))
}

// unavailable finds the child's SkipUnavailable line.
func unavailable(out []byte) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), unavailableMarker); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

// summary keeps the child's top-level results.
func summary(out []byte) string {
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "    --- ") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func copyFile(src, dst string, mode os.FileMode) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	_, err = io.Copy(out, in)
	return err
}
