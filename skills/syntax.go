package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Runner runs one program to completion for validation: the Python syntax
// check, and the dry runs of the install flow. Silas never runs Python
// in-process (CGO is off); the daemon routes Runner through the sandbox
// (SandboxRunner), and tests may use a double.
type Runner interface {
	// Run starts argv (never a shell string) with stdin and waits. A
	// non-zero exit is a RunResult, not an error; the error is for runs
	// that could not start or were refused.
	Run(ctx context.Context, argv []string, stdin []byte) (RunResult, error)
}

// RunResult is what a Runner's run did.
type RunResult struct {
	ExitCode int
	Stdout   []byte
	Stderr   []byte
}

// syntaxChecker is the program the syntax check runs, as python3 -I -B -c.
// It reads {"files": {path: source}} on stdin, compiles each source to
// bytecode in memory (compile() parses and compiles, it never runs the
// code), and writes {"version": ..., "errors": [{path, line, message}]}.
const syntaxChecker = `import json, sys
req = json.load(sys.stdin)
errors = []
for path, src in sorted(req["files"].items()):
    try:
        compile(src, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        errors.append({"path": path, "line": e.lineno or 0, "message": e.msg or str(e)})
    except Exception as e:
        errors.append({"path": path, "line": 0, "message": type(e).__name__ + ": " + str(e)})
json.dump({"version": sys.version.split()[0], "errors": errors}, sys.stdout)
`

// SyntaxCheckArgv is the argument list the Python syntax check runs; the
// sources are fed on stdin, so the sandbox needs no access to the skill.
func SyntaxCheckArgv() []string {
	return []string{"python3", "-I", "-B", "-c", syntaxChecker}
}

type syntaxReply struct {
	Version string `json:"version"`
	Errors  []struct {
		Path    string `json:"path"`
		Line    int    `json:"line"`
		Message string `json:"message"`
	} `json:"errors"`
}

// checkPythonSyntax compiles every .py file of s through run. A checker
// that cannot run fails closed: the report gets an error finding.
func checkPythonSyntax(ctx context.Context, s *Skill, run Runner, r *ValidationReport) {
	files := map[string]string{}
	for _, e := range s.entries {
		if strings.HasSuffix(e.Path, ".py") {
			files[e.Path] = string(e.Data)
		}
	}
	if len(files) == 0 {
		return
	}
	fail := func(format string, a ...any) {
		r.add(SeverityError, RulePythonSyntax, "", 0, "", "the Python syntax check could not run: "+fmt.Sprintf(format, a...)+"; make sure python3 is available inside the sandbox and validate again")
	}
	if run == nil {
		fail("no runner is configured")
		return
	}
	in, err := json.Marshal(map[string]any{"files": files})
	if err != nil {
		fail("%v", err)
		return
	}
	res, err := run.Run(ctx, SyntaxCheckArgv(), in)
	if err != nil {
		fail("%v", err)
		return
	}
	if res.ExitCode != 0 {
		fail("python3 exited with status %d: %s", res.ExitCode, truncate(strings.TrimSpace(string(res.Stderr)), 300))
		return
	}
	var reply syntaxReply
	if err := json.Unmarshal(res.Stdout, &reply); err != nil {
		fail("unreadable checker output: %v", err)
		return
	}
	r.PythonVersion = reply.Version
	for _, e := range reply.Errors {
		if _, ok := files[e.Path]; !ok {
			fail("the checker reported an unknown file %q", e.Path)
			continue
		}
		r.add(SeverityError, RulePythonSyntax, e.Path, e.Line, "", "Python syntax error: "+e.Message)
	}
}
