package verify_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/verify"
	"github.com/silas-ai/silas/sandbox"
)

func TestExpectations(t *testing.T) {
	cases := []struct {
		name       string
		run        string
		expect     messages.Expectation
		wantPass   bool
		wantReason string
	}{
		{"exit_code matches", "exit 3", exitCode(3), true, "exit code 3 as expected"},
		{"exit_code differs", "exit 1", exitCode(0), false, "exit code 1, expected 0"},
		{"equals drops one trailing newline", "echo hello", equals("hello"), true, "equals"},
		{"equals ignores a non-zero exit", `printf 'x\n' > "$HOME/f"; grep -c teh "$HOME/f"`, equals("0"), true, "equals"},
		{"equals is case sensitive", "echo hello", equals("Hello"), false, `output "hello", expected "Hello"`},
		{"equals keeps leading whitespace", "echo ' hello'", equals("hello"), false, "expected"},
		{"equals drops only one newline", `printf 'x\n\n'`, equals("x"), false, "expected"},
		{"contains finds a substring", "echo 'all 12 tests passed'", contains("tests passed"), true, "contains"},
		{"contains misses", "echo '3 tests failed'", contains("tests passed"), false, `does not contain "tests passed"`},
		{"regex searches unanchored", "echo 'build v1.2.3 ok'", regex(`v\d+\.\d+\.\d+`), true, "matches"},
		{"regex $ before the final newline", "echo 'version 1.2.3'", regex(`^version \d+\.\d+\.\d+$`), true, "matches"},
		{"regex does not match", "echo 'version x'", regex(`^version \d+$`), false, "does not match"},
		{"invalid regex fails", "echo '('", regex(`(`), false, "invalid check"},
		{"output_lt below", "echo 3.5", outputLT(4), true, "3.5 < 4"},
		{"output_lt equal is not less", "echo 4", outputLT(4), false, "not less than 4"},
		{"output_lt unparsable", "echo abc", outputLT(4), false, `"abc" is not a finite number`},
		{"output_lt NaN", "echo NaN", outputLT(4), false, "not a finite number"},
		{"output_gt above with spaces", "echo '  42 '", outputGT(41.5), true, "42 > 41.5"},
		{"output_gt equal is not greater", "echo 1", outputGT(1), false, "not greater than 1"},
		{"output_gt empty", "true", outputGT(0), false, `"" is not a finite number`},
		{"file_exists missing", "true", fileExists("absent.txt"), false, `"absent.txt" does not exist`},
		{"not_empty with output", "echo x", notEmpty(), true, "not empty"},
		{"not_empty with only whitespace", `printf '  \n\t'`, notEmpty(), false, "output is empty"},
		{"not_empty with nothing", "true", notEmpty(), false, "output is empty"},
		{"no predicate is invalid, not a pass", "true", noPredicate(), false, "invalid check"},
		{"two predicates are invalid", "true", twoPredicates(), false, "invalid check"},
		{"a signal fails whatever the predicate", "echo hi; kill -KILL $$", contains("hi"), false, "killed by SIGKILL"},
	}
	checks := make([]messages.VerificationCheck, len(cases))
	for i, tc := range cases {
		checks[i] = check(tc.name, tc.run, tc.expect)
	}
	rep, err := newRunner(t, nil, verify.Options{}).Run(t.Context(), checks, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(cases) {
		t.Fatalf("got %d results for %d checks", len(rep.Results), len(cases))
	}
	if rep.Passed {
		t.Fatal("the report passed although some checks failed")
	}
	if !rep.Timestamp.Equal(fixedNow()) {
		t.Fatalf("timestamp %v, want the runner's clock %v", rep.Timestamp, fixedNow())
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := rep.Results[i]
			if got.Name != tc.name || got.Passed != tc.wantPass || !hasReason(got, tc.wantReason) {
				t.Fatalf("got %+v; want passed=%v with a reason containing %q", got, tc.wantPass, tc.wantReason)
			}
		})
	}
}

