package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/knadh/koanf/parsers/yaml"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func TestDefaultsLoadAndValidate(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{})
	if err := cfg.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"owner_id", cfg.OwnerID, "owner"},
		{"web.port", cfg.Channels.Web.Port, 8420},
		{"web.host", cfg.Channels.Web.Host, "127.0.0.1"},
		{"web.auth_token", cfg.Channels.Web.AuthToken, ""},
		{"web.max_frame_bytes", cfg.Channels.Web.MaxFrameBytes, 65536},
		{"web.send_queue", cfg.Channels.Web.SendQueue, 256},
		{"openrouter", cfg.Providers["openrouter"], Provider{BaseURL: "https://openrouter.ai/api/v1", APIKeyEnv: "OPENROUTER_API_KEY", Prices: map[string]ModelPrice{}}},
		{"llm.backoff_max_ms", cfg.LLM.BackoffMaxMS, 8000},
		{"chatbot.session_ttl_hours", cfg.Chatbot.SessionTTLHours, 720},
		{"log.format", cfg.Log.Format, "json"},
		{"persistence.sync_writes", cfg.Persistence.SyncWrites, true},
		{"persistence.min_free_mb", cfg.Persistence.MinFreeMB, 256},
		{"persistence min free bytes", cfg.Persistence.MinFreeBytes(), int64(256 << 20)},
		{"search.api_key unset", cfg.Search.APIKey, ""},
		{"search enabled", cfg.Search.Enabled(), false},
		{"profiles", len(cfg.Context.Profiles), 4},
		{"preset review humor", *cfg.Personality.Presets["review"].Humor, 0.0},
		{"system gates", len(cfg.Gates.System), 2},
		{"active_goal", cfg.ActiveGoal, ""},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

// TestDefaultsGolden pins the effective defaults; run with -update to rewrite.
func TestDefaultsGolden(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{})
	got, err := yaml.Parser().Marshal(cfg.plain())
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "defaults.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestDefaultsGolden -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("effective defaults differ from %s (run with -update if intended):\n%s", golden, got)
	}
}

// TestDumpRoundTrips checks that every field's tag survives dump and Load, so the
// dump shows the configuration Load would build from it.
func TestDumpRoundTrips(t *testing.T) {
	base := mustLoad(t, LoadOptions{Overrides: map[string]any{
		"silas.search.api_key":                   "k-123",
		"silas.channels.web.allowed_origins":     "https://a.example.com",
		"silas.personality.presets.mine.warmth":  0.3,
		"silas.providers.local.base_url":         "http://127.0.0.1:8080/v1",
		"silas.context.profiles.tiny.memory_pct": 0.1,
	}})
	out, err := yaml.Parser().Marshal(base.plain())
	if err != nil {
		t.Fatal(err)
	}
	again := mustLoad(t, LoadOptions{Path: writeConfig(t, string(out))})
	if !reflect.DeepEqual(base, again) {
		t.Errorf("config changed after a dump and reload:\nbefore %v\nafter  %v", base, again)
	}
}

func TestFileOverridesDefaults(t *testing.T) {
	path := writeConfig(t, `
silas:
  owner_id: alice
  channels:
    web:
      port: 9001
      allowed_origins: ["https://app.example.com"]
  context:
    profiles:
      tiny: { chronicle_pct: 0.1, memory_pct: 0.1, workspace_pct: 0.1 }
  gates:
    system: []
`)
	cfg := mustLoad(t, LoadOptions{Path: path})
	if cfg.OwnerID != "alice" || cfg.Channels.Web.Port != 9001 {
		t.Errorf("owner_id=%q port=%d, want alice 9001", cfg.OwnerID, cfg.Channels.Web.Port)
	}
	if cfg.Channels.Web.Host != "127.0.0.1" {
		t.Errorf("host = %q; a sibling in the file must not erase the default", cfg.Channels.Web.Host)
	}
	if !reflect.DeepEqual(cfg.Channels.Web.AllowedOrigins, []string{"https://app.example.com"}) {
		t.Errorf("allowed_origins = %v", cfg.Channels.Web.AllowedOrigins)
	}
	if names := cfg.ProfileNames(); !names["tiny"] || !names["coding"] {
		t.Errorf("profiles = %v, want defaults merged with tiny", names)
	}
	if len(cfg.Gates.System) != 0 {
		t.Errorf("gates.system = %v; a list in the file replaces the default list", cfg.Gates.System)
	}
}

