package bundled_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/bundled"
)

// hostPython runs the syntax check with the host's python3.
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
	return skills.RunResult{Stdout: out.Bytes(), Stderr: errb.Bytes()}, err
}

func requirePython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skipf("python3 is not installed on this host (the bundled scripts are Python): %v", err)
	}
}

// load parses a bundled skill and writes its files to a temp dir (as the
// sandbox would mount them), returning both.
func load(t *testing.T, name string) (*skills.Skill, string) {
	t.Helper()
	sub, err := fs.Sub(bundled.FS(), name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := skills.Parse(sub, name)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	for _, f := range s.Files() {
		data, _ := s.ReadFile(f.Path)
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o444); err != nil { // read-only, as mounted
			t.Fatal(err)
		}
	}
	return s, dir
}

type result struct {
	code   int
	out    map[string]any
	stdout string
	stderr string
}

// run checks args against the schema and runs the script for real, with
// work as its working directory; it fails the test if CheckArgs refuses.
func run(t *testing.T, s *skills.Skill, dir, work, script string, args map[string]any) result {
	t.Helper()
	in, err := s.CheckArgs(script, args)
	if err != nil {
		t.Fatalf("check args: %v", err)
	}
	argv := in.Argv(dir)
	cmd := exec.CommandContext(t.Context(), argv[0], argv[1:]...)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &r.out); err != nil {
		t.Fatalf("%s printed no JSON object (exit %d): %q stderr %q", script, r.code, out.String(), errb.String())
	}
	return r
}

func write(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBundledSkillsPassValidation: the shipped skills pass Silas's own
// install validation without a single finding, and every script answers
// --help (the install dry run).
func TestBundledSkillsPassValidation(t *testing.T) {
	requirePython(t)
	for _, name := range bundled.Names() {
		t.Run(name, func(t *testing.T) {
			sub, _ := fs.Sub(bundled.FS(), name)
			s, r := skills.ValidateFS(t.Context(), sub, name, skills.Options{Python: hostPython{}})
			if s == nil || !r.Passed || len(r.Findings) != 0 {
				t.Fatalf("findings: %+v", r.Findings)
			}
			_, dir := load(t, name)
			for _, in := range s.DryRuns() {
				argv := in.Argv(dir)
				cmd := exec.CommandContext(t.Context(), argv[0], argv[1:]...)
				cmd.Dir = t.TempDir()
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("dry run %v: %v\n%s", in.Args, err, out)
				}
			}
		})
	}
}

