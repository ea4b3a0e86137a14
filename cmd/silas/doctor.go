package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/silas-ai/silas/sandbox/backends"
)

// runDoctor prints which isolation features this host has, what each
// sandbox backend's probe found, and which backend the configuration gets.
// It exits 1 when the configuration would run agent code without isolation
// or not at all, so scripts can check a host before starting the daemon.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("doctor", "Check this host's sandbox isolation and say which backend Silas would use.", stderr)
	var c common
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := c.load(nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "Host isolation features:")
	for _, f := range backends.Inspect() {
		fmt.Fprintf(stdout, "  %s %-30s %s\n", mark(f.OK), f.Name, f.Detail)
	}

	fmt.Fprintln(stdout, "\nSandbox backends (each probe starts a real process):")
	auto := backends.Choose(ctx, backends.Options{Backend: backends.Auto})
	for _, p := range probeAll(ctx, auto) {
		detail := "works"
		if p.Err != nil {
			detail = p.Err.Error()
		}
		fmt.Fprintf(stdout, "  %s %-30s %s\n", mark(p.Err == nil), p.Backend, detail)
	}
	if auto.Backend != "" {
		fmt.Fprintf(stdout, "\nauto picks: %s\n", auto.Backend)
	} else {
		fmt.Fprintln(stdout, "\nauto picks: nothing")
	}

	chosen := auto
	if cfg.Sandbox.Backend != backends.Auto {
		chosen = backends.Choose(ctx, backends.Options{Backend: cfg.Sandbox.Backend, AllowUnisolated: cfg.Sandbox.AllowUnisolated})
	}
	fmt.Fprintf(stdout, "configured (silas.sandbox.backend: %s, allow_unisolated: %v): ", cfg.Sandbox.Backend, cfg.Sandbox.AllowUnisolated)
	switch {
	case chosen.Backend == "":
		fmt.Fprintln(stdout, "NO SANDBOX")
		fmt.Fprintln(stdout, "\n"+chosen.Problem)
		return &exitError{code: 1, err: errors.New("no sandbox can run agent code on this host; work items would end blocked")}
	case !chosen.Isolated:
		fmt.Fprintf(stdout, "%s, NOT ISOLATED: agent code can read everything this user can, the data dir and keys included\n", chosen.Backend)
		return &exitError{code: 1, err: errors.New("agent code would run without filesystem isolation")}
	}
	fmt.Fprintf(stdout, "%s (isolated)\n", chosen.Backend)
	return nil
}

// probeAll returns the probes of both isolating backends: auto stops at the
// first that works, the doctor shows them all.
func probeAll(ctx context.Context, auto backends.Choice) []backends.Probe {
	probes := auto.Probes
	if len(probes) < 2 {
		rest := backends.Choose(ctx, backends.Options{Backend: backends.Bwrap})
		probes = append(probes, rest.Probes...)
	}
	return probes
}

func mark(ok bool) string {
	if ok {
		return "[ok]  "
	}
	return "[no]  "
}
