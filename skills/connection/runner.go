package connection

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

// Environment variables every connection script gets (docs/connections.md).
const (
	EnvConnectionID  = "SILAS_CONNECTION_ID"
	EnvCredentialRef = "SILAS_CREDENTIAL_REF"
	EnvSecretsDir    = "SILAS_SECRETS_DIR"
	EnvSettings      = "SILAS_CONNECTION_SETTINGS"
)

// ErrStopped means the run was stopped for breaking the protocol (a line
// too long, a credential in the output); Outcome.Problem says which.
var ErrStopped = errors.New("the connection script was stopped")

// Runner runs the scripts of one connection. It is a value: the
// ConnectionManager builds one per run from the connection's record and
// the credential it holds.
type Runner struct {
	// Sandbox creates the fresh instance of each run. Required.
	Sandbox sandbox.Manager
	// Python is the interpreter, looked up in the sandbox's PATH
	// (default python3).
	Python string
	// SkillDir is the host path of the approved, read-only copy of the
	// connection skill; it is mounted read-only at the same path.
	SkillDir string
	// ConnectionID, CredentialRef and Settings are the connection's.
	ConnectionID  string
	CredentialRef string
	Settings      map[string]any
	// Credential is the stored credential, nil when there is none yet.
	Credential []byte
	// MemoryMB and CPUSeconds bound the process (zero: the defaults).
	MemoryMB, CPUSeconds int
}

// Script names one script run: its path in the skill and its arguments,
// already rendered as --name=value.
type Script struct {
	Path    string
	Args    []string
	Timeout time.Duration
}

// Outcome is how a run ended.
type Outcome struct {
	Result sandbox.Result
	// Err is set when the run could not start or did not finish.
	Err error
	// Problem says why the run was stopped for breaking the protocol
	// (Err then wraps ErrStopped); nothing it wrote may be used.
	Problem string
	// Credential is the credential file as the script left it (nil when
	// it left none); Changed reports that it differs from
	// Runner.Credential.
	Credential []byte
	Changed    bool
}

// OK reports a run that ended with exit status 0 and no problem.
func (o Outcome) OK() bool { return o.Err == nil && o.Problem == "" && o.Result.Success() }

// Describe says in one line what went wrong with a run that is not OK.
func (o Outcome) Describe() string {
	switch {
	case o.Problem != "":
		return "stopped: " + o.Problem
	case o.Err != nil:
		return o.Err.Error()
	case o.Result.TimedOut:
		return "timed out"
	case o.Result.Signal != "":
		return "killed by " + o.Result.Signal
	default:
		return fmt.Sprintf("exit status %d", o.Result.ExitCode)
	}
}

// Run is one running script.
type Run struct {
	// Lines are the protocol lines the script printed, in order; it is
	// closed when the run ended. Read it to the end.
	Lines <-chan []byte
	input chan []byte
	stop  context.CancelFunc
	done  chan struct{}
	out   Outcome
	// ready is closed once the instance exists (or failed to); work and
	// ref are then set, and provided holds values given with Provide.
	ready    chan struct{}
	mu       sync.Mutex
	work     string
	ref      string
	provided [][]byte
}

// Start runs s in a fresh sandbox instance. ctx bounds the whole run.
func (r Runner) Start(ctx context.Context, s Script) (*Run, error) {
	if r.Sandbox == nil || r.SkillDir == "" || r.ConnectionID == "" || r.CredentialRef == "" {
		return nil, fmt.Errorf("run connection script %s: the runner needs a sandbox, the skill dir, the connection id and its credential ref", s.Path)
	}
	if !filepath.IsLocal(s.Path) {
		return nil, fmt.Errorf("run connection script %q: not a path inside the skill", s.Path)
	}
	settings, err := json.Marshal(r.Settings)
	if err != nil {
		return nil, fmt.Errorf("run connection script %s: encode the settings: %w", s.Path, err)
	}
	cfg := messages.DefaultSandboxConfig()
	cfg.NetworkAccess = true
	cfg.FilesystemRead = []string{r.SkillDir}
	if r.MemoryMB > 0 {
		cfg.MaxMemoryMB = r.MemoryMB
	}
	if r.CPUSeconds > 0 {
		cfg.MaxCPUSeconds = r.CPUSeconds
	}
	python := r.Python
	if python == "" {
		python = "python3"
	}
	// -B: no bytecode in the read-only skill; -E and -s: no PYTHON*
	// variables, no user site directory.
	runCtx, stop := context.WithCancel(ctx)
	lines := make(chan []byte, 64)
	p := &Run{Lines: lines, input: make(chan []byte), stop: stop, done: make(chan struct{}), ready: make(chan struct{}), ref: r.CredentialRef}
	go func() {
		defer close(p.done)
		defer close(lines)
		defer stop()
		p.out = p.run(runCtx, r, cfg, s, python, string(settings), lines)
	}()
	return p, nil
}