func TestRunTests(t *testing.T) {
	requirePython(t)
	s, dir := load(t, "coding")
	work := t.TempDir()
	write(t, work, "proj/calc.py", "def add(a, b):\n    return a + b\n")
	write(t, work, "proj/test_calc.py", "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_other(self):\n        self.assertTrue(True)\n")

	r := run(t, s, dir, work, "scripts/run_tests.py", map[string]any{"path": "proj", "framework": "unittest"})
	if r.code != 0 || r.out["passed"] != true || r.out["framework"] != "unittest" {
		t.Fatalf("passing tests: %+v", r)
	}
	if c := r.out["counts"].(map[string]any); c["ran"] != float64(2) || c["failures"] != float64(0) {
		t.Fatalf("counts %v", c)
	}
	r = run(t, s, dir, work, "scripts/run_tests.py", map[string]any{"path": "proj", "framework": "unittest", "marker": "test_add"})
	if c := r.out["counts"].(map[string]any); r.code != 0 || c["ran"] != float64(1) {
		t.Fatalf("marker: %+v", r)
	}

	write(t, work, "proj/calc.py", "def add(a, b):\n    return a - b\n")
	r = run(t, s, dir, work, "scripts/run_tests.py", map[string]any{"path": "proj"})
	if r.code != 1 || r.out["passed"] != false || !strings.Contains(r.out["output_tail"].(string), "AssertionError") {
		t.Fatalf("failing tests: %+v", r)
	}

	// From the work dir, unittest discovers nothing in proj/ (no package):
	// zero tests is reported as a failure, never as a pass.
	r = run(t, s, dir, work, "scripts/run_tests.py", map[string]any{"path": "."})
	if r.code != 1 || r.out["passed"] != false || r.out["ran_nothing"] != true {
		t.Fatalf("no tests ran: %+v", r)
	}
	empty := t.TempDir()
	r = run(t, s, dir, empty, "scripts/run_tests.py", map[string]any{})
	if r.code != 2 || !strings.Contains(r.out["error"].(string), "no tests found") {
		t.Fatalf("no tests: %+v", r)
	}
	// A symlink out of the work dir is refused by the script itself.
	if err := os.Symlink("/", filepath.Join(work, "escape")); err != nil {
		t.Fatal(err)
	}
	r = run(t, s, dir, work, "scripts/run_tests.py", map[string]any{"path": "escape/tmp"})
	if r.code != 2 || !strings.Contains(r.out["error"].(string), "leaves the work dir") {
		t.Fatalf("symlink escape: %+v", r)
	}
	for _, bad := range []map[string]any{{"path": "../x"}, {"marker": "-x"}, {"framework": "make"}, {"timeout_seconds": float64(0)}} {
		if _, err := s.CheckArgs("scripts/run_tests.py", bad); !errors.Is(err, skills.ErrBadArgs) {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

const patch = `diff --git a/src/app.py b/src/app.py
--- a/src/app.py
+++ b/src/app.py
@@ -1,4 +1,4 @@
 def greet(name):
-    return "hello " + name
+    return "Hello, " + name + "!"
 
 
@@ -8,3 +8,4 @@
 def main():
     print(greet("world"))
+    print(greet("silas"))
 
--- /dev/null
+++ b/docs/NEW.md
@@ -0,0 +1,2 @@
+# New
+added by the patch
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-obsolete
-file
`

const app = "def greet(name):\n    return \"hello \" + name\n\n\n# a comment\n\n\ndef main():\n    print(greet(\"world\"))\n\n"

func TestApplyPatch(t *testing.T) {
	requirePython(t)
	s, dir := load(t, "coding")
	work := t.TempDir()
	write(t, work, "src/app.py", app)
	write(t, work, "old.txt", "obsolete\nfile\n")
	write(t, work, "change.diff", patch)

	r := run(t, s, dir, work, "scripts/apply_patch.py", map[string]any{"patch_file": "change.diff", "check": true})
	if r.code != 0 || r.out["applied"] != false || r.out["check"] != true || len(r.out["files"].([]any)) != 3 {
		t.Fatalf("check: %+v", r)
	}
	if read(t, work, "src/app.py") != app {
		t.Fatal("check mode wrote a file")
	}
	r = run(t, s, dir, work, "scripts/apply_patch.py", map[string]any{"patch": patch})
	if r.code != 0 || r.out["applied"] != true {
		t.Fatalf("apply: %+v", r)
	}
	if got := read(t, work, "src/app.py"); !strings.Contains(got, `"Hello, " + name + "!"`) || !strings.Contains(got, `greet("silas")`) {
		t.Fatalf("patched file:\n%s", got)
	}
	if read(t, work, "docs/NEW.md") != "# New\nadded by the patch\n" {
		t.Fatal("new file not created")
	}
	if _, err := os.Stat(filepath.Join(work, "old.txt")); !os.IsNotExist(err) {
		t.Fatalf("deleted file still there: %v", err)
	}

	// Applying again does not match: nothing is written, not even the files
	// whose hunks would apply.
	write(t, work, "old.txt", "obsolete\nfile\n")
	r = run(t, s, dir, work, "scripts/apply_patch.py", map[string]any{"patch": patch})
	if r.code != 1 || r.out["applied"] != false || !strings.Contains(r.out["error"].(string), "does not match") {
		t.Fatalf("reapply: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(work, "old.txt")); err != nil {
		t.Fatal("a failed patch deleted a file")
	}

	escape := "--- a/x.txt\n+++ b/../../etc/evil\n@@ -0,0 +1 @@\n+x\n"
	write(t, work, "x.txt", "")
	r = run(t, s, dir, work, "scripts/apply_patch.py", map[string]any{"patch": escape})
	if r.code != 1 || !strings.Contains(r.out["error"].(string), "leaves the work dir") {
		t.Fatalf("escaping path: %+v", r)
	}
	r = run(t, s, dir, work, "scripts/apply_patch.py", map[string]any{})
	if r.code != 2 {
		t.Fatalf("no patch: %+v", r)
	}
}

func TestSummarizeDiff(t *testing.T) {
	requirePython(t)
	s, dir := load(t, "coding")
	work := t.TempDir()
	r := run(t, s, dir, work, "scripts/summarize_diff.py", map[string]any{"diff": patch})
	if r.code != 0 || r.out["summary"] != "3 files changed, 4 insertions(+), 3 deletions(-)" {
		t.Fatalf("summary: %+v", r)
	}
	files := r.out["files"].([]any)
	first := files[0].(map[string]any)
	if first["path"] != "src/app.py" || first["status"] != "modified" || first["hunks"] != float64(2) {
		t.Fatalf("files %v", files)
	}

	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("git is not installed; the git_ref mode was not exercised: %v", err)
	}
	repo := filepath.Join(work, "repo")
	write(t, repo, "a.txt", "one\ntwo\n")
	gitRun := func(args ...string) {
		cmd := exec.CommandContext(t.Context(), "git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitRun("init", "-q")
	gitRun("add", "a.txt")
	gitRun("commit", "-q", "-m", "init")
	write(t, repo, "a.txt", "one\n2\nthree\n")
	r = run(t, s, dir, work, "scripts/summarize_diff.py", map[string]any{"git_ref": "HEAD", "path": "repo"})
	if r.code != 0 || r.out["summary"] != "1 file changed, 2 insertions(+), 1 deletion(-)" {
		t.Fatalf("git summary: %+v", r)
	}
	if _, err := s.CheckArgs("scripts/summarize_diff.py", map[string]any{"git_ref": "--output=/tmp/x"}); !errors.Is(err, skills.ErrBadArgs) {
		t.Fatalf("option injection into git: %v", err)
	}
}

// TestSkillMakerBuildsAValidSkill: skill-maker writes a staged skill that
// passes Silas's install validation, and the new skill's script runs.
func TestSkillMakerBuildsAValidSkill(t *testing.T) {
	requirePython(t)
	s, dir := load(t, "skill-maker")
	work := t.TempDir()
	write(t, work, "draft.json", read(t, dir, "assets/draft-example.json"))

	r := run(t, s, dir, work, "scripts/create_skill.py", map[string]any{"name": "word-count", "spec_file": "draft.json"})
	if r.code != 0 || r.out["dir"] != "staging/word-count" {
		t.Fatalf("create: %+v", r)
	}
	staged := filepath.Join(work, "staging", "word-count")
	made, report := skills.ValidateDir(t.Context(), staged, skills.Options{Python: hostPython{}})
	if made == nil || !report.Passed || len(report.Findings) != 0 {
		t.Fatalf("the made skill fails validation: %+v", report.Findings)
	}
	if got := len(r.out["files"].([]any)); got != len(made.Files()) {
		t.Fatalf("create reported %d files, the skill has %d", got, len(made.Files()))
	}
	write(t, work, "notes.txt", "three little words")
	in, err := made.CheckArgs("scripts/count.py", map[string]any{"path": "notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	argv := in.Argv(staged)
	cmd := exec.CommandContext(t.Context(), argv[0], argv[1:]...)
	cmd.Dir = work
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"words": 3`) {
		t.Fatalf("made skill run: %v %s", err, out)
	}

	r = run(t, s, dir, work, "scripts/check_skill.py", map[string]any{"path": "staging/word-count"})
	if r.code != 0 || r.out["ok"] != true {
		t.Fatalf("check: %+v", r)
	}
	r = run(t, s, dir, work, "scripts/create_skill.py", map[string]any{"name": "word-count", "spec_file": "draft.json"})
	if r.code != 2 || !strings.Contains(r.out["error"].(string), "already exists") {
		t.Fatalf("second create: %+v", r)
	}
	r = run(t, s, dir, work, "scripts/create_skill.py", map[string]any{"name": "word-count", "spec_file": "draft.json", "overwrite": true})
	if r.code != 0 {
		t.Fatalf("overwrite: %+v", r)
	}
}

func TestSkillMakerRefusesBadDrafts(t *testing.T) {
	requirePython(t)
	s, dir := load(t, "skill-maker")
	work := t.TempDir()
	var draft map[string]any
	if err := json.Unmarshal([]byte(read(t, dir, "assets/draft-example.json")), &draft); err != nil {
		t.Fatal(err)
	}
	draft["description"] = "1. Open the file. 2. Count the words. 3. Print them."
	draft["scripts"] = map[string]any{
		"scripts/count.py": "import os\nTOKEN = \"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"\nos.system('wc -w ' + os.environ['FILE'])\n",
		"../escape.py":     "print(1)\n",
	}
	b, _ := json.Marshal(draft)
	write(t, work, "bad.json", string(b))
	r := run(t, s, dir, work, "scripts/create_skill.py", map[string]any{"name": "word-count", "spec_file": "bad.json"})
	if r.code != 1 || r.out["written"] != false {
		t.Fatalf("bad draft: %+v", r)
	}
	probs, _ := json.Marshal(r.out["problems"])
	for _, want := range []string{"reads as a procedure", "runs a shell command string", "environment variable FILE", "hardcoded credential", "../escape.py must be a relative path"} {
		if !strings.Contains(string(probs), want) {
			t.Errorf("problems lack %q: %s", want, probs)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "staging")); !os.IsNotExist(err) {
		t.Fatal("a refused draft was written")
	}
	for _, bad := range []map[string]any{{"name": "Bad_Name", "spec_file": "x"}, {"name": "ok", "spec_file": "../x"}} {
		if _, err := s.CheckArgs("scripts/create_skill.py", bad); !errors.Is(err, skills.ErrBadArgs) {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
