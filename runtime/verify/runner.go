package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

// Defaults of Options whose fields are zero.
const (
	DefaultMaxArtifactBytes = 1 << 30
	DefaultMaxArtifactFiles = 100_000
)

// MaxCheckTimeout is the longest timeout a check may ask for.
const MaxCheckTimeout = 24 * time.Hour

// destroyTimeout bounds the clean-up of one instance, which runs even when
// Run's context has ended.
const destroyTimeout = 30 * time.Second

// Options configure a Runner.
type Options struct {
	// Sandbox is the backend the checks run in. Required. Give the Runner a
	// Manager of its own (its own root directory), never the executor's: the
	// agent must not be able to reach the verification environment.
	Sandbox sandbox.Manager
	// ProjectDirs are the configured project directories a file_exists
	// predicate may name by absolute path, besides the check's own work dir.
	// Each must be absolute; a directory that does not exist allows nothing.
	ProjectDirs []string
	// MaxMemoryMB is each check's memory limit. Default
	// messages.DefaultMaxMemoryMB (512).
	MaxMemoryMB int
	// MaxCPUSeconds is each check's CPU time limit. Default: the check's own
	// timeout in seconds.
	MaxCPUSeconds int
	// MaxOutputBytes caps the stdout (and stderr) captured from a check.
	// Default sandbox.DefaultMaxOutputBytes (100,000).
	MaxOutputBytes int
	// MaxArtifactBytes caps the file bytes copied from the execution work
	// dir. Default DefaultMaxArtifactBytes (1 GiB).
	MaxArtifactBytes int64
	// MaxArtifactFiles caps the files, directories and symlinks copied from
	// the execution work dir. Default DefaultMaxArtifactFiles (100,000).
	MaxArtifactFiles int
	// Log receives clean-up failures (a sandbox work dir that could not be
	// removed). The zero Logger discards them.
	Log zerolog.Logger
	// Now is the clock of Report.Timestamp. Default time.Now.
	Now func() time.Time
}

// Runner runs verification checks in sandboxes the agent cannot touch. It
// holds no mutable state: one Runner may serve concurrent Runs.
type Runner struct {
	opts        Options
	projectDirs []string
	limits      copyLimits
}

// New checks opts, fills in defaults and returns the runner. It starts
// nothing.
func New(opts Options) (*Runner, error) {
	if opts.Sandbox == nil {
		return nil, fmt.Errorf("%w: a sandbox manager is required", ErrInvalidOptions)
	}
	var dirs []string
	for _, d := range opts.ProjectDirs {
		if !filepath.IsAbs(d) || strings.IndexByte(d, 0) >= 0 {
			return nil, fmt.Errorf("%w: project directory %q must be an absolute path", ErrInvalidOptions, d)
		}
		dirs = append(dirs, filepath.Clean(d))
	}
	if opts.MaxMemoryMB == 0 {
		opts.MaxMemoryMB = messages.DefaultMaxMemoryMB
	}
	if opts.MaxOutputBytes == 0 {
		opts.MaxOutputBytes = sandbox.DefaultMaxOutputBytes
	}
	if opts.MaxArtifactBytes == 0 {
		opts.MaxArtifactBytes = DefaultMaxArtifactBytes
	}
	if opts.MaxArtifactFiles == 0 {
		opts.MaxArtifactFiles = DefaultMaxArtifactFiles
	}
	if opts.MaxMemoryMB < 0 || opts.MaxCPUSeconds < 0 || opts.MaxOutputBytes < 0 ||
		opts.MaxArtifactBytes < 0 || opts.MaxArtifactFiles < 0 {
		return nil, fmt.Errorf("%w: limits must not be negative", ErrInvalidOptions)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Runner{
		opts:        opts,
		projectDirs: dirs,
		limits:      copyLimits{maxBytes: opts.MaxArtifactBytes, maxEntries: opts.MaxArtifactFiles},
	}, nil
}

// Run runs checks in order, each in a fresh verification sandbox that holds
// a copy of execWorkDir's content (the attempt's sandbox work dir; "" for
// checks that need no artifacts), and reports how each went. It blocks until
// the last check ends; call it from a goroutine, never inside an actor's
// Receive. The error is nil whenever the Report is a verdict on the work;
// see the package doc for when it is not.
func (r *Runner) Run(ctx context.Context, checks []messages.VerificationCheck, execWorkDir string) (Report, error) {
	rep := Report{Results: make([]CheckResult, 0, len(checks))}
	finish := func(err error) (Report, error) {
		rep.Timestamp = r.opts.Now().UTC()
		rep.Passed = err == nil
		for _, c := range rep.Results {
			rep.Passed = rep.Passed && c.Passed
		}
		return rep, err
	}
	if err := ctx.Err(); err != nil {
		return finish(fmt.Errorf("verify: %w", err))
	}
	src, err := resolveExecDir(execWorkDir)
	if err != nil {
		return finish(err)
	}
	var snapshot string
	var artifactErr error
	if src != "" && len(checks) > 0 {
		snap, err := r.opts.Sandbox.Create(ctx, r.config(false, 1))
		if err != nil {
			return finish(r.sandboxErr(ctx, "create the artifact snapshot", err))
		}
		defer r.destroy(ctx, snap)
		err = copyTree(ctx, src, filepath.Clean(execWorkDir), snap.WorkDir(), r.limits, writable)
		switch {
		case errors.Is(err, errArtifactLimit):
			artifactErr = err
		case err != nil && ctx.Err() != nil:
			return finish(fmt.Errorf("verify: %w", ctx.Err()))
		case err != nil:
			return finish(err)
		}
		snapshot = snap.WorkDir()
	}
	for _, c := range checks {
		res, err := r.runCheck(ctx, c, snapshot, artifactErr)
		rep.Results = append(rep.Results, res)
		if err != nil {
			return finish(err)
		}
	}
	return finish(nil)
}

// resolveExecDir checks that dir is "" or the absolute path of a directory
// and returns it with its symlinks resolved.
func resolveExecDir(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%w: %q is not an absolute path", ErrExecDir, dir)
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrExecDir, err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrExecDir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: %q is not a directory", ErrExecDir, dir)
	}
	return resolved, nil
}

