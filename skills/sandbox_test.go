package skills_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/bwrap"
	"github.com/silas-ai/silas/sandbox/namespaces"
	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/bundled"
)

// isolatingBackend returns the namespaces backend, or bwrap when the host
// cannot run it; it skips (saying why) when neither can run here, since
// both refuse rather than run with less isolation.
func isolatingBackend(t *testing.T) sandbox.Manager {
	t.Helper()
	root := filepath.Join(t.TempDir(), "work")
	ns, err := namespaces.New(namespaces.Options{Root: root})
	if err == nil {
		if err = ns.Probe(t.Context()); err == nil {
			return ns
		}
	}
	nsErr := err
	bw, err := bwrap.New(bwrap.Options{Root: root})
	if err == nil {
		if err = bw.Probe(t.Context()); err == nil {
			return bw
		}
	}
	if errors.Is(nsErr, sandbox.ErrBackendUnavailable) && errors.Is(err, sandbox.ErrBackendUnavailable) {
		t.Skipf("no isolating sandbox backend runs on this host (both refuse, fail closed): namespaces: %v; bwrap: %v", nsErr, err)
	}
	t.Fatalf("sandbox backends: namespaces: %v; bwrap: %v", nsErr, err)
	return nil
}

// TestValidateInRealSandbox runs the Python syntax check and the install
// dry runs in a real isolating sandbox, as the daemon does.
func TestValidateInRealSandbox(t *testing.T) {
	m := isolatingBackend(t)
	run := skills.SandboxRunner{Manager: m}

	_, r := skills.ValidateFS(t.Context(), demoFS(), "demo", skills.Options{Python: run})
	if !r.Passed || r.PythonVersion == "" {
		t.Fatalf("valid skill in the sandbox: %+v", r)
	}
	bad := withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, "    a = p.parse_args()", "    a = p.parse_args(", 1))
	_, r = skills.ValidateFS(t.Context(), bad, "demo", skills.Options{Python: run})
	e := r.Errors()
	if r.Passed || len(e) != 1 || e[0].Rule != skills.RulePythonSyntax || e[0].File != "scripts/count.py" || e[0].Line != 10 {
		t.Fatalf("syntax error in the sandbox: %+v", r.Findings)
	}

	// Dry runs: every bundled script answers --help with its skill
	// directory mounted read-only.
	for _, name := range bundled.Names() {
		sub, _ := fs.Sub(bundled.FS(), name)
		s, err := skills.Parse(sub, name)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), name)
		for _, f := range s.Files() {
			data, _ := s.ReadFile(f.Path)
			writeTree(t, dir, fstest.MapFS{f.Path: {Data: data}})
		}
		dry := skills.SandboxRunner{Manager: m, ReadOnly: []string{dir}}
		for _, in := range s.DryRuns() {
			res, err := dry.Run(t.Context(), in.Argv(dir), nil)
			help := len(in.Args) == 1 && in.Args[0] == "--help" // example runs print their JSON answer
			if err != nil || res.ExitCode != 0 || (help && !strings.Contains(string(res.Stdout), "usage:")) {
				t.Fatalf("%s %s dry run: %v exit %d %s %s", name, in.Script, err, res.ExitCode, res.Stdout, res.Stderr)
			}
		}
	}
}