func TestNullSectionKeepsDefaults(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{Path: writeConfig(t, "silas:\n  channels:\n  limits: ~\n")})
	if cfg.Channels.Web.Port != 8420 || cfg.Limits.MaxGateEvalsPerTurn != 32 {
		t.Errorf("port=%d max_gate_evals=%d; an empty section must keep its defaults",
			cfg.Channels.Web.Port, cfg.Limits.MaxGateEvalsPerTurn)
	}
}

func TestEnvOverrides(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{Environ: []string{
		"SILAS_CHANNELS__WEB__PORT=9000",
		"SILAS_OWNER_ID=bob",
		"SILAS_PERSISTENCE__SYNC_WRITES=false",
		"SILAS_CONTEXT__PROFILES__CODING__WORKSPACE_PCT=0.35",
		"SILAS_SEARCH__ALLOWED_DOMAINS=example.com, go.dev",
		"SILAS_PROVIDERS__LOCAL__BASE_URL=http://127.0.0.1:11434/v1",
		"SILAS_MODELS__SCORER=local:qwen2.5:7b",
		"SILAS_LOG__LEVEL=",      // empty: ignored
		"OTHER_CHANNELS__X=1",    // not ours
		"SILAS_TELEGRAM_TOKEN=t", // referenced by ${...}: not a key
	}})
	checks := []struct {
		name      string
		got, want any
	}{
		{"port", cfg.Channels.Web.Port, 9000},
		{"owner_id", cfg.OwnerID, "bob"},
		{"sync_writes", cfg.Persistence.SyncWrites, false},
		{"coding workspace", cfg.Context.Profiles["coding"].WorkspacePct, 0.35},
		{"coding chronicle kept", cfg.Context.Profiles["coding"].ChroniclePct, 0.20},
		{"allowed_domains", cfg.Search.AllowedDomains, []string{"example.com", "go.dev"}},
		{"local provider", cfg.Providers["local"].BaseURL, "http://127.0.0.1:11434/v1"},
		{"scorer", cfg.Models.Scorer, ModelChain{"local:qwen2.5:7b"}},
		{"log level", cfg.Log.Level, "info"},
		{"telegram token", cfg.Channels.Telegram.Token, "t"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestPrecedence(t *testing.T) {
	file := writeConfig(t, "silas:\n  channels:\n    web:\n      port: 1001\n  owner_id: from-file\n  data_dir: ./file-data\n")
	cases := []struct {
		name      string
		env       []string
		overrides map[string]any
		wantPort  int
		wantOwner string
	}{
		{"file over defaults", nil, nil, 1001, "from-file"},
		{"env over file", []string{"SILAS_CHANNELS__WEB__PORT=1002"}, nil, 1002, "from-file"},
		{"overrides over env", []string{"SILAS_CHANNELS__WEB__PORT=1002", "SILAS_OWNER_ID=env"},
			map[string]any{"silas.channels.web.port": 1003}, 1003, "env"},
		{"string override is typed", nil, map[string]any{"silas.channels.web.port": "1004", "silas.owner_id": "flag"}, 1004, "flag"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := c.env
			if env == nil {
				env = noEnv()
			}
			cfg := mustLoad(t, LoadOptions{Path: file, Environ: env, Overrides: c.overrides})
			if cfg.Channels.Web.Port != c.wantPort || cfg.OwnerID != c.wantOwner {
				t.Errorf("port=%d owner=%q, want %d %q", cfg.Channels.Web.Port, cfg.OwnerID, c.wantPort, c.wantOwner)
			}
		})
	}
}

func TestSandboxDirsFollowDataDir(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "state")
	cases := []struct {
		name                   string
		overrides              map[string]any
		wantVerify, wantCustom string
	}{
		{"defaults", nil, "./data/verify", "./data/customer_context"},
		{"data_dir moves both", map[string]any{"silas.data_dir": data},
			filepath.Join(data, "verify"), filepath.Join(data, "customer_context")},
		{"explicit dir is kept", map[string]any{"silas.data_dir": data, "silas.sandbox.verify_dir": filepath.Join(root, "v")},
			filepath.Join(root, "v"), filepath.Join(data, "customer_context")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mustLoad(t, LoadOptions{Overrides: c.overrides})
			if cfg.Sandbox.VerifyDir != c.wantVerify || cfg.Sandbox.CustomerContextDir != c.wantCustom {
				t.Errorf("verify=%q customer=%q, want %q %q",
					cfg.Sandbox.VerifyDir, cfg.Sandbox.CustomerContextDir, c.wantVerify, c.wantCustom)
			}
		})
	}
}