func TestAllPassedAndDefaultTimeout(t *testing.T) {
	ok := check("ok", "echo ok", equals("ok"))
	ok.Timeout = 0 // a Go literal without a timeout gets the default of 60 s
	r := newRunner(t, nil, verify.Options{})
	cases := []struct {
		name   string
		checks []messages.VerificationCheck
		want   bool
	}{
		{"no checks", nil, true},
		{"one passing check with timeout 0", []messages.VerificationCheck{ok}, true},
		{"a failing check after a passing one", []messages.VerificationCheck{ok, check("bad", "exit 2", exitCode(0))}, false},
		{"a negative timeout is invalid", []messages.VerificationCheck{{Name: "neg", Run: "true", Expect: exitCode(0), Timeout: -1}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := r.Run(t.Context(), tc.checks, "")
			if err != nil {
				t.Fatal(err)
			}
			if rep.Passed != tc.want || len(rep.Results) != len(tc.checks) {
				t.Fatalf("passed %v with %d results, want %v with %d: %+v", rep.Passed, len(rep.Results), tc.want, len(tc.checks), rep.Results)
			}
		})
	}
}

func TestEnvironmentIsMinimal(t *testing.T) {
	t.Setenv("SILAS_VERIFY_SECRET", "server-only")
	r := newRunner(t, nil, verify.Options{})
	exec := writeTree(t, map[string]string{"result.txt": "42\n"})
	cases := []struct {
		name string
		tool string
		c    messages.VerificationCheck
	}{
		// dash exports PWD itself; everything else must be PATH, HOME and
		// the variables that keep tools from loading code by themselves.
		{"only PATH, HOME and the hardening", "", check("env", `env | cut -d= -f1 | grep -vx PWD | sort | paste -sd, -`, equals(
			"GIT_CEILING_DIRECTORIES,GIT_CONFIG_COUNT,GIT_CONFIG_GLOBAL,GIT_CONFIG_KEY_0,GIT_CONFIG_KEY_1,GIT_CONFIG_KEY_2,GIT_CONFIG_KEY_3,"+
				"GIT_CONFIG_NOSYSTEM,GIT_CONFIG_VALUE_0,GIT_CONFIG_VALUE_1,GIT_CONFIG_VALUE_2,GIT_CONFIG_VALUE_3,HOME,PATH,"+
				"PYTHONDONTWRITEBYTECODE,PYTHONNOUSERSITE,PYTHONSAFEPATH"))},
		{"PATH is the spec's", "", check("path", `echo "$PATH"`, equals(sandbox.DefaultPath))},
		{"the working directory holds the artifacts", "", check("cwd", `cat result.txt`, equals("42"))},
		{"HOME is an empty directory that is not the artifacts", "", check("home",
			`[ "$HOME" != "$(pwd -P)" ] && [ -d "$HOME" ] && [ -z "$(ls -A "$HOME")" ] && [ ! -e "$HOME/result.txt" ]`, exitCode(0))},
		{"no server secret", "", check("secret", `printenv SILAS_VERIFY_SECRET`, exitCode(1))},
		{"python keeps the working directory off sys.path", "python3", check("python",
			`python3 -c 'import sys; print(sys.flags.safe_path, sys.flags.no_user_site, sys.dont_write_bytecode, "" in sys.path)'`,
			equals("True 1 True False"))},
		{"git ignores repository hooks and monitors", "git", check("git",
			`git config --get core.fsmonitor; git config --get core.hooksPath; git config --get safe.bareRepository; [ "$(git config --get safe.directory)" = "$PWD" ] && echo trusted`,
			equals("false\n/dev/null\nexplicit\ntrusted"))},
		{"git finds no repository above the artifacts", "git", check("ceiling", `git rev-parse --git-dir`, exitCode(128))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.tool != "" {
				needTool(t, tc.tool)
			}
			if got := runOne(t, r, tc.c, exec); !got.Passed {
				t.Fatalf("%+v", got)
			}
		})
	}
}

func TestNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	run := `python3 -c "import socket; socket.create_connection(('127.0.0.1', ` + port + `), timeout=5).close(); print('connected')"`
	r := newRunner(t, nil, verify.Options{})
	cases := []struct {
		name     string
		network  bool
		wantPass bool
	}{
		{"without network the host's loopback is unreachable", false, false},
		{"with network: true it is reachable", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := check("connect", run, contains("connected"))
			c.Network = tc.network
			if got := runOne(t, r, c, ""); got.Passed != tc.wantPass {
				t.Fatalf("passed %v, want %v: %+v", got.Passed, tc.wantPass, got)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	c := check("slow", "echo started; sleep 30", contains("started"))
	c.Timeout = 1
	got := runOne(t, newRunner(t, nil, verify.Options{}), c, "")
	if got.Passed || !got.TimedOut || got.Reason != "Timeout after 1s" || got.Output != "started\n" {
		t.Fatalf("want a failed, timed-out result with reason %q and the output so far, got %+v", "Timeout after 1s", got)
	}
	if got.Duration <= 0 {
		t.Fatalf("duration %v, want the wall time", got.Duration)
	}
}

func TestFileExistsConfinement(t *testing.T) {
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "report.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(project, "escape")); err != nil {
		t.Fatal(err)
	}
	exec := writeTree(t, map[string]string{"result.txt": "42\n"})
	for link, target := range map[string]string{"passwd-link": "/etc/passwd", "etcdir": "/etc", "dangling": "nowhere"} {
		if err := os.Symlink(target, filepath.Join(exec, link)); err != nil {
			t.Fatal(err)
		}
	}
	r := newRunner(t, nil, verify.Options{ProjectDirs: []string{project}})
	cases := []struct {
		name       string
		run        string
		path       string
		wantPass   bool
		wantReason string
	}{
		{"an artifact by relative path", "true", "result.txt", true, "exists"},
		{"a file in a project dir by absolute path", "true", filepath.Join(project, "report.md"), true, "exists"},
		{"dot-dot", "true", "../etc/passwd", false, `".." components are not allowed`},
		{"dot-dot inside", "true", "a/../result.txt", false, `".." components are not allowed`},
		{"an absolute path outside", "true", "/etc/passwd", false, "outside the allowed directories"},
		{"home relative", "true", "~/.ssh/id_ed25519", false, "home-relative paths are not allowed"},
		{"a symlink to /etc/passwd left by the agent", "true", "passwd-link", false, "resolves outside"},
		{"a symlinked directory on the path", "true", "etcdir/passwd", false, "resolves outside"},
		{"a dangling symlink", "true", "dangling", false, "does not exist"},
		{"a symlink in a project dir", "true", filepath.Join(project, "escape"), false, "resolves outside"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := runOne(t, r, check(tc.name, tc.run, fileExists(tc.path)), exec)
			if got.Passed != tc.wantPass || !hasReason(got, tc.wantReason) {
				t.Fatalf("got %+v; want passed=%v with a reason containing %q", got, tc.wantPass, tc.wantReason)
			}
		})
	}
}

func TestOutputTruncation(t *testing.T) {
	r := newRunner(t, nil, verify.Options{})
	cases := []struct {
		name      string
		run       string
		wantChars int
		wantRune  rune
	}{
		{"shorter than the limit", "head -c 999 /dev/zero | tr '\\0' a", 999, 'a'},
		{"exactly the limit", "head -c 1000 /dev/zero | tr '\\0' a", 1000, 'a'},
		{"past the limit", "head -c 5000 /dev/zero | tr '\\0' a", 1000, 'a'},
		{"characters, not bytes", `i=0; while [ $i -lt 1500 ]; do printf 'é'; i=$((i+1)); done`, 1000, 'é'},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := runOne(t, r, check(tc.name, tc.run, notEmpty()), "")
			if !got.Passed || !utf8.ValidString(got.Output) || utf8.RuneCountInString(got.Output) != tc.wantChars ||
				strings.Trim(got.Output, string(tc.wantRune)) != "" {
				t.Fatalf("passed %v, output of %d characters (%d bytes), want %d characters of %q",
					got.Passed, utf8.RuneCountInString(got.Output), len(got.Output), tc.wantChars, tc.wantRune)
			}
		})
	}
}