// config is the SandboxConfig of one verification instance: the defaults,
// an empty environment, the Options' limits and the check's network flag.
func (r *Runner) config(network bool, timeoutSeconds int) messages.SandboxConfig {
	cfg := messages.DefaultSandboxConfig()
	cfg.NetworkAccess = network
	cfg.MaxMemoryMB = r.opts.MaxMemoryMB
	cfg.MaxCPUSeconds = r.opts.MaxCPUSeconds
	if cfg.MaxCPUSeconds == 0 {
		cfg.MaxCPUSeconds = max(1, timeoutSeconds)
	}
	return cfg
}

// runCheck runs one check. A check that cannot be judged because of itself
// (invalid, oversized artifacts) is a failed result with a nil error; the
// error is for a sandbox that could not run it and for an ended context.
func (r *Runner) runCheck(ctx context.Context, c messages.VerificationCheck, snapshot string, artifactErr error) (CheckResult, error) {
	res := CheckResult{Name: strings.ToValidUTF8(c.Name, "\uFFFD"), ExitCode: -1}
	fail := func(reason string) (CheckResult, error) {
		res.Reason = strings.ToValidUTF8(reason, "\uFFFD")
		return res, nil
	}
	if c.Timeout == 0 {
		c.Timeout = messages.DefaultVerifyTimeout
	}
	if err := c.Validate(); err != nil {
		return fail("invalid check: " + err.Error())
	}
	if c.Timeout > int(MaxCheckTimeout/time.Second) {
		return fail(fmt.Sprintf("invalid check: timeout %d s is longer than %s", c.Timeout, MaxCheckTimeout))
	}
	timeout := time.Duration(c.Timeout) * time.Second
	if strings.IndexByte(c.Run, 0) >= 0 {
		return fail("invalid check: run holds a NUL byte")
	}
	pred, err := compile(&c.Expect)
	if err != nil {
		return fail("invalid check: expect: " + err.Error())
	}
	if artifactErr != nil {
		return fail("not run: " + artifactErr.Error())
	}

	// The artifacts live in an instance of their own in which nothing runs,
	// so that they are outside the check's work dir (its HOME, bound
	// read-write by isolating backends) and can be bound read-only.
	art, err := r.opts.Sandbox.Create(ctx, r.config(false, 1))
	if err != nil {
		res.Reason = "not run: the verification sandbox could not be created"
		return res, r.sandboxErr(ctx, fmt.Sprintf("check %q", c.Name), err)
	}
	defer r.destroy(ctx, art)
	artifacts := filepath.Join(art.WorkDir(), artifactsDirName)
	if err := r.fillArtifacts(ctx, snapshot, artifacts); err != nil {
		res.Reason = "not run: the artifacts could not be copied"
		return res, r.sandboxErr(ctx, fmt.Sprintf("check %q", c.Name), err)
	}
	cfg := r.config(c.Network, c.Timeout)
	cfg.FilesystemRead = []string{artifacts}
	cfg.Env = checkEnv(artifacts)
	in, err := r.opts.Sandbox.Create(ctx, cfg)
	if err != nil {
		res.Reason = "not run: the verification sandbox could not be created"
		return res, r.sandboxErr(ctx, fmt.Sprintf("check %q", c.Name), err)
	}
	defer r.destroy(ctx, in)
	out, err := in.Run(ctx, sandbox.Command{
		Args:           checkArgs(artifacts, c.Run),
		Timeout:        timeout,
		MaxOutputBytes: r.opts.MaxOutputBytes,
	})
	if err != nil {
		if errors.Is(err, sandbox.ErrInvalidCommand) && ctx.Err() == nil {
			return fail("invalid check: " + err.Error())
		}
		res.Reason = "not run: configuration error: " + err.Error()
		return res, r.sandboxErr(ctx, fmt.Sprintf("check %q", c.Name), err)
	}
	res.ExitCode = out.ExitCode
	res.Duration = out.Duration
	res.TimedOut = out.TimedOut
	res.Output = truncateOutput(out.Stdout, MaxReportOutputChars)
	var reason string
	switch {
	case out.TimedOut:
		reason = fmt.Sprintf("Timeout after %ds", c.Timeout)
	case out.Signal != "":
		reason = "killed by " + out.Signal
	case c.Expect.FileExists != nil:
		res.Passed, reason = fileExists(*c.Expect.FileExists, artifacts, r.projectDirs)
	default:
		res.Passed, reason = pred.evalOutput(outcome{
			stdout: out.Stdout, truncated: out.StdoutTruncated, exitCode: out.ExitCode, limit: r.opts.MaxOutputBytes,
		})
	}
	res.Reason = strings.ToValidUTF8(reason, "\uFFFD")
	return res, nil
}

