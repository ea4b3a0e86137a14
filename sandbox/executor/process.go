package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

// Shell is the shell_exec executor. Its args are either
//
//	{"argv": ["prog", "arg", ...]}   an argument list, run as is, or
//	{"command": "text"}              run as ["/bin/sh", "-c", text]
//
// plus an optional {"stdin": "text"}. The command text is the model's own
// and runs inside the sandbox, which is the point of the sandbox; the runtime
// never splices values into it (values go in SandboxConfig.env or argv).
type Shell struct {
	sb sandbox.Manager
}

var _ Executor = (*Shell)(nil)

// NewShell returns the shell_exec executor.
func NewShell(sb sandbox.Manager) *Shell { return &Shell{sb: sb} }

// Name implements Executor.
func (s *Shell) Name() string { return ShellExec }

// Execute implements Executor.
func (s *Shell) Execute(ctx context.Context, env *messages.ExecutionEnvelope, in sandbox.Instance) (*messages.ExecutionResult, error) {
	argv, hasArgv, err := stringList(env.Args, "argv")
	if err != nil {
		return failed(env, 0, err)
	}
	command, hasCommand, err := stringArg(env.Args, "command")
	if err != nil {
		return failed(env, 0, err)
	}
	switch {
	case hasArgv == hasCommand:
		return failed(env, 0, fmt.Errorf("%w: shell_exec needs exactly one of argv (a list) and command (a string)", ErrInvalidArgs))
	case hasCommand:
		argv = []string{"/bin/sh", "-c", command}
	}
	stdin, _, err := stringArg(env.Args, "stdin")
	if err != nil {
		return failed(env, 0, err)
	}
	return runSandboxed(ctx, s.sb, env, in, func(string) (sandbox.Command, func(), error) {
		return sandbox.Command{Args: argv, Stdin: []byte(stdin)}, func() {}, nil
	})
}

// Python is the python_exec executor. Its args are {"code": "source"} and
// optionally {"args": [...], "stdin": "text"}; the code is written to a file
// in the work dir and run as [python, file, args...].
type Python struct {
	sb     sandbox.Manager
	python string
}

var _ Executor = (*Python)(nil)

// NewPython returns the python_exec executor; python defaults to "python3".
func NewPython(sb sandbox.Manager, python string) *Python {
	if python == "" {
		python = "python3"
	}
	return &Python{sb: sb, python: python}
}

// Name implements Executor.
func (p *Python) Name() string { return PythonExec }

// Execute implements Executor.
func (p *Python) Execute(ctx context.Context, env *messages.ExecutionEnvelope, in sandbox.Instance) (*messages.ExecutionResult, error) {
	code, ok, err := stringArg(env.Args, "code")
	if err == nil && !ok {
		err = fmt.Errorf("%w: python_exec needs code (a string)", ErrInvalidArgs)
	}
	if err != nil {
		return failed(env, 0, err)
	}
	extra, _, err := stringList(env.Args, "args")
	if err != nil {
		return failed(env, 0, err)
	}
	stdin, _, err := stringArg(env.Args, "stdin")
	if err != nil {
		return failed(env, 0, err)
	}
	return runSandboxed(ctx, p.sb, env, in, func(dir string) (sandbox.Command, func(), error) {
		f, err := os.CreateTemp(dir, ".silas-python-*.py")
		if err != nil {
			return sandbox.Command{}, nil, fmt.Errorf("python_exec: write script: %w", err)
		}
		name := f.Name()
		cleanup := func() { _ = os.Remove(name) }
		_, werr := f.WriteString(code)
		if werr == nil {
			// CreateTemp makes the file 0600, owned by the daemon; an
			// isolating backend runs the code as another uid, which must
			// be able to read it. It holds only the model's code.
			werr = f.Chmod(0o444)
		}
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			cleanup()
			return sandbox.Command{}, nil, fmt.Errorf("python_exec: write script: %w", werr)
		}
		args := append([]string{p.python, filepath.Base(name)}, extra...)
		return sandbox.Command{Args: args, Stdin: []byte(stdin)}, cleanup, nil
	})
}

// prepare builds the command to run in the work dir and what to clean up.
type prepare func(dir string) (sandbox.Command, func(), error)

