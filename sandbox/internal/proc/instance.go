package proc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

// Backend is what a sandbox backend adds to the shared Instance: how a
// Command becomes a Spec, and how a finished run is checked for a failure of
// the backend itself.
type Backend interface {
	// Spec turns cmd, run in the instance's work dir under cfg, into a Spec.
	Spec(cmd sandbox.Command, dir string, cfg messages.SandboxConfig) (Spec, error)
	// Check returns an error when res shows that the backend failed to set up
	// the sandbox (the program never ran), nil otherwise.
	Check(res sandbox.Result) error
}

// Releaser is a Backend that holds something for the instance's lifetime (a
// host id); Destroy calls Release once every run has ended.
type Releaser interface {
	Release()
}

// Instance is the sandbox.Instance shared by the backends: a work dir, a
// config, and the runs in flight, which Destroy kills.
type Instance struct {
	dir     string
	cfg     messages.SandboxConfig
	backend Backend

	life context.Context
	end  context.CancelFunc

	mu        sync.Mutex
	destroyed bool
	runs      sync.WaitGroup
}

var _ sandbox.Instance = (*Instance)(nil)

// NewInstance returns an instance over an existing work dir.
func NewInstance(dir string, cfg messages.SandboxConfig, b Backend) *Instance {
	life, end := context.WithCancel(context.Background())
	return &Instance{dir: dir, cfg: cfg, backend: b, life: life, end: end}
}

// WorkDir implements sandbox.Instance.
func (in *Instance) WorkDir() string { return in.dir }

// Config implements sandbox.Instance.
func (in *Instance) Config() messages.SandboxConfig { return in.cfg }

// Run implements sandbox.Instance.
func (in *Instance) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	if err := cmd.Validate(); err != nil {
		return sandbox.Result{}, err
	}
	cmd = cmd.WithDefaults()
	in.mu.Lock()
	if in.destroyed {
		in.mu.Unlock()
		return sandbox.Result{}, sandbox.ErrDestroyed
	}
	in.runs.Add(1)
	in.mu.Unlock()
	defer in.runs.Done()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(in.life, cancel)()

	for attempt := 0; ; attempt++ {
		spec, err := in.backend.Spec(cmd, in.dir, in.cfg)
		if err != nil {
			return sandbox.Result{}, err
		}
		res, err := Run(ctx, spec)
		if err != nil {
			if in.life.Err() != nil {
				return res, fmt.Errorf("%w during the run: %w", sandbox.ErrDestroyed, err)
			}
			return res, err
		}
		err = in.backend.Check(res)
		// A sandbox that could not be built for now (the kernel said
		// EAGAIN) is built again: the program never ran. Not when it
		// streamed its input, which the failed run may have consumed.
		if !errors.Is(err, ErrTransient) || attempt >= len(transientBackoff) || cmd.Input != nil {
			return res, err
		}
		select {
		case <-ctx.Done():
			return res, err
		case <-time.After(transientBackoff[attempt]):
		}
	}
}

// ErrTransient marks a Check error for a sandbox the kernel could not build
// for now (a resource temporarily unavailable); the program never ran, and
// Run builds it again after transientBackoff.
var ErrTransient = errors.New("the sandbox could not be built for now")

// transientBackoff are the waits before each new try after ErrTransient.
var transientBackoff = [...]time.Duration{20 * time.Millisecond, 80 * time.Millisecond, 320 * time.Millisecond}

// Destroy implements sandbox.Instance: it kills the runs in flight, waits for
// them (as long as ctx allows) and removes the work dir.
func (in *Instance) Destroy(ctx context.Context) error {
	in.mu.Lock()
	already := in.destroyed
	in.destroyed = true
	in.mu.Unlock()
	if already {
		return nil
	}
	in.end()
	done := make(chan struct{})
	go func() { in.runs.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("destroy sandbox %s: runs still ending: %w", in.dir, ctx.Err())
	}
	err := sandbox.RemoveWorkDir(ctx, in.dir)
	if r, ok := in.backend.(Releaser); ok {
		r.Release()
	}
	return err
}