// checkExitCannotEnter is the exit status of a check whose shell could not
// enter the artifacts directory (as env(1) reports a failed --chdir).
const checkExitCannotEnter = 125

// checkArgs is the argument list of a check: a fixed shell that enters the
// artifacts directory and then runs the check's own text, which it gets as
// an argument ("$2"), never spliced into the fixed text. Backends start
// every command in the instance's work dir (HOME), so the change of
// directory happens inside the sandbox; OLDPWD, which cd sets, is removed
// again.
func checkArgs(artifacts, run string) []string {
	script := `cd -- "$1" || exit ` + strconv.Itoa(checkExitCannotEnter) + `; unset OLDPWD; exec /bin/sh -c "$2"`
	return []string{"/bin/sh", "-c", script, "silas-verify", artifacts, run}
}

// artifactsDirName is the artifacts directory of a check inside the work
// dir of the instance that holds it. That work dir stays 0700, so only the
// server's uid reaches the world-readable copy on the host.
const artifactsDirName = "artifacts"

// fillArtifacts creates dir, the artifacts directory of one check, copies
// the snapshot ("" for none) into it and makes it read-only.
func (r *Runner) fillArtifacts(ctx context.Context, snapshot, dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("%w: artifacts directory: %w", ErrUnavailable, err)
	}
	if snapshot == "" {
		if err := os.Chmod(dir, 0o555); err != nil {
			return fmt.Errorf("%w: make the artifacts read-only: %w", ErrUnavailable, err)
		}
		return nil
	}
	return copyTree(ctx, snapshot, "", dir, r.limits, readOnly)
}

// sandboxErr wraps an error of the verification sandbox: the context's error
// when it has ended, else ErrUnavailable.
func (r *Runner) sandboxErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("verify: %s: %w", what, ctx.Err())
	}
	if errors.Is(err, ErrUnavailable) {
		return fmt.Errorf("verify: %s: %w", what, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, err)
}

// destroy removes an instance, even when ctx has ended.
func (r *Runner) destroy(ctx context.Context, in sandbox.Instance) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), destroyTimeout)
	defer cancel()
	if err := in.Destroy(ctx); err != nil {
		r.opts.Log.Warn().Err(err).Str("dir", in.WorkDir()).Msg("verify: sandbox clean-up failed")
	}
}
