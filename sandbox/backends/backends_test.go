package backends

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

func works(context.Context) error { return nil }

func fails(why string) Prober {
	return func(context.Context) error { return errors.New(why) }
}

func TestChoose(t *testing.T) {
	cases := []struct {
		name     string
		opts     Options
		backend  string
		isolated bool
		problem  []string // fragments of Problem when no backend
	}{
		{"auto takes namespaces first", Options{Backend: Auto, Probes: map[string]Prober{Namespaces: works, Bwrap: works}}, Namespaces, true, nil},
		{"auto falls back to bwrap", Options{Backend: Auto, Probes: map[string]Prober{Namespaces: fails("userns off"), Bwrap: works}}, Bwrap, true, nil},
		{"auto with nothing isolating", Options{Backend: Auto, Probes: map[string]Prober{Namespaces: fails("userns off"), Bwrap: fails("not installed")}}, "", false,
			[]string{"namespaces: userns off", "bwrap: not installed", "user namespaces", "bubblewrap", "silas doctor", "allow_unisolated"}},
		{"auto never falls back to subprocess", Options{Backend: Auto, AllowUnisolated: true, Probes: map[string]Prober{Namespaces: fails("a"), Bwrap: fails("b")}}, "", false, []string{"no isolating sandbox"}},
		{"a named backend that fails is not replaced", Options{Backend: Namespaces, Probes: map[string]Prober{Namespaces: fails("userns off"), Bwrap: works}}, "", false, []string{"namespaces: userns off"}},
		{"bubblewrap is bwrap", Options{Backend: "bubblewrap", Probes: map[string]Prober{Bwrap: works}}, Bwrap, true, nil},
		{"subprocess only when allowed", Options{Backend: Subprocess}, "", false, []string{"allow_unisolated"}},
		{"subprocess allowed", Options{Backend: Subprocess, AllowUnisolated: true}, Subprocess, false, nil},
		{"docker is no backend", Options{Backend: "docker"}, "", false, []string{`"docker"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Choose(t.Context(), tc.opts)
			if c.Backend != tc.backend || c.Isolated != tc.isolated {
				t.Fatalf("chose %q (isolated %v), want %q (isolated %v); problem: %s", c.Backend, c.Isolated, tc.backend, tc.isolated, c.Problem)
			}
			for _, want := range tc.problem {
				if !strings.Contains(c.Problem, want) {
					t.Errorf("problem does not say %q: %s", want, c.Problem)
				}
			}
		})
	}
}

// TestNoBackendRefusesEveryCreate: the Manager of a host without a sandbox
// fails closed with the message that says what to enable.
func TestNoBackendRefusesEveryCreate(t *testing.T) {
	c := Choose(t.Context(), Options{Backend: Auto, Probes: map[string]Prober{Namespaces: fails("userns off"), Bwrap: fails("not installed")}})
	m, err := c.Manager(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in, err := m.Create(t.Context(), messages.DefaultSandboxConfig())
	if in != nil || !errors.Is(err, sandbox.ErrBackendUnavailable) || !strings.Contains(err.Error(), "userns off") {
		t.Fatalf("Create = %v, %v; want ErrBackendUnavailable with the reason", in, err)
	}
}
