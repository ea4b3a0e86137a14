package script

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/sandbox"
)

// destroyTimeout bounds the clean-up of one instance, which runs even when
// the evaluation's context has ended.
const destroyTimeout = 30 * time.Second

// exitCannotEnter is the exit status of a run whose shell could not enter
// the script directory (as env(1) reports a failed --chdir).
const exitCannotEnter = 125

// run runs argv (argv[0] already resolved) in a fresh instance of the
// Options' sandbox, with the script directory (resolved: realDir) as its
// only extra path, read-only, and its working directory; env holds
// "KEY=value" entries of [Environment]. Network access is never given: the
// gate configuration has no field to ask for it.
func (p *Provider) run(ctx context.Context, realDir string, argv, env []string) (sandbox.Result, error) {
	cfg := messages.DefaultSandboxConfig()
	cfg.NetworkAccess = false
	cfg.FilesystemRead = []string{realDir}
	cfg.MaxCPUSeconds = max(1, int((p.o.Timeout+time.Second-1)/time.Second))
	in, err := p.o.Sandbox.Create(ctx, cfg)
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("create the script sandbox: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), destroyTimeout)
		defer cancel()
		_ = in.Destroy(dctx)
	}()
	// A work dir inside the script directory would sit in the read-only
	// view of every other run, with what that run's script left there.
	if work, err := filepath.EvalSymlinks(in.WorkDir()); err != nil || within(realDir, work) {
		return sandbox.Result{}, fmt.Errorf("%w: the script sandbox's work dirs (%s) lie inside the script directory %s; "+
			"give the script gates' sandbox a root of its own, outside it", gates.ErrBadConfig, in.WorkDir(), realDir)
	}
	vars, err := envMap(env)
	if err != nil {
		return sandbox.Result{}, err
	}
	return in.Run(ctx, sandbox.Command{
		Args:           commandArgs(realDir, argv),
		Env:            vars,
		Timeout:        p.o.Timeout,
		MaxOutputBytes: p.o.MaxOutput,
	})
}

// commandArgs is the argument list of a run: a fixed shell that enters the
// script directory (backends start a command in the instance's work dir)
// and then executes argv, which it gets as arguments, never as shell text.
func commandArgs(dir string, argv []string) []string {
	script := `cd -- "$1" || exit ` + strconv.Itoa(exitCannotEnter) + `; unset OLDPWD; shift; exec "$@"`
	return append([]string{"/bin/sh", "-c", script, "silas-gate", dir}, argv...)
}

// envMap turns [Environment]'s entries into the variables of a sandbox
// command. PATH is left out: the sandbox sets its own (the same
// directories).
func envMap(env []string) (map[string]string, error) {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("script: environment entry %q has no '='", k)
		}
		if k == "PATH" || k == "HOME" {
			continue
		}
		if err := messages.ValidateEnvName(k); err != nil {
			return nil, fmt.Errorf("script: %w", err)
		}
		m[k] = v
	}
	return m, nil
}
