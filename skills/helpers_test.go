package skills_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/silas-ai/silas/skills"
)

// hostPython is a Runner that starts python3 on the host. Tests use it to
// check that validation reads real interpreter output; the daemon uses
// skills.SandboxRunner (see sandbox_test.go for that path).
type hostPython struct{}

func (hostPython) Run(ctx context.Context, argv []string, stdin []byte) (skills.RunResult, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return skills.RunResult{ExitCode: ee.ExitCode(), Stdout: out.Bytes(), Stderr: errb.Bytes()}, nil
	}
	if err != nil {
		return skills.RunResult{}, err
	}
	return skills.RunResult{Stdout: out.Bytes(), Stderr: errb.Bytes()}, nil
}

// requirePython skips when the host has no python3; the skill scripts and
// the syntax check need one.
func requirePython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skipf("python3 is not installed on this host (needed to run skill scripts): %v", err)
	}
}

// skillMD is the baseline SKILL.md of the demo skill; tests replace parts.
const skillMD = `---
name: demo
description: Use when the user asks to count the words of a text file in the work dir.
activation: auto
requirements:
  env: [DEMO_REF]
script_args:
  scripts/count.py:
    path: {type: string, max_length: 300, format: path}
---

# Demo

## When to use
Use this to count words. Run ` + "`scripts/count.py`" + ` with a path.
See [the notes](references/notes.md).
`

// countPy is the baseline script.
const countPy = `import argparse
import json
import os
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--path", required=True)
    a = p.parse_args()
    ref = os.environ.get("DEMO_REF", "")
    with open(a.path, encoding="utf-8") as f:
        print(json.dumps({"words": len(f.read().split()), "ref_set": bool(ref)}))


if __name__ == "__main__":
    main()
`

// demoFS returns the valid demo skill.
func demoFS() fstest.MapFS {
	return fstest.MapFS{
		"SKILL.md":            {Data: []byte(skillMD)},
		"scripts/count.py":    {Data: []byte(countPy)},
		"references/notes.md": {Data: []byte("# Notes\nNothing secret.\n")},
	}
}

// withFile returns fsys with path set to data.
func withFile(fsys fstest.MapFS, path, data string) fstest.MapFS {
	fsys[path] = &fstest.MapFile{Data: []byte(data)}
	return fsys
}

// replaceInSkill returns the demo skill with old replaced by new in SKILL.md.
func replaceInSkill(t *testing.T, old, new string) fstest.MapFS {
	t.Helper()
	if !strings.Contains(skillMD, old) {
		t.Fatalf("fixture: %q not in SKILL.md", old)
	}
	return withFile(demoFS(), "SKILL.md", strings.Replace(skillMD, old, new, 1))
}

// writeTree writes fsys under dir.
func writeTree(t *testing.T, dir string, fsys fstest.MapFS) {
	t.Helper()
	for p, f := range fsys {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fakePython is a Runner double: it answers the syntax check with a fixed
// reply (or error) and records the calls.
type fakePython struct {
	reply string
	exit  int
	err   error
	calls int
}

func (f *fakePython) Run(_ context.Context, argv []string, stdin []byte) (skills.RunResult, error) {
	f.calls++
	if f.err != nil {
		return skills.RunResult{}, f.err
	}
	return skills.RunResult{ExitCode: f.exit, Stdout: []byte(f.reply)}, nil
}

func okPython() *fakePython { return &fakePython{reply: `{"version":"3.test","errors":[]}`} }

// scriptRun is what a skill script did.
type scriptRun struct {
	code           int
	stdout, stderr string
}

// runScript runs a checked invocation for real: python3 with the argv
// CheckArgs produced, the skill at skillDir, work as the working directory.
func runScript(t *testing.T, skillDir, work string, in skills.Invocation) scriptRun {
	t.Helper()
	argv := in.Argv(skillDir)
	cmd := exec.CommandContext(t.Context(), argv[0], argv[1:]...)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %v: %v", argv, err)
	}
	return scriptRun{code: code, stdout: out.String(), stderr: errb.String()}
}