func TestCaptureLimit(t *testing.T) {
	r := newRunner(t, nil, verify.Options{MaxOutputBytes: 100})
	long := "head -c 300 /dev/zero | tr '\\0' a; echo tail"
	cases := []struct {
		name       string
		c          messages.VerificationCheck
		wantPass   bool
		wantReason string
	}{
		{"equals cannot be judged on a prefix", check("eq", long, equals(strings.Repeat("a", 100))), false, "capture limit"},
		{"regex cannot be judged on a prefix", check("re", long, regex(`^a+$`)), false, "capture limit"},
		{"a number cannot be judged on a prefix", check("lt", "head -c 300 /dev/zero | tr '\\0' 1", outputGT(0)), false, "capture limit"},
		{"contains found in the prefix passes", check("in", long, contains("aaaa")), true, "contains"},
		{"contains past the prefix fails", check("past", long, contains("tail")), false, "capture limit"},
		{"not_empty passes", check("ne", long, notEmpty()), true, "not empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := runOne(t, r, tc.c, "")
			if got.Passed != tc.wantPass || !hasReason(got, tc.wantReason) {
				t.Fatalf("got %+v; want passed=%v with a reason containing %q", got, tc.wantPass, tc.wantReason)
			}
		})
	}
}

func TestArtifacts(t *testing.T) {
	exec := writeTree(t, map[string]string{
		"result.txt": "42\n", "sub/data.txt": "nested\n", "run.sh": "#!/bin/sh\necho script ran\n",
		"node_modules/pkg/index.js": "", "sub/nested/node_modules/pkg/index.js": "",
		".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n\tfsmonitor = evil\n", ".git/hooks/pre-commit": "",
		".git/refs/heads/config": "", ".git/modules/m/HEAD": "", ".git/modules/m/config": "", ".git/modules/m/hooks/x": "",
		".git/modules/m/commondir": "", ".git/config.worktree": "", "sub/nested/.git": "gitdir: /elsewhere\n",
	})
	if err := os.Chmod(filepath.Join(exec, "run.sh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(exec, "result.txt"), filepath.Join(exec, "sub", "abs-link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(exec, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	checks := []messages.VerificationCheck{
		check("sees the execution's file", "cat result.txt", equals("42")),
		check("sees nested files", "cat sub/data.txt", equals("nested")),
		check("scripts stay executable", "./run.sh", equals("script ran")),
		check("absolute links into the exec dir are made relative", "readlink sub/abs-link", equals("../result.txt")),
		check("FIFOs are left out", "test -e pipe", exitCode(1)),
		check("the copy is read-only", "stat -c %a result.txt run.sh sub . | paste -sd, -", equals("444,555,555,555")),
		check("node_modules and git's config, hooks and links are left out", "find . | sort | paste -sd, -", equals(
			".,./.git,./.git/HEAD,./.git/modules,./.git/modules/m,./.git/modules/m/HEAD,./.git/refs,./.git/refs/heads,"+
				"./.git/refs/heads/config,./result.txt,./run.sh,./sub,./sub/abs-link,./sub/data.txt,./sub/nested")),
	}
	rep, err := newRunner(t, nil, verify.Options{}).Run(t.Context(), checks, exec)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range checks {
		t.Run(c.Name, func(t *testing.T) {
			if !rep.Results[i].Passed {
				t.Fatalf("%+v", rep.Results[i])
			}
		})
	}
	if !rep.Passed {
		t.Fatal("every check passed but the report did not")
	}
	b, err := os.ReadFile(filepath.Join(exec, "result.txt"))
	if err != nil || string(b) != "42\n" {
		t.Fatalf("the execution dir's file changed: %q, %v", b, err)
	}
}

func TestArtifactLimits(t *testing.T) {
	exec := writeTree(t, map[string]string{"a.txt": strings.Repeat("x", 100), "b.txt": "y", "c.txt": "z"})
	cases := []struct {
		name string
		opts verify.Options
		want string
	}{
		{"too many bytes", verify.Options{MaxArtifactBytes: 50}, "more than 50 bytes"},
		{"too many files", verify.Options{MaxArtifactFiles: 2}, "more than 2 files"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, nil, tc.opts)
			checks := []messages.VerificationCheck{check("one", "true", exitCode(0)), check("two", "true", exitCode(0))}
			rep, err := r.Run(t.Context(), checks, exec)
			if err != nil {
				t.Fatalf("oversized artifacts are a failed verdict, not an error: %v", err)
			}
			if rep.Passed || len(rep.Results) != 2 {
				t.Fatalf("want two failed results, got %+v", rep)
			}
			for _, res := range rep.Results {
				if res.Passed || !hasReason(res, tc.want) || !hasReason(res, "not run") {
					t.Fatalf("got %+v, want a failure naming %q", res, tc.want)
				}
			}
		})
	}
	t.Run("within the limits", func(t *testing.T) {
		r := newRunner(t, nil, verify.Options{MaxArtifactBytes: 102, MaxArtifactFiles: 3})
		if got := runOne(t, r, check("fits", "cat a.txt b.txt c.txt | wc -c", equals("102")), exec); !got.Passed {
			t.Fatalf("%+v", got)
		}
	})
}

func TestRunErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	r := newRunner(t, nil, verify.Options{})
	checks := []messages.VerificationCheck{check("ok", "true", exitCode(0))}
	cases := []struct {
		name    string
		ctx     context.Context
		execDir string
		want    error
	}{
		{"relative exec dir", t.Context(), "work", verify.ErrExecDir},
		{"missing exec dir", t.Context(), filepath.Join(t.TempDir(), "gone"), verify.ErrExecDir},
		{"exec dir is a file", t.Context(), file, verify.ErrExecDir},
		{"cancelled context", cancelled, "", context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := r.Run(tc.ctx, checks, tc.execDir)
			if !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			if rep.Passed {
				t.Fatal("a report with an error must not pass")
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	m := newSubprocess(t)
	cases := []struct {
		name string
		opts verify.Options
	}{
		{"no sandbox", verify.Options{}},
		{"relative project dir", verify.Options{Sandbox: m, ProjectDirs: []string{"projects"}}},
		{"negative limit", verify.Options{Sandbox: m, MaxOutputBytes: -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := verify.New(tc.opts); !errors.Is(err, verify.ErrInvalidOptions) {
				t.Fatalf("want ErrInvalidOptions, got %v", err)
			}
		})
	}
}

// flakyManager wraps a real backend: Create fails from the createFailAt-th
// call on (1-based, 0 never), and every Run of an instance fails with runErr
// when it is set.
type flakyManager struct {
	sandbox.Manager
	createFailAt int
	creates      int
	runErr       error
}

func (m *flakyManager) Create(ctx context.Context, cfg messages.SandboxConfig) (sandbox.Instance, error) {
	m.creates++
	if m.createFailAt > 0 && m.creates >= m.createFailAt {
		return nil, fmt.Errorf("%w: test backend gone", sandbox.ErrBackendUnavailable)
	}
	in, err := m.Manager.Create(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return failingInstance{Instance: in, err: m.runErr}, nil
}

type failingInstance struct {
	sandbox.Instance
	err error
}

func (in failingInstance) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	if in.err != nil {
		return sandbox.Result{}, in.err
	}
	return in.Instance.Run(ctx, cmd)
}

func TestSandboxUnavailable(t *testing.T) {
	netErr := fmt.Errorf("%w: no namespaces here", sandbox.ErrNetworkIsolationUnavailable)
	cases := []struct {
		name        string
		m           *flakyManager
		wantResults int
		wantErr     error
	}{
		// Each check creates two instances: its artifacts and its own.
		{"backend fails on the second check", &flakyManager{createFailAt: 3}, 2, sandbox.ErrBackendUnavailable},
		{"network isolation unavailable fails closed", &flakyManager{runErr: netErr}, 1, sandbox.ErrNetworkIsolationUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.m.Manager = newSubprocess(t)
			r := newRunner(t, tc.m, verify.Options{})
			checks := []messages.VerificationCheck{
				check("first", "true", exitCode(0)), check("second", "true", exitCode(0)), check("third", "true", exitCode(0)),
			}
			rep, err := r.Run(t.Context(), checks, "")
			if !errors.Is(err, verify.ErrUnavailable) || !errors.Is(err, tc.wantErr) {
				t.Fatalf("want ErrUnavailable wrapping %v, got %v", tc.wantErr, err)
			}
			if rep.Passed || len(rep.Results) != tc.wantResults {
				t.Fatalf("want a failed report of %d results, got %+v", tc.wantResults, rep)
			}
			last := rep.Results[len(rep.Results)-1]
			if last.Passed || !hasReason(last, "not run") {
				t.Fatalf("the check that could not run: %+v", last)
			}
		})
	}
}
