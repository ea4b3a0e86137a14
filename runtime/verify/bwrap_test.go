package verify_test

import (
	"os/exec"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/verify"
	"github.com/silas-ai/silas/sandbox/bwrap"
)

// TestBwrapBackend runs checks through the bubblewrap backend: the runner
// depends only on the sandbox.Manager interface, and a check there sees its
// copied artifacts but not the host's files.
func TestBwrapBackend(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not on PATH: install the Debian package bubblewrap to run the verification checks under it (CI does)")
	}
	b, err := bwrap.New(bwrap.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	hostDir := t.TempDir()
	execDir := writeTree(t, map[string]string{"result.txt": "42\n"})
	r := newRunner(t, b, verify.Options{})
	cases := []struct {
		name     string
		c        messages.VerificationCheck
		wantPass bool
	}{
		{"sees the artifacts", check("artifact", "cat result.txt", equals("42")), true},
		{"does not see the host's temp dirs", check("host", "test -e "+hostDir, exitCode(1)), true},
		{"does not see the execution dir", check("exec", "test -e "+execDir, exitCode(1)), true},
		{"the artifacts are read-only", check("write", "touch made", exitCode(0)), false},
		{"HOME is writable", check("home", `touch "$HOME/made" && ls "$HOME"`, equals("made")), true},
		{"file_exists on an artifact", check("exists", "true", fileExists("result.txt")), true},
		{"a failing predicate fails", check("wrong", "cat result.txt", equals("41")), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := runOne(t, r, tc.c, execDir); got.Passed != tc.wantPass {
				t.Fatalf("passed %v, want %v: %+v", got.Passed, tc.wantPass, got)
			}
		})
	}
}