func TestVarExpansion(t *testing.T) {
	file := writeConfig(t, `
silas:
  search:
    api_key: "${MY_SEARCH_KEY}"
  chatbot:
    system_prompt: "Hello ${WHO}, cost is $5 and ${not a var} stays"
  channels:
    web:
      auth_token: "${UNSET_TOKEN}"
`)
	cases := []struct {
		name       string
		env        []string
		wantKey    string
		wantPrompt string
		wantSearch bool
	}{
		{"set", []string{"MY_SEARCH_KEY=sk-1", "WHO=Ann"}, "sk-1", "Hello Ann, cost is $5 and ${not a var} stays", true},
		{"unset is null", []string{}, "", "Hello , cost is $5 and ${not a var} stays", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mustLoad(t, LoadOptions{Path: file, Environ: c.env})
			if cfg.Search.APIKey != c.wantKey || cfg.Chatbot.SystemPrompt != c.wantPrompt || cfg.Search.Enabled() != c.wantSearch {
				t.Errorf("api_key=%q prompt=%q enabled=%v", cfg.Search.APIKey, cfg.Chatbot.SystemPrompt, cfg.Search.Enabled())
			}
			if cfg.Channels.Web.AuthToken != "" {
				t.Errorf("auth_token = %q, want empty", cfg.Channels.Web.AuthToken)
			}
		})
	}
	t.Run("defaults read telegram variables", func(t *testing.T) {
		cfg := mustLoad(t, LoadOptions{Environ: []string{"SILAS_TELEGRAM_TOKEN=123:abc", "SILAS_TELEGRAM_OWNER_ID=42", "SEARCH_API_KEY=s"}})
		tg := cfg.Channels.Telegram
		if tg.Token != "123:abc" || tg.OwnerChatID != "42" || !cfg.Search.Enabled() {
			t.Errorf("telegram=%+v search enabled=%v", tg, cfg.Search.Enabled())
		}
	})
}

func TestConfigFileLocation(t *testing.T) {
	t.Run("explicit missing path", func(t *testing.T) {
		_, err := Load(LoadOptions{Path: filepath.Join(t.TempDir(), "nope.yaml"), Environ: noEnv()})
		if !errors.Is(err, ErrFileNotFound) {
			t.Fatalf("err = %v, want ErrFileNotFound", err)
		}
		wantErr(t, err, "nope.yaml")
	})
	t.Run("default path absent is skipped", func(t *testing.T) {
		t.Chdir(t.TempDir())
		cfg := mustLoad(t, LoadOptions{})
		if cfg.OwnerID != "owner" {
			t.Errorf("owner_id = %q", cfg.OwnerID)
		}
	})
	t.Run("default path present is read", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		if err := os.MkdirAll("config", 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(DefaultPath, []byte("silas:\n  owner_id: from-default-path\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if cfg := mustLoad(t, LoadOptions{}); cfg.OwnerID != "from-default-path" {
			t.Errorf("owner_id = %q", cfg.OwnerID)
		}
	})
}

func TestBadFiles(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"syntax", "silas: [unclosed", []string{"parse config", "fix the YAML syntax"}},
		{"top level list", "- a\n- b\n", []string{"parse config"}},
		{"int as string", "silas:\n  channels:\n    web:\n      port: abc\n", []string{"silas.channels.web.port", "want a whole number"}},
		{"fractional int", "silas:\n  limits:\n    max_gate_evals_per_turn: 2.5\n", []string{"silas.limits.max_gate_evals_per_turn", "whole number"}},
		{"bool", "silas:\n  persistence:\n    sync_writes: maybe\n", []string{"silas.persistence.sync_writes", "true or false"}},
		{"section as scalar", "silas:\n  channels: 3\n", []string{"silas.channels", "mapping"}},
		{"list as map", "silas:\n  personality:\n    constitution: {a: b}\n", []string{"silas.personality.constitution", "want a list"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(LoadOptions{Path: writeConfig(t, c.yaml), Environ: noEnv()})
			wantErr(t, err, c.want...)
		})
	}
}

func TestHelpers(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{})
	if got, want := cfg.DataPath("keys", "owner.key"), filepath.Join("data", "keys", "owner.key"); got != want {
		t.Errorf("DataPath = %q, want %q", got, want)
	}
	if got := cfg.Channels.Web.Addr(); got != "127.0.0.1:8420" {
		t.Errorf("Addr = %q", got)
	}
	names := cfg.ProfileNames()
	for _, n := range []string{"conversation", "coding", "research", "support"} {
		if !names[n] {
			t.Errorf("ProfileNames lacks %q: %v", n, names)
		}
	}
	if len(names) != 4 {
		t.Errorf("ProfileNames = %v", names)
	}
	if !strings.HasPrefix(cfg.LLM.Timeout().String(), "1m") {
		t.Errorf("LLM.Timeout = %v", cfg.LLM.Timeout())
	}
}