// runSandboxed runs one command for env in in (or a fresh instance) and
// turns the outcome into an ExecutionResult.
func runSandboxed(ctx context.Context, sb sandbox.Manager, env *messages.ExecutionEnvelope, in sandbox.Instance, prep prepare) (*messages.ExecutionResult, error) {
	start := time.Now()
	seconds := func() float64 { return time.Since(start).Seconds() }
	if in == nil {
		fresh, err := sb.Create(ctx, env.SandboxConfig)
		if err != nil {
			return failed(env, seconds(), fmt.Errorf("%s: %w", env.Action, err))
		}
		defer func() { _ = fresh.Destroy(context.WithoutCancel(ctx)) }()
		in = fresh
	}
	before, err := snapshot(in.WorkDir())
	if err != nil {
		return failed(env, seconds(), err)
	}
	cmd, cleanup, err := prep(in.WorkDir())
	if err != nil {
		return failed(env, seconds(), err)
	}
	cmd.Timeout = time.Duration(env.TimeoutSeconds) * time.Second
	cmd.MaxOutputBytes = env.MaxOutputBytes
	res, runErr := in.Run(ctx, cmd)
	cleanup()
	if runErr != nil {
		return failed(env, seconds(), fmt.Errorf("%s: %w", env.Action, runErr))
	}
	after, err := snapshot(in.WorkDir())
	if err != nil {
		return failed(env, seconds(), err)
	}
	out := processResult(env, res, in.WorkDir(), changed(before, after))
	out.DurationSeconds = seconds()
	if !res.Success() {
		return out, fmt.Errorf("%w: %s", ErrFailed, *out.Error)
	}
	return out, nil
}

// processResult maps a sandbox.Result to an ExecutionResult. Stdout is the
// return value; stdout and stderr are content blocks; exit details are
// metadata (application-only).
func processResult(env *messages.ExecutionEnvelope, res sandbox.Result, dir string, produced []string) *messages.ExecutionResult {
	artifacts := make(map[string]string, len(produced))
	for _, rel := range produced {
		artifacts[rel] = filepath.Join(dir, rel)
	}
	r := &messages.ExecutionResult{
		ExecutionID: env.ExecutionID,
		StepIndex:   env.StepIndex,
		Success:     res.Success(),
		ReturnValue: string(res.Stdout),
		Content: []map[string]any{
			{"type": "stdout", "text": string(res.Stdout), "truncated": res.StdoutTruncated},
			{"type": "stderr", "text": string(res.Stderr), "truncated": res.StderrTruncated},
			{"type": "exit", "exit_code": res.ExitCode, "timed_out": res.TimedOut},
		},
		Metadata: map[string]any{
			"exit_code":        res.ExitCode,
			"signal":           res.Signal,
			"timed_out":        res.TimedOut,
			"stdout_truncated": res.StdoutTruncated,
			"stderr_truncated": res.StderrTruncated,
			"network_access":   env.SandboxConfig.NetworkAccess,
			"work_dir":         dir,
		},
		Artifacts: artifacts,
		Taint:     messages.TaintExternal,
	}
	if !r.Success {
		var msg string
		switch {
		case res.TimedOut:
			msg = fmt.Sprintf("timed out after %d s; the process group was killed", env.TimeoutSeconds)
		case res.Signal != "":
			msg = "killed by " + res.Signal + " (a resource limit or a kill)"
		default:
			msg = fmt.Sprintf("exit status %d", res.ExitCode)
		}
		r.Error = &msg
	}
	return r
}

func stringArg(args map[string]any, key string) (string, bool, error) {
	v, ok := args[key]
	if !ok || v == nil {
		return "", false, nil
	}
	s, isString := v.(string)
	if !isString {
		return "", false, fmt.Errorf("%w: %s must be a string", ErrInvalidArgs, key)
	}
	return s, true, nil
}

func stringList(args map[string]any, key string) ([]string, bool, error) {
	v, ok := args[key]
	if !ok || v == nil {
		return nil, false, nil
	}
	var out []string
	switch l := v.(type) {
	case []string:
		out = append(out, l...)
	case []any:
		for i, e := range l {
			s, isString := e.(string)
			if !isString {
				return nil, false, fmt.Errorf("%w: %s[%d] must be a string", ErrInvalidArgs, key, i)
			}
			out = append(out, s)
		}
	default:
		return nil, false, fmt.Errorf("%w: %s must be a list of strings", ErrInvalidArgs, key)
	}
	return out, true, nil
}
