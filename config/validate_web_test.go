package config

import (
	"errors"
	"strings"
	"testing"
)

// TestValidateWebLimits: every connection-limit key the web channel accepts
// is checked at start, and a wrong value names its key and the fix.
func TestValidateWebLimits(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(w *Web)
		want   []string
	}{
		{"no sockets", func(w *Web) { w.MaxSockets = 0 }, []string{"silas.channels.web.max_sockets", "at least 1"}},
		{"no sockets per ip", func(w *Web) { w.MaxSocketsPerIP = -1 }, []string{"silas.channels.web.max_sockets_per_ip"}},
		{"no unauthenticated sockets", func(w *Web) { w.MaxUnauthenticatedSockets = 0 }, []string{"silas.channels.web.max_unauthenticated_sockets"}},
		{"no unauthenticated sockets per ip", func(w *Web) { w.MaxUnauthenticatedSocketsPerIP = 0 },
			[]string{"silas.channels.web.max_unauthenticated_sockets_per_ip"}},
		{"no owner sockets", func(w *Web) { w.MaxOwnerSockets = 0 }, []string{"silas.channels.web.max_owner_sockets"}},
		{"no idle timeout", func(w *Web) { w.IdleTimeoutSeconds = 0 }, []string{"silas.channels.web.idle_timeout_seconds"}},
		{"no header timeout", func(w *Web) { w.HeaderTimeoutSeconds = 0 }, []string{"silas.channels.web.header_timeout_seconds"}},
		{"no body timeout", func(w *Web) { w.BodyTimeoutSeconds = -5 }, []string{"silas.channels.web.body_timeout_seconds"}},
		{"no text", func(w *Web) { w.MaxTextBytes = 0 }, []string{"silas.channels.web.max_text_bytes"}},
		{"proxy by name", func(w *Web) { w.TrustedProxies = []string{"10.0.0.1", "proxy.lan"} },
			[]string{"silas.channels.web.trusted_proxies[1]", "IP nor a CIDR", `"proxy.lan"`}},
		{"proxy CIDR out of range", func(w *Web) { w.TrustedProxies = []string{"10.0.0.0/40"} },
			[]string{"silas.channels.web.trusted_proxies[0]"}},
		{"host as URL", func(w *Web) { w.AllowedHosts = []string{"https://chat.example.com"} },
			[]string{"silas.channels.web.allowed_hosts[0]", "no scheme"}},
		{"host wildcard", func(w *Web) { w.AllowedHosts = []string{"ok.example.com", "*.example.com"} },
			[]string{"silas.channels.web.allowed_hosts[1]"}},
		{"host bad port", func(w *Web) { w.AllowedHosts = []string{"chat.example.com:https"} },
			[]string{"silas.channels.web.allowed_hosts[0]"}},
		{"host unbracketed IPv6", func(w *Web) { w.AllowedHosts = []string{"2001:db8::1"} },
			[]string{"silas.channels.web.allowed_hosts[0]"}},
		{"short metrics token", func(w *Web) { w.MetricsToken = "short" },
			[]string{"silas.channels.web.metrics_token", "shorter than 16"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mustLoad(t, LoadOptions{})
			c.mutate(&cfg.Channels.Web)
			err := cfg.Validate()
			wantErr(t, err, c.want...)
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("err does not wrap ErrInvalid: %v", err)
			}
		})
	}
}

func TestValidateWebLimitsAccepts(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{Overrides: map[string]any{
		"silas.channels.web.trusted_proxies": []any{"10.0.0.0/8", "192.0.2.1", "::1", "fd00::/8"},
		"silas.channels.web.allowed_hosts":   []any{"chat.example.com", "chat.example.com:8443", "[2001:db8::1]:443", "192.0.2.7"},
		"silas.channels.web.metrics_token":   "0123456789abcdef0123",
		"silas.channels.web.max_sockets":     1,
	}})
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	w := cfg.Channels.Web
	if len(w.TrustedProxies) != 4 || len(w.AllowedHosts) != 4 || w.MaxSockets != 1 {
		t.Errorf("overrides not applied: %+v", w)
	}
	if s := w.String(); !strings.Contains(s, redactedMark) || strings.Contains(s, "0123456789abcdef0123") {
		t.Errorf("String leaks the metrics token: %s", s)
	}
}

func TestWebEnvironmentSetsLimits(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{Environ: []string{
		"SILAS_CHANNELS__WEB__MAX_SOCKETS_PER_IP=7",
		"SILAS_CHANNELS__WEB__METRICS_TOKEN=0123456789abcdef0123",
	}})
	if cfg.Channels.Web.MaxSocketsPerIP != 7 || cfg.Channels.Web.MetricsToken != "0123456789abcdef0123" {
		t.Errorf("environment not applied: %d %q", cfg.Channels.Web.MaxSocketsPerIP, cfg.Channels.Web.MetricsToken)
	}
}
