// Package executor holds the executor registry and the core executors of spec
// 9.2 and 9.3: shell_exec and python_exec over a sandbox.Manager, and
// web_search over a SearchProvider.
//
// Executors are stateless: they receive an ExecutionEnvelope (and, for the
// sandboxed ones, optionally the Instance to run in) and return an
// ExecutionResult, nothing else.
//
// Taint rule: every result is TaintExternal. web_search output comes from the
// web; a sandboxed run's output comes from a model-written command and, with
// network_access, from the network, and the executor cannot prove its
// provenance trusted (spec 5.12: tool outputs default to external). The taint
// tracker may only ever weaken it further.
package executor

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

// Names of the core executors.
const (
	ShellExec  = "shell_exec"
	PythonExec = "python_exec"
	WebSearch  = "web_search"
)

// Executor runs one kind of action. Execute always returns a non-nil result;
// when err is non-nil the result is a failure whose error field holds
// err.Error().
type Executor interface {
	// Name is the action name the executor answers to.
	Name() string
	// Execute runs env. in is the sandbox instance to run in; when nil a
	// sandboxed executor creates a fresh one from env.SandboxConfig and
	// destroys it afterwards. Executors that need no sandbox ignore it.
	Execute(ctx context.Context, env *messages.ExecutionEnvelope, in sandbox.Instance) (*messages.ExecutionResult, error)
}

// Options configure NewRegistry.
type Options struct {
	// Sandbox runs shell_exec and python_exec. Required.
	Sandbox sandbox.Manager
	// Python is the interpreter python_exec runs, looked up in the sandbox's
	// PATH. Default "python3".
	Python string
	// Search configures web_search; it is registered only when
	// Search.Enabled() (a provider and a key), and an enabled but invalid
	// search configuration is an error.
	Search SearchOptions
}

// Registry maps action names to executors. It is immutable after
// NewRegistry, so it is safe for concurrent use.
type Registry struct {
	byName map[string]Executor
}

// NewRegistry registers shell_exec and python_exec, and web_search when a
// search provider and an API key are configured (spec 9.2); otherwise
// web_search is not registered and no model sees the tool. A configured
// search that cannot work (an unknown provider, a bad base URL) is an
// error, so that it is refused at start instead of silently missing.
func NewRegistry(opts Options) (*Registry, error) {
	if opts.Sandbox == nil {
		return nil, fmt.Errorf("executor registry: a sandbox manager is required")
	}
	execs := []Executor{NewShell(opts.Sandbox), NewPython(opts.Sandbox, opts.Python)}
	if opts.Search.Enabled() {
		ws, err := NewWebSearch(opts.Search)
		if err != nil {
			return nil, fmt.Errorf("executor registry: %w", err)
		}
		execs = append(execs, ws)
	}
	r := &Registry{byName: make(map[string]Executor, len(execs))}
	for _, e := range execs {
		if err := r.add(e); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *Registry) add(e Executor) error {
	name := e.Name()
	if name == "" || strings.TrimSpace(name) != name {
		return fmt.Errorf("executor registry: malformed name %q", name)
	}
	if _, dup := r.byName[name]; dup {
		return fmt.Errorf("%w: %s", ErrDuplicate, name)
	}
	r.byName[name] = e
	return nil
}

// Get returns the executor for name.
func (r *Registry) Get(name string) (Executor, bool) {
	e, ok := r.byName[name]
	return e, ok
}

// Names lists the registered action names, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Execute validates env and runs it with the executor named by env.Action.
// The result is never nil; see Executor.
func (r *Registry) Execute(ctx context.Context, env *messages.ExecutionEnvelope, in sandbox.Instance) (*messages.ExecutionResult, error) {
	if err := env.Validate(); err != nil {
		return failed(env, 0, fmt.Errorf("%w: %w", ErrInvalidEnvelope, err))
	}
	e, ok := r.byName[env.Action]
	if !ok {
		return failed(env, 0, fmt.Errorf("%w %q: registered are %s", ErrUnknownAction, env.Action, strings.Join(r.Names(), ", ")))
	}
	return e.Execute(ctx, env, in)
}

// failed builds a failed result carrying err.
func failed(env *messages.ExecutionEnvelope, seconds float64, err error) (*messages.ExecutionResult, error) {
	msg := err.Error()
	return &messages.ExecutionResult{
		ExecutionID:     env.ExecutionID,
		StepIndex:       env.StepIndex,
		Content:         []map[string]any{},
		Metadata:        map[string]any{},
		Artifacts:       map[string]string{},
		Taint:           messages.TaintExternal,
		Error:           &msg,
		DurationSeconds: seconds,
	}, err
}
