package sandbox

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
)

// Defaults of a Command whose fields are zero (spec 3.7 ExecutionEnvelope).
const (
	DefaultTimeout        = 300 * time.Second
	DefaultMaxOutputBytes = 100_000
)

// Manager is a sandbox backend (spec 9.1 SandboxManager). Create makes a
// fresh, isolated Instance from a SandboxConfig; the caller runs commands in
// it and must Destroy it.
type Manager interface {
	// Name is the backend's name, as in SandboxConfig.Backend.
	Name() string
	// Create makes an isolated instance with its own fresh work dir. It fails
	// if cfg is invalid or asks for isolation the backend cannot give.
	Create(ctx context.Context, cfg messages.SandboxConfig) (Instance, error)
}

// Instance is one isolated sandbox: a work dir and the SandboxConfig every
// command in it runs under. Runs in one instance share its work dir.
type Instance interface {
	// WorkDir is the host path of the instance's work dir (also HOME inside).
	WorkDir() string
	// Config is the SandboxConfig the instance was created from.
	Config() messages.SandboxConfig
	// Run starts cmd, waits for it and returns what it did. A non-zero exit,
	// a timeout or a signal is a Result, not an error; the error is for runs
	// that could not start or were refused (fail closed).
	Run(ctx context.Context, cmd Command) (Result, error)
	// Destroy kills anything still running and removes the work dir. It is
	// safe to call more than once.
	Destroy(ctx context.Context) error
}

// Command is one process to run in an Instance. Args is an argument list
// passed to execve as is; it is never joined into a shell string, so values
// in it are data, never code. Args[0] is looked up in the sandbox's PATH.
type Command struct {
	// Args is argv; Args[0] names the program.
	Args []string
	// Stdin is fed to the process's standard input (empty: /dev/null-like EOF).
	Stdin []byte
	// Input, when set, streams more standard input after Stdin: each value
	// received is written as is, and standard input is closed when Input
	// is closed or the process exits. For protocols that answer the
	// process line by line (connection setup, spec 5.10.1).
	Input <-chan []byte
	// Output, when set, receives standard output as it arrives, besides the
	// capped copy in Result.Stdout; it is written from a reader goroutine,
	// so a slow Output slows the process down. It must bound what it keeps.
	Output io.Writer
	// Env adds variables for this run on top of SandboxConfig.Env. PATH and
	// HOME are always the backend's.
	Env map[string]string
	// Timeout bounds the wall time; the whole process group is killed when it
	// passes. Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxOutputBytes caps stdout and stderr each; bytes past it are drained
	// and dropped. Zero means DefaultMaxOutputBytes.
	MaxOutputBytes int
}

// Validate checks the command without running it.
func (c Command) Validate() error {
	if len(c.Args) == 0 || c.Args[0] == "" {
		return fmt.Errorf("%w: empty argument list", ErrInvalidCommand)
	}
	for i, a := range c.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("%w: argument %d holds a NUL byte", ErrInvalidCommand, i)
		}
	}
	for k, v := range c.Env {
		if err := messages.ValidateEnvName(k); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidCommand, err)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("%w: environment value of %s holds a NUL byte", ErrInvalidCommand, k)
		}
	}
	if c.Timeout < 0 || c.MaxOutputBytes < 0 {
		return fmt.Errorf("%w: timeout and max output bytes must not be negative", ErrInvalidCommand)
	}
	return nil
}

// WithDefaults returns c with zero limits replaced by the defaults.
func (c Command) WithDefaults() Command {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxOutputBytes == 0 {
		c.MaxOutputBytes = DefaultMaxOutputBytes
	}
	return c
}

// Result is what a finished run did.
type Result struct {
	// ExitCode is the process's exit status, or -1 when a signal ended it.
	ExitCode int
	// Signal names the signal that ended the process ("" if it exited).
	Signal string
	// Stdout and Stderr hold at most MaxOutputBytes each.
	Stdout []byte
	Stderr []byte
	// StdoutTruncated and StderrTruncated report output dropped past the cap.
	StdoutTruncated bool
	StderrTruncated bool
	// Duration is the wall time from start to exit.
	Duration time.Duration
	// TimedOut reports that the timeout passed and the process group was killed.
	TimedOut bool
}

// Success reports a zero exit within the timeout.
func (r Result) Success() bool { return r.ExitCode == 0 && !r.TimedOut && r.Signal == "" }
