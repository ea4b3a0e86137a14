package skills_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/silas-ai/silas/skills"
)

func TestValidateValidSkill(t *testing.T) {
	requirePython(t)
	s, r := skills.ValidateFS(t.Context(), demoFS(), "demo", skills.Options{Python: hostPython{}})
	if s == nil || !r.Passed || len(r.Findings) != 0 {
		t.Fatalf("valid skill: passed=%v findings=%+v", r.Passed, r.Findings)
	}
	if r.Hash != s.Hash() || len(r.Files) != 3 || r.PythonVersion == "" || r.Scripts[0] != "scripts/count.py" {
		t.Fatalf("report %+v", r)
	}
	// Deterministic: the same skill gives byte-identical reports.
	_, r2 := skills.ValidateFS(t.Context(), demoFS(), "demo", skills.Options{Python: hostPython{}})
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(r2)
	if string(a) != string(b) {
		t.Fatalf("reports differ:\n%s\n%s", a, b)
	}
}

// TestValidateRejects: each invalid skill fails validation with an error
// finding that names the problem, its rule, file and line.
func TestValidateRejects(t *testing.T) {
	requirePython(t)
	const leak = "AKIAIOSFODNN7EXAMPLZ"
	cases := []struct {
		name string
		fsys func(t *testing.T) fstest.MapFS
		opts skills.Options
		rule string
		file string
		line int
		msg  string
	}{
		{"bad name", func(t *testing.T) fstest.MapFS { return replaceInSkill(t, "name: demo", "name: Demo!") },
			skills.Options{}, skills.RuleFormat, "SKILL.md", 2, "only lowercase letters"},
		{"name not matching the directory", func(t *testing.T) fstest.MapFS { return replaceInSkill(t, "name: demo", "name: demo-two") },
			skills.Options{}, skills.RuleFormat, "SKILL.md", 2, "does not match the directory name"},
		{"description too long for the configuration", func(t *testing.T) fstest.MapFS { return demoFS() },
			skills.Options{DescriptionMaxChars: 40}, skills.RuleDescriptionLength, "SKILL.md", 3, "description is too long (73 characters, at most 40)"},
		{"description too short", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "Use when the user asks to count the words of a text file in the work dir.", "Counts words.")
		}, skills.Options{}, skills.RuleDescriptionLength, "SKILL.md", 3, "description is too short (13 characters, at least 24)"},
		{"process-heavy description", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "Use when the user asks to count the words of a text file in the work dir.",
				"1. Open the file. 2. Split it on spaces. 3. Count the parts and then print the total.")
		}, skills.Options{}, skills.RuleDescriptionQuality, "SKILL.md", 3, "description is process-heavy (3 numbered steps"},
		{"commands in the description", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "Use when the user asks to count the words", "Use when the user asks; run `wc -w` --words to count the words")
		}, skills.Options{}, skills.RuleDescriptionQuality, "SKILL.md", 3, "command syntax"},
		{"python syntax error", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, "def main():", "def main(:", 1))
		}, skills.Options{}, skills.RulePythonSyntax, "scripts/count.py", 7, "Python syntax error"},
		{"credential literal in a script", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, "import sys\n", "import sys\nKEY = \""+leak+"\"\n", 1))
		}, skills.Options{}, skills.RuleCredential, "scripts/count.py", 5, "credential literal (aws_access_key)"},
		{"password literal in a reference", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "references/notes.md", "# Notes\n\nlogin with password: hunter22secret\n")
		}, skills.Options{}, skills.RuleCredential, "references/notes.md", 3, "credential literal (credential_assignment)"},
		{"private key in an asset", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "assets/key.txt", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n")
		}, skills.Options{}, skills.RuleCredential, "assets/key.txt", 1, "credential literal (private_key)"},
		{"link escaping the skill", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "(references/notes.md)", "(../../etc/passwd)")
		}, skills.Options{}, skills.RulePath, "SKILL.md", 16, "escapes the skill directory"},
		{"absolute link", func(t *testing.T) fstest.MapFS { return replaceInSkill(t, "(references/notes.md)", "(/etc/passwd)") },
			skills.Options{}, skills.RulePath, "SKILL.md", 16, "is an absolute path"},
		{"link to a missing file", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "(references/notes.md)", "(references/gone.md)")
		},
			skills.Options{}, skills.RulePath, "SKILL.md", 16, "does not exist in the skill"},
		{"code span naming a missing script", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "`scripts/count.py`", "`scripts/counter.py --path x`")
		},
			skills.Options{}, skills.RulePath, "SKILL.md", 15, "scripts/counter.py"},
		{"escaping link in a reference", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "references/notes.md", "# Notes\nsee [up](../../secret.md)\n")
		}, skills.Options{}, skills.RulePath, "references/notes.md", 2, "escapes the skill directory"},
		{"undeclared environment variable", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, `os.environ.get("DEMO_REF", "")`, `os.environ["AWS_SECRET_ACCESS_KEY"]`, 1))
		}, skills.Options{}, skills.RuleUndeclaredEnv, "scripts/count.py", 11, "AWS_SECRET_ACCESS_KEY"},
		{"dynamic environment read", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, `os.environ.get("DEMO_REF", "")`, `dict(os.environ)`, 1))
		}, skills.Options{}, skills.RuleUndeclaredEnv, "scripts/count.py", 11, "without a literal variable name"},
		{"getenv with a variable", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, `os.environ.get("DEMO_REF", "")`, `os.getenv(a.path)`, 1))
		}, skills.Options{}, skills.RuleUndeclaredEnv, "scripts/count.py", 11, "without a literal variable name"},
		{"os.system", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, "    a = p.parse_args()\n", "    a = p.parse_args()\n    os.system(\"wc -w \" + a.path)\n", 1))
		}, skills.Options{}, skills.RuleShell, "scripts/count.py", 11, "os.system runs a shell command string"},
		{"shell=True", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, "import sys\n", "import sys\nimport subprocess\nsubprocess.run(f\"cat {sys.argv[1]}\", shell = True)\n", 1))
		}, skills.Options{}, skills.RuleShell, "scripts/count.py", 6, "shell=True"},
		{"shell through keyword arguments", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, "import sys\n", "import sys\nimport subprocess\nopts = {\"shell\": True}\n", 1))
		}, skills.Options{}, skills.RuleShell, "scripts/count.py", 6, "keyword arguments"},
		{"environment under another name", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, "import sys\n", "import sys\nfrom os import environ as e\n", 1))
		}, skills.Options{}, skills.RuleUndeclaredEnv, "scripts/count.py", 5, "under another name"},
		{"sh -c from python", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, "import sys\n", "import sys\nimport subprocess\nsubprocess.run([\"sh\", \"-c\", \"cat \" + sys.argv[1]])\n", 1))
		}, skills.Options{}, skills.RuleShell, "scripts/count.py", 6, "shell with -c"},
		{"unquoted argument in a shell script", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/helper.sh", "#!/bin/sh\nset -eu\nwc -w $1\n")
		}, skills.Options{}, skills.RuleShell, "scripts/helper.sh", 3, `argument $1 is used unquoted`},
		{"eval in a shell script", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/helper.sh", "#!/bin/bash\neval \"wc -w \\\"$1\\\"\"\n")
		}, skills.Options{}, skills.RuleShell, "scripts/helper.sh", 2, "eval runs text"},
		{"undeclared variable in a shell script", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "scripts/helper.sh", "#!/bin/sh\ncurl -H \"Authorization: Bearer ${GITHUB_TOKEN}\" https://x\n")
		}, skills.Options{}, skills.RuleUndeclaredEnv, "scripts/helper.sh", 2, "GITHUB_TOKEN"},
		{"connection skill without health check", func(t *testing.T) fstest.MapFS {
			return replaceInSkill(t, "activation: auto", "activation: auto\ntype: connection\nauth_strategy: device_code")
		}, skills.Options{}, skills.RuleConnection, "SKILL.md", 5, "scripts/health_check.py"},
		{"empty instructions", func(t *testing.T) fstest.MapFS {
			return withFile(demoFS(), "SKILL.md", skillMD[:strings.Index(skillMD, "# Demo")])
		}, skills.Options{}, skills.RuleFormat, "SKILL.md", 11, "instructions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts
			o.Python = hostPython{}
			_, r := skills.ValidateFS(t.Context(), c.fsys(t), "demo", o)
			if r.Passed {
				t.Fatalf("passed validation: %+v", r.Findings)
			}
			for _, f := range r.Errors() {
				if f.Rule == c.rule && f.File == c.file && f.Line == c.line && strings.Contains(f.Message, c.msg) {
					if strings.Contains(f.Message, leak) {
						t.Fatalf("the finding repeats the secret: %s", f.Message)
					}
					return
				}
			}
			t.Fatalf("no error %s %s:%d %q in %+v", c.rule, c.file, c.line, c.msg, r.Findings)
		})
	}
}