func (p *Run) run(ctx context.Context, r Runner, cfg messages.SandboxConfig, s Script, python, settings string, lines chan<- []byte) Outcome {
	var out Outcome
	inst, err := r.Sandbox.Create(ctx, cfg)
	if err != nil {
		close(p.ready)
		out.Err = fmt.Errorf("create the sandbox: %w", err)
		return out
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = inst.Destroy(dctx)
	}()
	work := inst.WorkDir()
	err = stageCredential(work, r.CredentialRef, r.Credential)
	p.mu.Lock()
	if err == nil {
		p.work = work
	}
	p.mu.Unlock()
	close(p.ready)
	if err != nil {
		out.Err = err
		return out
	}
	known := Fragments(r.Credential)
	split := &lineSplitter{
		secrets: func() [][]byte {
			now, _ := readCredential(work, r.CredentialRef)
			p.mu.Lock()
			given := slices.Clone(p.provided)
			p.mu.Unlock()
			return append(append(Fragments(now), known...), given...)
		},
		emit: func(l []byte) bool {
			select {
			case lines <- l:
				return true
			case <-ctx.Done():
				return false
			}
		},
		stop: p.stop,
	}
	cmd := sandbox.Command{
		Args: append([]string{python, "-B", "-E", "-s", filepath.Join(r.SkillDir, filepath.FromSlash(s.Path))}, s.Args...),
		Env: map[string]string{
			EnvConnectionID: r.ConnectionID, EnvCredentialRef: r.CredentialRef,
			EnvSecretsDir: filepath.Join(work, SecretsDirName), EnvSettings: settings,
		},
		Input: p.input, Output: split, Timeout: s.Timeout,
	}
	out.Result, out.Err = inst.Run(ctx, cmd)
	split.flush()
	if why := split.why(); why != "" {
		out.Problem = why
		out.Err = fmt.Errorf("%w: %s", ErrStopped, why)
		return out // nothing it wrote is used, the credential file included
	}
	cred, err := readCredential(work, r.CredentialRef)
	if err != nil && out.Err == nil {
		out.Err = err
	}
	out.Credential = cred
	out.Changed = cred != nil && !bytes.Equal(cred, r.Credential)
	return out
}

// Send writes v as one protocol line to the script's standard input. It
// fails once the run ended.
func (p *Run) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode a protocol line: %w", err)
	}
	select {
	case p.input <- append(b, '\n'):
		return nil
	case <-p.done:
		return errors.New("the connection script already ended")
	}
}

// Provide writes value as the credential file of the running script (the
// owner's secure input arrived while the script awaits it); from then on
// no line may carry it either.
func (p *Run) Provide(value []byte) error {
	select {
	case <-p.ready:
	case <-p.done:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.work == "" {
		return errors.New("the connection script is not running")
	}
	select {
	case <-p.done:
		return errors.New("the connection script already ended")
	default:
	}
	if err := stageCredential(p.work, p.ref, value); err != nil {
		return err
	}
	p.provided = append(p.provided, Fragments(value)...)
	return nil
}

// Input returns the channel of the script's standard input lines; close
// it when nothing more will be sent (a request/response script).
func (p *Run) Input() chan<- []byte { return p.input }

// Stop ends the run at once (the owner cancelled, Silas stops).
func (p *Run) Stop() { p.stop() }

// Wait returns the outcome once the run ended; Lines must be drained.
func (p *Run) Wait() Outcome {
	<-p.done
	return p.out
}

// Done is closed when the run ended.
func (p *Run) Done() <-chan struct{} { return p.done }

// Call runs a request/response script (discover.py, health_check.py,
// refresh_token.py, recover.py, probe.py): request, when not nil, is its
// one input line; the answer is the last line of its output, decoded into
// answer. The outcome says how the process ended.
func (r Runner) Call(ctx context.Context, s Script, request, answer any) Outcome {
	p, err := r.Start(ctx, s)
	if err != nil {
		return Outcome{Err: err}
	}
	if request != nil {
		if err := p.Send(request); err != nil {
			p.Stop()
		}
	}
	close(p.Input())
	var last []byte
	for l := range p.Lines {
		last = l
	}
	out := p.Wait()
	if out.Problem != "" || out.Err != nil {
		return out
	}
	if last == nil {
		out.Err = fmt.Errorf("%s printed no answer", s.Path)
		return out
	}
	if err := json.Unmarshal(last, answer); err != nil {
		out.Err = fmt.Errorf("%s: its answer is not the expected JSON object: %w", s.Path, err)
	}
	return out
}
