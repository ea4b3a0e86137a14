package verify_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/verify"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/bwrap"
	"github.com/silas-ai/silas/sandbox/subprocess"
)

// fixedNow is the clock of every test runner.
func fixedNow() time.Time { return time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC) }

// newSubprocess returns a real subprocess backend rooted in a test directory.
func newSubprocess(t *testing.T) sandbox.Manager {
	t.Helper()
	b, err := subprocess.New(subprocess.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// backend names a sandbox backend the tests run the checks under; enforcing
// reports that the check's process cannot write into a path it is given
// read-only (FilesystemRead).
type backend struct {
	name      string
	new       func(t *testing.T) sandbox.Manager
	enforcing bool
}

// backends are the sandbox backends every isolation test runs under: the
// subprocess backend (whose process has the server's uid, so read-only
// holds only for a server that is not root) and bubblewrap, whose test
// skips, saying why, where bwrap is not installed.
func backends() []backend {
	return []backend{
		{name: "subprocess", new: newSubprocess, enforcing: os.Geteuid() != 0},
		{name: "bwrap", new: newBwrap, enforcing: true},
	}
}

// newBwrap returns a real bubblewrap backend, or skips the test with the
// reason when bwrap is not on PATH.
func newBwrap(t *testing.T) sandbox.Manager {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not on PATH: install the Debian package bubblewrap to run the verification checks under it (CI does)")
	}
	b, err := bwrap.New(bwrap.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// needTool skips the test, saying why, when a program a check runs is not
// installed.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not on PATH: the checks of this test run it; install it to run the test", name)
	}
}

// agentDir plays the agent: it runs script with /bin/sh in a fresh instance
// of the subprocess backend, as an attempt's executor would, and returns
// that instance's work dir (the execution work dir handed to Run).
func agentDir(t *testing.T, script string) string {
	t.Helper()
	in, err := newSubprocess(t).Create(t.Context(), messages.DefaultSandboxConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Destroy(context.Background()) })
	res, err := in.Run(t.Context(), sandbox.Command{Args: []string{"/bin/sh", "-ec", script}, Timeout: time.Minute})
	if err != nil || !res.Success() {
		t.Fatalf("the agent's script failed: %v, %+v, stderr %s", err, res, res.Stderr)
	}
	return in.WorkDir()
}

// naiveRun runs run the way a runner without these defences would: in a
// subprocess instance whose work dir, the check's working directory and
// HOME, holds a plain copy of execDir, with no hardening environment. It
// reports whether run exited 0, so a test can show that what it plants
// really works against such a runner.
func naiveRun(t *testing.T, execDir, run string) bool {
	t.Helper()
	cfg := messages.DefaultSandboxConfig()
	cfg.MaxMemoryMB = 2048 // enough for node
	in, err := newSubprocess(t).Create(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Destroy(context.Background()) })
	res, err := in.Run(t.Context(), sandbox.Command{
		Args:    []string{"/bin/sh", "-c", `cp -a "$1"/. . && exec /bin/sh -c "$2"`, "naive", execDir, run},
		Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Success()
}

// newRunner returns a Runner over m (the subprocess backend when nil), with
// opts applied on top.
func newRunner(t *testing.T, m sandbox.Manager, opts verify.Options) *verify.Runner {
	t.Helper()
	if m == nil {
		m = newSubprocess(t)
	}
	opts.Sandbox = m
	opts.Now = fixedNow
	r, err := verify.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// writeTree creates files (path -> content) under a new temporary directory
// and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func check(name, run string, exp messages.Expectation) messages.VerificationCheck {
	return messages.VerificationCheck{Name: name, Run: run, Expect: exp, Timeout: 20}
}

func ptr[T any](v T) *T { return &v }

func exitCode(n int) messages.Expectation           { return messages.Expectation{ExitCode: &n} }
func equals(s string) messages.Expectation          { return messages.Expectation{Equals: &s} }
func contains(s string) messages.Expectation        { return messages.Expectation{Contains: &s} }
func regex(s string) messages.Expectation           { return messages.Expectation{Regex: &s} }
func outputLT(f float64) messages.Expectation       { return messages.Expectation{OutputLT: &f} }
func outputGT(f float64) messages.Expectation       { return messages.Expectation{OutputGT: &f} }
func fileExists(p string) messages.Expectation      { return messages.Expectation{FileExists: &p} }
func notEmpty() messages.Expectation                { return messages.Expectation{NotEmpty: ptr(true)} }
func noPredicate() messages.Expectation             { return messages.Expectation{NotEmpty: ptr(false)} }
func twoPredicates() messages.Expectation           { e := exitCode(0); e.Contains = ptr("x"); return e }
func hasReason(r verify.CheckResult, s string) bool { return strings.Contains(r.Reason, s) }

// runOne runs a single check and returns its result; Run must not fail.
func runOne(t *testing.T, r *verify.Runner, c messages.VerificationCheck, execDir string) verify.CheckResult {
	t.Helper()
	rep, err := r.Run(t.Context(), []messages.VerificationCheck{c}, execDir)
	if err != nil {
		t.Fatalf("run %q: %v", c.Name, err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("want 1 result, got %d", len(rep.Results))
	}
	if rep.Passed != rep.Results[0].Passed {
		t.Fatalf("report passed %v but its only check passed %v", rep.Passed, rep.Results[0].Passed)
	}
	return rep.Results[0]
}
