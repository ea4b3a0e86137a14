// Package backends chooses the sandbox backend that runs agent code: tool
// calls, verification checks and script gates all start through the
// sandbox.Manager it builds.
//
// "auto" probes the isolating backends in order of strength (the built-in
// namespaces backend, then bubblewrap) by starting a real process in each,
// and takes the first that works. A named backend is probed the same way.
// When nothing isolating works, the choice is no backend at all: its
// Manager refuses every Create with sandbox.ErrBackendUnavailable and a
// message naming what to enable, so work items end blocked instead of
// running agent code where the data dir and keys are in reach (fail
// closed). The unisolated subprocess backend is chosen only when the
// configuration names it and allows it.
package backends

import (
	"context"
	"fmt"
	"strings"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/bwrap"
	"github.com/silas-ai/silas/sandbox/namespaces"
	"github.com/silas-ai/silas/sandbox/subprocess"
)

// Backend names as silas.sandbox.backend spells them.
const (
	Auto       = "auto"
	Namespaces = "namespaces"
	Bwrap      = "bwrap"
	Subprocess = "subprocess"
)

// Prober starts a trivial process in a backend and returns why it could
// not, wrapping sandbox.ErrBackendUnavailable.
type Prober func(ctx context.Context) error

// Options say what the configuration asks for.
type Options struct {
	// Backend is silas.sandbox.backend: auto, namespaces, bwrap (or
	// bubblewrap) or subprocess.
	Backend string
	// AllowUnisolated is silas.sandbox.allow_unisolated; the subprocess
	// backend is refused without it.
	AllowUnisolated bool
	// Probes replaces the probe of a backend by name. Nil uses the real
	// probes; tests use it to stand for a host without isolation.
	Probes map[string]Prober
}

// Probe is what probing one backend found.
type Probe struct {
	Backend string
	// Err is nil when the backend started a process.
	Err error
}

// Choice is the backend the daemon runs agent code in.
type Choice struct {
	// Backend is the chosen backend's name, or "" when none may run.
	Backend string
	// Isolated reports a backend that isolates the filesystem, PIDs and
	// network from the daemon.
	Isolated bool
	// Problem says, when Backend is "", why nothing may run and what to
	// enable; it is the message blocked work items carry.
	Problem string
	// Probes lists every backend tried, in order.
	Probes []Probe
}

// Choose probes the backends opts asks for and returns the choice. It never
// fails: a host without isolation yields a Choice whose Manager refuses.
func Choose(ctx context.Context, opts Options) Choice {
	name := opts.Backend
	if name == "bubblewrap" {
		name = Bwrap
	}
	switch name {
	case Subprocess:
		if !opts.AllowUnisolated {
			return Choice{Problem: "silas.sandbox.backend is subprocess, which does not isolate the filesystem, " +
				"and silas.sandbox.allow_unisolated is false; use backend auto, or allow it explicitly"}
		}
		return Choice{Backend: Subprocess}
	case Auto:
		return chooseFrom(ctx, opts, Namespaces, Bwrap)
	case Namespaces, Bwrap:
		return chooseFrom(ctx, opts, name)
	default:
		return Choice{Problem: fmt.Sprintf("silas.sandbox.backend %q is not a backend; use auto, namespaces, bwrap or subprocess", opts.Backend)}
	}
}

func chooseFrom(ctx context.Context, opts Options, names ...string) Choice {
	var c Choice
	for _, n := range names {
		err := prober(opts, n)(ctx)
		c.Probes = append(c.Probes, Probe{Backend: n, Err: err})
		if err == nil {
			c.Backend, c.Isolated = n, true
			return c
		}
	}
	c.Problem = problem(c.Probes)
	return c
}

// problem is the message of a host where no isolating backend works.
func problem(probes []Probe) string {
	var b strings.Builder
	b.WriteString("no isolating sandbox works on this host, so Silas will not run agent code (")
	for i, p := range probes {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %v", p.Backend, p.Err)
	}
	b.WriteString("). Enable unprivileged user namespaces (sysctl user.max_user_namespaces > 0; on Debian and Ubuntu " +
		"also kernel.unprivileged_userns_clone=1 and, where AppArmor restricts them, " +
		"kernel.apparmor_restrict_unprivileged_userns=0) or install bubblewrap, then restart Silas; " +
		"`silas doctor` shows what this host has. Only if you accept that agent code can read everything " +
		"the daemon's user can: silas.sandbox.backend: subprocess with silas.sandbox.allow_unisolated: true.")
	return b.String()
}

func prober(opts Options, name string) Prober {
	if p, ok := opts.Probes[name]; ok {
		return p
	}
	switch name {
	case Namespaces:
		return namespaces.Probe
	case Bwrap:
		return bwrap.Probe
	}
	return func(context.Context) error {
		return fmt.Errorf("%w: no probe for %q", sandbox.ErrBackendUnavailable, name)
	}
}

// Manager builds the chosen backend with its work dirs under root. Each
// use (attempts, checks, script gates) gets a Manager of its own root, so
// that none can reach another's files.
func (c Choice) Manager(root string) (sandbox.Manager, error) {
	switch c.Backend {
	case Namespaces:
		return namespaces.New(namespaces.Options{Root: root})
	case Bwrap:
		return bwrap.New(bwrap.Options{Root: root})
	case Subprocess:
		return subprocess.New(subprocess.Options{Root: root})
	case "":
		return Unavailable{Reason: c.Problem}, nil
	}
	return nil, fmt.Errorf("%w: unknown backend %q", sandbox.ErrInvalidConfig, c.Backend)
}

// Unavailable is the Manager of a host where no backend may run: every
// Create fails with sandbox.ErrBackendUnavailable and the reason.
type Unavailable struct {
	// Reason says why and what to enable.
	Reason string
}

var _ sandbox.Manager = Unavailable{}

// Name implements sandbox.Manager.
func (Unavailable) Name() string { return "none" }

// Create implements sandbox.Manager: it always refuses.
func (u Unavailable) Create(context.Context, messages.SandboxConfig) (sandbox.Instance, error) {
	return nil, fmt.Errorf("%w: %s", sandbox.ErrBackendUnavailable, u.Reason)
}
