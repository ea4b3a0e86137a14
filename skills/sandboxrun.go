package skills

import (
	"context"
	"fmt"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

// Defaults of SandboxRunner.
const (
	DefaultCheckTimeout   = 60 * time.Second
	DefaultCheckMaxOutput = 1 << 20
)

// SandboxRunner is a Runner that runs every program in a fresh sandbox
// instance from Manager: no network, no environment, the default memory
// and CPU limits (messages.DefaultSandboxConfig), an empty work dir,
// destroyed after the run. The syntax check needs nothing more (sources
// come on stdin); dry runs also expose the skill directory read-only
// (ReadOnly) and run Invocation.Argv(skillDir).
type SandboxRunner struct {
	Manager sandbox.Manager
	// ReadOnly are absolute host paths exposed read-only at the same path
	// (filesystem_read), such as a skill directory for its dry runs.
	ReadOnly []string
	// Timeout bounds each run; zero means DefaultCheckTimeout.
	Timeout time.Duration
}

var _ Runner = SandboxRunner{}

// Run implements Runner.
func (r SandboxRunner) Run(ctx context.Context, argv []string, stdin []byte) (RunResult, error) {
	if r.Manager == nil {
		return RunResult{}, fmt.Errorf("skill check: no sandbox backend configured")
	}
	cfg := messages.DefaultSandboxConfig()
	cfg.FilesystemRead = append(cfg.FilesystemRead, r.ReadOnly...)
	in, err := r.Manager.Create(ctx, cfg)
	if err != nil {
		return RunResult{}, fmt.Errorf("skill check: create sandbox: %w", err)
	}
	defer func() { _ = in.Destroy(context.WithoutCancel(ctx)) }()
	timeout := r.Timeout
	if timeout == 0 {
		timeout = DefaultCheckTimeout
	}
	res, err := in.Run(ctx, sandbox.Command{Args: argv, Stdin: stdin, Timeout: timeout, MaxOutputBytes: DefaultCheckMaxOutput})
	if err != nil {
		return RunResult{}, fmt.Errorf("skill check: run in sandbox: %w", err)
	}
	if res.TimedOut {
		return RunResult{}, fmt.Errorf("skill check: timed out after %s", timeout)
	}
	if res.StdoutTruncated {
		return RunResult{}, fmt.Errorf("skill check: output exceeded %d bytes", DefaultCheckMaxOutput)
	}
	return RunResult{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr}, nil
}