// TestValidateAcceptsSafeCode: code that merely looks like the forbidden
// patterns is not flagged.
func TestValidateAcceptsSafeCode(t *testing.T) {
	requirePython(t)
	safe := `import os
import subprocess
import sys

# os.system("never") in a comment is fine
MESSAGE = "do not call os.system( or use shell=True"
token = os.environ["DEMO_REF"]
password = sys.argv[1] if len(sys.argv) > 1 else None
home = os.environ.get('HOME')
subprocess.run(["wc", "-w", "--", sys.argv[-1]], check=False, shell=False)
"""A docstring may say os.environ or eval( freely."""
`
	sh := "#!/bin/sh\nset -eu\nout=\"${2:-out.txt}\"\nwc -w \"$1\" > \"$out\"\necho \"$@\"\nfor f in a b; do echo \"$f\"; done\nDEMO_REF=x\necho \"$DEMO_REF $HOME\"\n"
	f := withFile(withFile(demoFS(), "scripts/count.py", safe), "scripts/helper.sh", sh)
	_, r := skills.ValidateFS(t.Context(), f, "demo", skills.Options{Python: hostPython{}})
	if !r.Passed {
		t.Fatalf("safe code failed: %+v", r.Errors())
	}
}

func TestValidateOptionsRelax(t *testing.T) {
	f := withFile(demoFS(), "scripts/count.py", strings.Replace(countPy, `"DEMO_REF"`, `"OTHER"`, 1))
	_, strict := skills.ValidateFS(t.Context(), f, "demo", skills.Options{Python: okPython()})
	_, relaxed := skills.ValidateFS(t.Context(), f, "demo", skills.Options{Python: okPython(), AllowUndeclaredEnv: true})
	if strict.Passed || !relaxed.Passed || len(relaxed.Findings) == 0 || relaxed.Findings[0].Severity != skills.SeverityWarning {
		t.Fatalf("strict %+v\nrelaxed %+v", strict.Findings, relaxed.Findings)
	}
}

