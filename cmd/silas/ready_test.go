package main

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
)

func TestProviderAddr(t *testing.T) {
	cases := []struct {
		base, want string
		ok         bool
	}{
		{"https://openrouter.ai/api/v1", "openrouter.ai:443", true},
		{"http://127.0.0.1:8080/v1", "127.0.0.1:8080", true},
		{"http://[::1]/v1", "[::1]:80", true},
		{"ftp://example.com", "", false},
		{"not a url", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		if got, ok := providerAddr(c.base); got != c.want || ok != c.ok {
			t.Errorf("providerAddr(%q) = %q %v, want %q %v", c.base, got, ok, c.want, c.ok)
		}
	}
}

// TestModelProbeIsCachedAndNamesNoURL: one round of dials serves the
// probes within modelProbeEvery, and a failure names the provider only.
func TestModelProbeIsCachedAndNamesNoURL(t *testing.T) {
	var dials atomic.Int32
	r := &readiness{
		providers: map[string]string{"openrouter": "internal.example:443", "local": "10.0.0.7:8080"},
		dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			dials.Add(1)
			if addr == "10.0.0.7:8080" {
				return nil, errors.New("dial tcp 10.0.0.7:8080: connection refused")
			}
			a, b := net.Pipe()
			_ = b.Close()
			return a, nil
		},
	}
	for range 3 {
		if bad := r.probeModels(t.Context()); len(bad) != 1 || bad[0] != "local" {
			t.Fatalf("bad providers %v", bad)
		}
	}
	if n := dials.Load(); n != 2 {
		t.Fatalf("%d dials for three probes within %s, want 2 (one per provider)", n, modelProbeEvery)
	}
	if s := strings.Join(r.modelBad, ","); strings.Contains(s, "10.0.0.7") {
		t.Fatalf("the probe result names an address: %s", s)
	}
}

// TestModelReadyWhileEveryRoleHasAFallback: a provider that is down keeps
// the daemon ready as long as every role's chain has another that is up;
// a role left with none makes it not ready, and the detail names it.
func TestModelReadyWhileEveryRoleHasAFallback(t *testing.T) {
	r := &readiness{
		providers: map[string]string{"primary": "a:443", "backup": "b:443"},
		roles:     map[string][]string{"proxy": {"primary", "backup"}, "planner": {"primary"}},
	}
	tests := []struct {
		name   string
		bad    []string
		ok     bool
		detail string
	}{
		{"all up", nil, true, "2 provider(s) reachable"},
		{"backup down", []string{"backup"}, true, "every role has a reachable fallback"},
		{"primary down", []string{"primary"}, false, "no provider reachable for [planner]"},
		{"both down", []string{"backup", "primary"}, false, "[planner proxy]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := r.modelCheck(tc.bad)
			if c.OK != tc.ok || !strings.Contains(c.Detail, tc.detail) {
				t.Fatalf("modelCheck(%v) = %v %q, want %v and %q", tc.bad, c.OK, c.Detail, tc.ok, tc.detail)
			}
		})
	}
}
