package executor_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/executor"
	"github.com/silas-ai/silas/sandbox/subprocess"
)

func newManager(t *testing.T) sandbox.Manager {
	t.Helper()
	m, err := subprocess.New(subprocess.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func envelope(action string, args map[string]any) *messages.ExecutionEnvelope {
	return &messages.ExecutionEnvelope{
		ExecutionID: "exec-1", StepIndex: 2, Action: action, Args: args,
		TimeoutSeconds: 30, MaxOutputBytes: 10_000, SandboxConfig: messages.DefaultSandboxConfig(),
	}
}

func TestNewRegistry(t *testing.T) {
	m := newManager(t)
	cases := []struct {
		name    string
		opts    executor.Options
		want    []string
		wantErr bool
	}{
		{"no search config", executor.Options{Sandbox: m}, []string{"python_exec", "shell_exec"}, false},
		{"valid tavily config", executor.Options{Sandbox: m, Search: executor.SearchOptions{Provider: "tavily", APIKey: "k"}},
			[]string{"python_exec", "shell_exec", "web_search"}, false},
		{"provider without key", executor.Options{Sandbox: m, Search: executor.SearchOptions{Provider: "tavily"}},
			[]string{"python_exec", "shell_exec"}, false},
		{"key without provider", executor.Options{Sandbox: m, Search: executor.SearchOptions{APIKey: "k"}},
			[]string{"python_exec", "shell_exec"}, false},
		// A configured search that cannot work is refused, not silently dropped.
		{"unknown provider", executor.Options{Sandbox: m, Search: executor.SearchOptions{Provider: "bing", APIKey: "k"}}, nil, true},
		{"bad base URL", executor.Options{Sandbox: m, Search: executor.SearchOptions{Provider: "tavily", APIKey: "k", BaseURL: "ftp://x"}}, nil, true},
		{"no sandbox", executor.Options{}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := executor.NewRegistry(tc.opts)
			if tc.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Names(); !slices.Equal(got, tc.want) {
				t.Fatalf("names %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRegistryRefusals(t *testing.T) {
	r, err := executor.NewRegistry(executor.Options{Sandbox: newManager(t)})
	if err != nil {
		t.Fatal(err)
	}
	bad := envelope("shell_exec", nil)
	bad.ExecutionID = ""
	cases := []struct {
		name string
		env  *messages.ExecutionEnvelope
		want error
	}{
		{"unknown action", envelope("web_search", map[string]any{"query": "x"}), executor.ErrUnknownAction},
		{"invalid envelope", bad, executor.ErrInvalidEnvelope},
		{"argv and command", envelope("shell_exec", map[string]any{"argv": []any{"true"}, "command": "true"}), executor.ErrInvalidArgs},
		{"neither argv nor command", envelope("shell_exec", map[string]any{}), executor.ErrInvalidArgs},
		{"argv not strings", envelope("shell_exec", map[string]any{"argv": []any{"echo", 3}}), executor.ErrInvalidArgs},
		{"python without code", envelope("python_exec", map[string]any{}), executor.ErrInvalidArgs},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.Execute(t.Context(), tc.env, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if res == nil || res.Success || res.Error == nil || *res.Error != err.Error() {
				t.Fatalf("want a failed result carrying the error, got %+v", res)
			}
		})
	}
}

func TestSandboxedExecutors(t *testing.T) {
	r, err := executor.NewRegistry(executor.Options{Sandbox: newManager(t)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name          string
		env           *messages.ExecutionEnvelope
		wantOK        bool
		wantOut       string
		wantErrText   string
		wantArtifacts []string
	}{
		{"argv list", envelope("shell_exec", map[string]any{"argv": []any{"echo", "$(touch x)", "; ls"}}), true, "$(touch x) ; ls\n", "", []string{}},
		{"command string in the sandbox", envelope("shell_exec", map[string]any{"command": "echo hi > out.txt; cat out.txt"}), true, "hi\n", "", []string{"out.txt"}},
		{"stdin", envelope("shell_exec", map[string]any{"argv": []any{"cat"}, "stdin": "fed"}), true, "fed", "", []string{}},
		{"non-zero exit", envelope("shell_exec", map[string]any{"command": "echo oops >&2; exit 3"}), false, "", "exit status 3", []string{}},
		{"python code", envelope("python_exec", map[string]any{"code": "import sys\nprint(sys.argv[1:])", "args": []any{"a b"}}), true, "['a b']\n", "", []string{}},
		{"python writes a file", envelope("python_exec", map[string]any{"code": "import os\nos.makedirs('d')\nopen('d/r.txt','w').write('x')\nprint('ok')"}), true, "ok\n", "", []string{"d/r.txt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.Execute(t.Context(), tc.env, nil)
			if tc.wantOK != (err == nil) || res.Success != tc.wantOK {
				t.Fatalf("success %v err %v, want success %v; result %+v", res.Success, err, tc.wantOK, res)
			}
			if tc.wantOK && res.ReturnValue != tc.wantOut {
				t.Fatalf("return value %q, want %q", res.ReturnValue, tc.wantOut)
			}
			if !tc.wantOK && (res.Error == nil || *res.Error != tc.wantErrText || !errors.Is(err, executor.ErrFailed)) {
				t.Fatalf("error %v / %v, want %q", res.Error, err, tc.wantErrText)
			}
			var names []string
			for k := range res.Artifacts {
				names = append(names, k)
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.wantArtifacts) && !(len(names) == 0 && len(tc.wantArtifacts) == 0) {
				t.Fatalf("artifacts %v, want %v", names, tc.wantArtifacts)
			}
			if res.Taint != messages.TaintExternal || res.ExecutionID != "exec-1" || res.StepIndex != 2 {
				t.Fatalf("taint %q id %q step %d", res.Taint, res.ExecutionID, res.StepIndex)
			}
			if err := res.Validate(); err != nil {
				t.Fatalf("result does not validate: %v", err)
			}
		})
	}
}

func TestArtifactsOnlyFromThisRun(t *testing.T) {
	m := newManager(t)
	r, err := executor.NewRegistry(executor.Options{Sandbox: m})
	if err != nil {
		t.Fatal(err)
	}
	in, err := m.Create(t.Context(), messages.DefaultSandboxConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Destroy(t.Context()) })
	if err := os.WriteFile(filepath.Join(in.WorkDir(), "old.txt"), []byte("before"), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"command": "echo one > first.txt"}, "first.txt"},
		{map[string]any{"command": "cat first.txt old.txt > second.txt"}, "second.txt"},
		{map[string]any{"command": "echo more >> first.txt"}, "first.txt"},
	}
	for i, s := range steps {
		res, err := r.Execute(t.Context(), envelope("shell_exec", s.args), in)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if len(res.Artifacts) != 1 || res.Artifacts[s.want] != filepath.Join(in.WorkDir(), s.want) {
			t.Fatalf("step %d: artifacts %v, want only %s", i, res.Artifacts, s.want)
		}
	}
	entries, err := os.ReadDir(in.WorkDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".silas-") {
			t.Fatalf("python script left behind: %s", e.Name())
		}
	}
}

func TestShellTimeout(t *testing.T) {
	r, err := executor.NewRegistry(executor.Options{Sandbox: newManager(t)})
	if err != nil {
		t.Fatal(err)
	}
	env := envelope("shell_exec", map[string]any{"argv": []any{"sleep", "600"}})
	env.TimeoutSeconds = 1
	res, err := r.Execute(t.Context(), env, nil)
	if !errors.Is(err, executor.ErrFailed) || res.Metadata["timed_out"] != true || !strings.Contains(*res.Error, "timed out") {
		t.Fatalf("want a timed-out failure, got %v %+v", err, res)
	}
}