// TestValidatePythonCheckFailsClosed: without a working checker no skill
// with Python scripts passes.
func TestValidatePythonCheckFailsClosed(t *testing.T) {
	cases := []struct {
		name   string
		runner skills.Runner
		msg    string
	}{
		{"no runner", nil, "no runner is configured"},
		{"runner error", &fakePython{err: errors.New("sandbox unavailable")}, "sandbox unavailable"},
		{"python crashed", &fakePython{exit: 1}, "exited with status 1"},
		{"garbage output", &fakePython{reply: "not json"}, "unreadable checker output"},
		{"unknown file", &fakePython{reply: `{"errors":[{"path":"../x.py","line":1,"message":"m"}]}`}, "unknown file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, r := skills.ValidateFS(t.Context(), demoFS(), "demo", skills.Options{Python: c.runner})
			if r.Passed {
				t.Fatal("passed without a syntax check")
			}
			e := r.Errors()
			if len(e) != 1 || e[0].Rule != skills.RulePythonSyntax || !strings.Contains(e[0].Message, c.msg) {
				t.Fatalf("findings %+v", r.Findings)
			}
		})
	}
	fp := &fakePython{reply: `{"version":"3","errors":[{"path":"scripts/count.py","line":4,"message":"invalid syntax"}]}`}
	_, r := skills.ValidateFS(t.Context(), demoFS(), "demo", skills.Options{Python: fp})
	if e := r.Errors(); fp.calls != 1 || len(e) != 1 || e[0].File != "scripts/count.py" || e[0].Line != 4 {
		t.Fatalf("double's syntax error not reported: %+v", r.Findings)
	}
}

func TestValidateDirSymlinkEscape(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	writeTree(t, dir, demoFS())
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "assets-passwd")); err != nil {
		t.Fatal(err)
	}
	s, r := skills.ValidateDir(t.Context(), dir, skills.Options{Python: okPython()})
	if s != nil || r.Passed || len(r.Findings) != 1 || r.Findings[0].Rule != skills.RuleFormat ||
		!strings.Contains(r.Findings[0].Message, "assets-passwd is a symlink") {
		t.Fatalf("symlink: %+v", r)
	}
}
