package load

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/silas-ai/silas/config"
)

// limitOf reads each raised limit from a loaded config.
var limitOf = map[string]func(*config.Config) int{
	"silas.limits.ws_messages_per_minute_per_scope": func(c *config.Config) int { return c.Limits.WSMessagesPerMinutePerScope },
	"silas.limits.llm_calls_per_minute_per_scope":   func(c *config.Config) int { return c.Limits.LLMCallsPerMinutePerScope },
	"silas.limits.ws_messages_per_minute_per_ip":    func(c *config.Config) int { return c.Limits.WSMessagesPerMinutePerIP },
	"silas.backpressure.max_pending_turns_total":    func(c *config.Config) int { return c.Backpressure.MaxPendingTurnsTotal },
	"silas.backpressure.max_pending_turns_per_ip":   func(c *config.Config) int { return c.Backpressure.MaxPendingTurnsPerIP },
	"silas.channels.web.max_sockets":                func(c *config.Config) int { return c.Channels.Web.MaxSockets },
	"silas.channels.web.max_sockets_per_ip":         func(c *config.Config) int { return c.Channels.Web.MaxSocketsPerIP },
	"silas.channels.web.idle_timeout_seconds":       func(c *config.Config) int { return c.Channels.Web.IdleTimeoutSeconds },
}

// TestServerConfigLoads checks that silas accepts the generated config (it
// decodes strictly) and that RaisedLimits states the real defaults.
func TestServerConfigLoads(t *testing.T) {
	dir := t.TempDir()
	y, err := ServerConfig{DataDir: filepath.Join(dir, "data"), MockURL: "http://127.0.0.1:9/v1"}.YAML()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "silas.yaml")
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Environ: []string{ModelKeyEnv + "=bench"}})
	if err != nil {
		t.Fatalf("silas refuses the bench config: %v\n%s", err, y)
	}
	if !cfg.Chatbot.Enabled || cfg.Log.Level != "warn" {
		t.Errorf("chatbot enabled %v, log level %q; want true and warn", cfg.Chatbot.Enabled, cfg.Log.Level)
	}
	defaults, err := config.Load(config.LoadOptions{Environ: []string{}, Overrides: map[string]any{
		"silas.data_dir": filepath.Join(dir, "defaults"),
	}})
	if err != nil {
		t.Fatalf("load the defaults: %v", err)
	}
	for _, l := range RaisedLimits {
		get, ok := limitOf[l.Key]
		if !ok {
			t.Errorf("no getter for raised limit %s; add one to limitOf", l.Key)
			continue
		}
		if got := get(cfg); got != l.Value {
			t.Errorf("%s = %d in the bench config, want %d", l.Key, got, l.Value)
		}
		if got := get(defaults); got != l.Default {
			t.Errorf("%s defaults to %d, RaisedLimits says %d", l.Key, got, l.Default)
		}
	}
}
