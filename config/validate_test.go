package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirs makes data_dir and sandbox directories under a temporary root.
func dirs(t *testing.T, c *Config) string {
	t.Helper()
	root := t.TempDir()
	c.DataDir = filepath.Join(root, "data")
	c.Sandbox.VerifyDir = filepath.Join(root, "data", "verify")
	c.Sandbox.CustomerContextDir = filepath.Join(root, "data", "customer_context")
	c.Gates.ScriptDir = filepath.Join(root, "data", "gates")
	return root
}

func TestValidateRules(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, c *Config)
		want   []string // the key, then fragments of the fix
	}{
		// channels.web
		{"any-address host needs token", func(t *testing.T, c *Config) { c.Channels.Web.Host = "0.0.0.0" },
			[]string{"silas.channels.web.auth_token", "SILAS_CHANNELS__WEB__AUTH_TOKEN", "bind to 127.0.0.1"}},
		{"LAN host needs token", func(t *testing.T, c *Config) { c.Channels.Web.Host = "192.168.1.5" },
			[]string{"silas.channels.web.auth_token", `"192.168.1.5" is not loopback`}},
		{"IPv6 any needs token", func(t *testing.T, c *Config) { c.Channels.Web.Host = "::" },
			[]string{"silas.channels.web.auth_token"}},
		{"public hostname needs token", func(t *testing.T, c *Config) { c.Channels.Web.Host = "silas.example.com" },
			[]string{"silas.channels.web.auth_token"}},
		{"short token on public host", func(t *testing.T, c *Config) {
			c.Channels.Web.Host, c.Channels.Web.AuthToken = "0.0.0.0", "short"
		}, []string{"silas.channels.web.auth_token", "shorter than 16"}},
		{"empty host", func(t *testing.T, c *Config) { c.Channels.Web.Host = "" }, []string{"silas.channels.web.host", "127.0.0.1"}},
		{"port negative", func(t *testing.T, c *Config) { c.Channels.Web.Port = -1 }, []string{"silas.channels.web.port", "1 and 65535"}},
		{"port too high", func(t *testing.T, c *Config) { c.Channels.Web.Port = 70000 }, []string{"silas.channels.web.port", "got 70000"}},
		{"bad origin", func(t *testing.T, c *Config) { c.Channels.Web.AllowedOrigins = []string{"https://ok.example.com", "*"} },
			[]string{"silas.channels.web.allowed_origins[1]", "scheme and host"}},
		{"origin with path", func(t *testing.T, c *Config) { c.Channels.Web.AllowedOrigins = []string{"https://a.example.com/app"} },
			[]string{"silas.channels.web.allowed_origins[0]"}},
		{"tiny frames", func(t *testing.T, c *Config) { c.Channels.Web.MaxFrameBytes = 10 }, []string{"silas.channels.web.max_frame_bytes", "at least 1024"}},
		{"no send queue", func(t *testing.T, c *Config) { c.Channels.Web.SendQueue = 0 }, []string{"silas.channels.web.send_queue"}},
		{"no auth timeout", func(t *testing.T, c *Config) { c.Channels.Web.AuthTimeoutSeconds = 0 }, []string{"silas.channels.web.auth_timeout_seconds"}},
		{"telegram without token", func(t *testing.T, c *Config) { c.Channels.Telegram.Enabled = true },
			[]string{"silas.channels.telegram.token", "SILAS_TELEGRAM_TOKEN"}},
		{"no channel at all", func(t *testing.T, c *Config) { c.Channels.Web.Enabled = false },
			[]string{"silas.channels.web.enabled", "nothing could reach Silas"}},
		{"cli channel in serve", func(t *testing.T, c *Config) { c.Channels.CLI.Enabled = true },
			[]string{"silas.channels.cli.enabled", "silas chat"}},
		{"telegram chat id not numeric", func(t *testing.T, c *Config) {
			c.Channels.Telegram = Telegram{Enabled: true, Token: "1:t", OwnerChatID: "me", APIURL: "https://api.telegram.org"}
		}, []string{"silas.channels.telegram.owner_chat_id", "numeric", "silas telegram pair"}},
		{"telegram token malformed", func(t *testing.T, c *Config) {
			c.Channels.Telegram.Enabled, c.Channels.Telegram.Token = true, "1:abc def"
		}, []string{"silas.channels.telegram.token", "@BotFather"}},
		{"telegram api url plain http remote", func(t *testing.T, c *Config) {
			c.Channels.Telegram.APIURL = "http://bot.example.com"
		}, []string{"silas.channels.telegram.api_url", "expose the bot token"}},
		{"telegram api url not a url", func(t *testing.T, c *Config) { c.Channels.Telegram.APIURL = "api.telegram.org" },
			[]string{"silas.channels.telegram.api_url", "https://api.telegram.org"}},
		{"telegram webhook over http", func(t *testing.T, c *Config) {
			c.Channels.Telegram.WebhookURL = "http://silas.example.com/telegram/webhook"
		}, []string{"silas.channels.telegram.webhook_url", "https"}},
		{"telegram webhook bad port", func(t *testing.T, c *Config) {
			c.Channels.Telegram.WebhookURL = "https://silas.example.com:9000/telegram/webhook"
		}, []string{"silas.channels.telegram.webhook_url", "port 9000", "8443"}},
		{"telegram webhook outside its path", func(t *testing.T, c *Config) {
			c.Channels.Telegram.WebhookURL = "https://silas.example.com/ws"
		}, []string{"silas.channels.telegram.webhook_url", "/telegram/"}},
		{"telegram webhook without the web channel", func(t *testing.T, c *Config) {
			c.Channels.Telegram = Telegram{Enabled: true, Token: "1:abc", APIURL: "https://api.telegram.org", WebhookURL: "https://silas.example.com/telegram/hook"}
			c.Channels.Web.Enabled = false
		}, []string{"silas.channels.telegram.webhook_url", "enable silas.channels.web"}},
		{"telegram webhook on the pairing endpoint", func(t *testing.T, c *Config) {
			c.Channels.Telegram.WebhookURL = "https://silas.example.com/telegram/pair"
		}, []string{"silas.channels.telegram.webhook_url", "pairing endpoint"}},
		{"telegram pairing without the web channel", func(t *testing.T, c *Config) {
			c.Channels.Telegram = Telegram{Enabled: true, Token: "1:abc"}
			c.Channels.Web.Enabled = false
		}, []string{"silas.channels.telegram.owner_chat_id", "enable silas.channels.web"}},
		{"telegram web app url with query", func(t *testing.T, c *Config) {
			c.Channels.Telegram.WebAppURL = "https://silas.example.com/?a=b"
		}, []string{"silas.channels.telegram.web_app_url"}},

		// rehydration
		{"no scope idle timeout", func(t *testing.T, c *Config) { c.Rehydration.ScopeIdleTimeoutSeconds = 0 },
			[]string{"silas.rehydration.scope_idle_timeout_seconds", "at least 1"}},

		// persistence
		{"negative watermark", func(t *testing.T, c *Config) { c.Persistence.MinFreeMB = -1 },
			[]string{"silas.persistence.min_free_mb", "between 0 (off) and", "got -1"}},
		{"watermark in bytes by mistake", func(t *testing.T, c *Config) { c.Persistence.MinFreeMB = 256 << 20 },
			[]string{"silas.persistence.min_free_mb", "the default is 256"}},

		// process
		{"memory limit too small to run", func(t *testing.T, c *Config) { c.Process.MemorySoftLimitMB = 8 },
			[]string{"silas.process.memory_soft_limit_mb", "between 48 and", "got 8"}},
		{"negative memory limit", func(t *testing.T, c *Config) { c.Process.MemorySoftLimitMB = -1 },
			[]string{"silas.process.memory_soft_limit_mb", "got -1"}},

		{"data dir under a regular file", func(t *testing.T, c *Config) {
			root := dirs(t, c)
			file := filepath.Join(root, "file")
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			c.DataDir = filepath.Join(file, "data")
			c.Sandbox.VerifyDir = filepath.Join(root, "verify")
		}, []string{"silas.data_dir", "cannot resolve", "file/data", "must be a directory"}},

		// sandbox paths
		{"verify and customer dirs equal", func(t *testing.T, c *Config) {
			dirs(t, c)
			c.Sandbox.VerifyDir = c.Sandbox.CustomerContextDir + "/sub/.."
		}, []string{"silas.sandbox.customer_context_dir", "same directory as silas.sandbox.verify_dir"}},
		{"verify dir inside customer dir", func(t *testing.T, c *Config) {
			dirs(t, c)
			c.Sandbox.VerifyDir = filepath.Join(c.Sandbox.CustomerContextDir, "verify")
		}, []string{"silas.sandbox.verify_dir", "inside silas.sandbox.customer_context_dir"}},
		{"customer dir outside data dir", func(t *testing.T, c *Config) {
			root := dirs(t, c)
			c.Sandbox.CustomerContextDir = filepath.Join(root, "elsewhere")
		}, []string{"silas.sandbox.customer_context_dir", "must be inside silas.data_dir"}},
		{"customer dir is data dir", func(t *testing.T, c *Config) {
			dirs(t, c)
			c.Sandbox.CustomerContextDir = c.DataDir
		}, []string{"silas.sandbox.customer_context_dir", "must be inside silas.data_dir"}},
		{"customer dir world-writable", func(t *testing.T, c *Config) {
			dirs(t, c)
			if err := os.MkdirAll(c.Sandbox.CustomerContextDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(c.Sandbox.CustomerContextDir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, []string{"silas.sandbox.customer_context_dir", "world-writable", "chmod o-w"}},
		{"customer dir via symlink outside data", func(t *testing.T, c *Config) {
			root := dirs(t, c)
			outside := filepath.Join(root, "outside")
			if err := os.MkdirAll(outside, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(c.DataDir, "link")); err != nil {
				t.Fatal(err)
			}
			c.Sandbox.CustomerContextDir = filepath.Join(c.DataDir, "link", "cc")
		}, []string{"silas.sandbox.customer_context_dir", "must be inside silas.data_dir"}},
		{"bad backend", func(t *testing.T, c *Config) { c.Sandbox.Backend = "chroot" }, []string{"silas.sandbox.backend", "auto, namespaces, bwrap, subprocess", `"chroot"`}},
		{"script dir inside verify dir", func(t *testing.T, c *Config) {
			c.Gates.ScriptDir = filepath.Join(c.Sandbox.VerifyDir, "gates")
		}, []string{"silas.gates.script_dir", "silas.sandbox.verify_dir"}},
		{"script dir is the sandbox root", func(t *testing.T, c *Config) {
			c.Gates.ScriptDir = filepath.Join(c.DataDir, "sandbox")
		}, []string{"silas.gates.script_dir", "sandboxes"}},
		{"docker backend", func(t *testing.T, c *Config) { c.Sandbox.Backend = "docker" }, []string{"silas.sandbox.backend", "no docker backend"}},
		{"subprocess without allow_unisolated", func(t *testing.T, c *Config) { c.Sandbox.Backend = "subprocess" }, []string{"silas.sandbox.backend", "allow_unisolated: true"}},

		// context
		{"profile share above 1", func(t *testing.T, c *Config) {
			c.Context.Profiles["coding"] = Profile{ChroniclePct: 0.1, MemoryPct: 0.1, WorkspacePct: 1.2}
		}, []string{"silas.context.profiles.coding.workspace_pct", "between 0 and 1"}},
		{"profile share negative", func(t *testing.T, c *Config) {
			c.Context.Profiles["coding"] = Profile{ChroniclePct: -0.1, MemoryPct: 0.1, WorkspacePct: 0.1}
		}, []string{"silas.context.profiles.coding.chronicle_pct"}},
		{"profile sum above 0.80", func(t *testing.T, c *Config) {
			c.Context.Profiles["coding"] = Profile{ChroniclePct: 0.25, MemoryPct: 0.20, WorkspacePct: 0.40}
		}, []string{"silas.context.profiles.coding: chronicle_pct+memory_pct+workspace_pct = 0.85 exceeds 0.80"}},
		{"default profile missing", func(t *testing.T, c *Config) { c.Context.DefaultProfile = "chat" },
			[]string{"silas.context.default_profile", `"chat" is not a profile`, "coding, conversation"}},
		{"skill metadata budget", func(t *testing.T, c *Config) { c.Context.SkillMetadataBudgetPct = 0.2 },
			[]string{"silas.context.skill_metadata_budget_pct", "between 0 and 0.1"}},
		{"scorer below eviction", func(t *testing.T, c *Config) { c.Context.ScorerThresholdPct = 0.5 },
			[]string{"silas.context.scorer_threshold_pct", "eviction_threshold_pct"}},
		{"system zone too big", func(t *testing.T, c *Config) { c.Context.SystemMax = c.Context.TotalTokens },
			[]string{"silas.context.system_max"}},

		// interaction and personality
		{"register missing", func(t *testing.T, c *Config) { delete(c.Interaction.DefaultModeByRegister, "status") },
			[]string{"silas.interaction.default_mode_by_register.status", "is missing"}},
		{"register mode invalid", func(t *testing.T, c *Config) { c.Interaction.DefaultModeByRegister["review"] = "yolo" },
			[]string{"silas.interaction.default_mode_by_register.review", "act_and_report"}},
		{"unknown register", func(t *testing.T, c *Config) { c.Interaction.DefaultModeByRegister["exploraton"] = "act_and_report" },
			[]string{"silas.interaction.default_mode_by_register.exploraton", "not a register"}},
		{"baseline out of range", func(t *testing.T, c *Config) { c.Personality.Baseline.Humor = 1.5 },
			[]string{"silas.personality.baseline.humor"}},
		{"preset out of range", func(t *testing.T, c *Config) {
			v := -0.5
			c.Personality.Presets["work"] = AxisOverrides{Warmth: &v}
		}, []string{"silas.personality.presets.work.warmth"}},
		{"scope mode", func(t *testing.T, c *Config) { c.Personality.ScopeMode = "global" }, []string{"silas.personality.scope_mode"}},
		{"directive tokens inverted", func(t *testing.T, c *Config) { c.Personality.DirectiveTokensMax = 100 },
			[]string{"silas.personality.directive_tokens_max"}},

		// autonomy, batch review, approvals
		{"no hysteresis", func(t *testing.T, c *Config) { c.Autonomy.WidenCorrectionRateMax = 0.3 },
			[]string{"silas.autonomy.widen_correction_rate_max", "below silas.autonomy.tighten_correction_rate_min"}},
		{"batch size above autonomy max", func(t *testing.T, c *Config) { c.BatchReview.DefaultSize = 60 },
			[]string{"silas.autonomy.max_batch_review_size", "at least silas.batch_review.default_size (60)"}},
		{"confidence bands inverted", func(t *testing.T, c *Config) { c.BatchReview.Confidence.MediumMin = 0.9 },
			[]string{"silas.batch_review.confidence.medium_min"}},
		{"nonce ttl below token ttl", func(t *testing.T, c *Config) { c.NonceStore.TTLMinutes = 10 },
			[]string{"silas.nonce_store.ttl_minutes", "replay"}},
		{"irreversible auto-approve", func(t *testing.T, c *Config) { c.Approval.AutoApproveRiskLevels = []string{"low", "irreversible"} },
			[]string{"silas.approval.auto_approve_risk_levels[1]", "never auto-approved"}},
		{"strength other than tap", func(t *testing.T, c *Config) { c.Approval.ScopeMinStrength["self_update"] = "biometric" },
			[]string{"silas.approval.scope_min_strength.self_update", "tap"}},
		{"unknown approval scope", func(t *testing.T, c *Config) { c.Approval.ScopeMinStrength["everything"] = "tap" },
			[]string{"silas.approval.scope_min_strength.everything", "not an approval scope"}},
		{"no approval request timeout", func(t *testing.T, c *Config) { c.Approval.RequestTimeoutSeconds = 0 },
			[]string{"silas.approval.request_timeout_seconds", "at least 1"}},

		// scheduler, suggestions, skills
		{"suggestions without scheduler", func(t *testing.T, c *Config) { c.Scheduler.Enabled = false },
			[]string{"silas.suggestions.enabled", "requires silas.scheduler.enabled"}},
		{"external import without report", func(t *testing.T, c *Config) { c.Skills.Import.RequireTransformReport = false },
			[]string{"silas.skills.import.require_transform_report", "allow_external"}},
		{"description bounds inverted", func(t *testing.T, c *Config) { c.Skills.Validation.DescriptionMinChars = 2000 },
			[]string{"silas.skills.validation.description_min_chars", "must not exceed"}},
		{"unknown import source", func(t *testing.T, c *Config) { c.Skills.Import.AllowedSources = []string{"githb"} },
			[]string{"silas.skills.import.allowed_sources[0]", "github, local_path"}},
		{"bad timezone", func(t *testing.T, c *Config) { c.Scheduler.Timezone = "Mars/Olympus" },
			[]string{"silas.scheduler.timezone", "IANA"}},
		{"bad cron", func(t *testing.T, c *Config) { c.Suggestions.HeartbeatCron = "every minute" },
			[]string{"silas.suggestions.heartbeat_cron", "cron"}},
		{"missing goal file", func(t *testing.T, c *Config) { c.ActiveGoal = filepath.Join(t.TempDir(), "goal.md") },
			[]string{"silas.active_goal", "does not exist"}},

		// models and providers
		{"model with unknown provider", func(t *testing.T, c *Config) { c.Models.Planner = ModelChain{"anthropic:claude"} },
			[]string{"silas.models.planner", `provider "anthropic" is not configured`, "silas.providers.anthropic"}},
		{"model without provider", func(t *testing.T, c *Config) { c.Models.Proxy = ModelChain{"gpt-4o"} },
			[]string{"silas.models.proxy", "<provider>:<model id>"}},
		{"gate model unknown provider", func(t *testing.T, c *Config) { c.Gates.LLMDefaults.Model = "x:y" },
			[]string{"silas.gates.llm_defaults.model", "not configured"}},
		{"provider url", func(t *testing.T, c *Config) { c.Providers["openrouter"] = Provider{BaseURL: "openrouter.ai"} },
			[]string{"silas.providers.openrouter.base_url", "http(s) URL"}},
		{"provider key env is a key", func(t *testing.T, c *Config) {
			c.Providers["openrouter"] = Provider{BaseURL: "https://x.example", APIKeyEnv: "sk-or-v1-abc"}
		}, []string{"silas.providers.openrouter.api_key_env", "environment variable"}},
		{"no providers", func(t *testing.T, c *Config) { c.Providers = nil }, []string{"silas.providers", "add one"}},
		{"llm backoff inverted", func(t *testing.T, c *Config) { c.LLM.BackoffMaxMS = 100 }, []string{"silas.llm.backoff_max_ms"}},
		{"llm negative retries", func(t *testing.T, c *Config) { c.LLM.MaxRetries = -1 }, []string{"silas.llm.max_retries"}},

		// gates
		{"gate trigger", func(t *testing.T, c *Config) { c.Gates.System[0].On = "sometimes" },
			[]string{"silas.gates.system[0].on", "every_user_message"}},
		{"gate duplicate name", func(t *testing.T, c *Config) { c.Gates.System[1].Name = c.Gates.System[0].Name },
			[]string{"silas.gates.system[1].name", "unique"}},
		{"gate after_step without step", func(t *testing.T, c *Config) { c.Gates.System[0].On = "after_step" },
			[]string{"silas.gates.system[0].after_step"}},
		{"gate temperature", func(t *testing.T, c *Config) { c.Gates.LLMDefaults.Temperature = 3 },
			[]string{"silas.gates.llm_defaults.temperature"}},

		// limits, sizes, logging
		{"negative limit", func(t *testing.T, c *Config) { c.Limits.WSMessagesPerMinutePerIP = -5 },
			[]string{"silas.limits.ws_messages_per_minute_per_ip", "at least 1"}},
		{"no parallel executor", func(t *testing.T, c *Config) { c.Limits.MaxParallelExecutorsPerScope = 0 },
			[]string{"silas.limits.max_parallel_executors_per_scope", "at least 1"}},
		{"backpressure total below scope", func(t *testing.T, c *Config) { c.Backpressure.MaxPendingTurnsTotal = 5 },
			[]string{"silas.backpressure.max_pending_turns_total"}},
		{"owner reservation is zero", func(t *testing.T, c *Config) { c.Backpressure.OwnerReservedTurns = 0 },
			[]string{"silas.backpressure.owner_reserved_turns", "at least 1"}},
		{"owner reservation leaves customers nothing", func(t *testing.T, c *Config) {
			c.Backpressure.OwnerReservedTurns = c.Backpressure.MaxPendingTurnsTotal
		}, []string{"silas.backpressure.owner_reserved_turns", "less than silas.backpressure.max_pending_turns_total (500)"}},
		{"per-ip bound", func(t *testing.T, c *Config) { c.Backpressure.MaxPendingTurnsPerIP = 0 },
			[]string{"silas.backpressure.max_pending_turns_per_ip", "at least 1"}},
		{"log format", func(t *testing.T, c *Config) { c.Log.Format = "text" }, []string{"silas.log.format", "json, console"}},
		{"log level", func(t *testing.T, c *Config) { c.Log.Level = "loud" }, []string{"silas.log.level"}},
		{"owner id", func(t *testing.T, c *Config) { c.OwnerID = " " }, []string{"silas.owner_id", "must not be empty"}},
		{"search domain with scheme", func(t *testing.T, c *Config) { c.Search.AllowedDomains = []string{"https://example.com"} },
			[]string{"silas.search.allowed_domains[0]", "bare domain"}},
		{"chatbot ttl", func(t *testing.T, c *Config) { c.Chatbot.SessionTTLHours = 0 }, []string{"silas.chatbot.session_ttl_hours"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mustLoad(t, LoadOptions{})
			c.mutate(t, cfg)
			err := cfg.Validate()
			wantErr(t, err, c.want...)
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("err does not wrap ErrInvalid: %v", err)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, c *Config)
	}{
		{"defaults", func(t *testing.T, c *Config) {}},
		{"public host with token", func(t *testing.T, c *Config) {
			c.Channels.Web.Host, c.Channels.Web.AuthToken = "0.0.0.0", "0123456789abcdef0123"
		}},
		{"public host with web disabled, telegram on", func(t *testing.T, c *Config) {
			c.Channels.Web.Host, c.Channels.Web.Enabled = "0.0.0.0", false
			c.Channels.Telegram = Telegram{Enabled: true, Token: "1:abc", OwnerChatID: "-100123"}
		}},
		{"loopback variants", func(t *testing.T, c *Config) { c.Channels.Web.Host = "::1" }},
		{"port zero picks a free port", func(t *testing.T, c *Config) { c.Channels.Web.Port = 0 }},
		{"watermark off", func(t *testing.T, c *Config) { c.Persistence.MinFreeMB = 0 }},
		{"existing private customer dir", func(t *testing.T, c *Config) {
			dirs(t, c)
			if err := os.MkdirAll(c.Sandbox.CustomerContextDir, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"telegram configured", func(t *testing.T, c *Config) {
			c.Channels.Telegram = Telegram{Enabled: true, Token: "1:abc", OwnerChatID: "-100123", APIURL: "https://api.telegram.org"}
		}},
		{"telegram pairing instead of a chat id", func(t *testing.T, c *Config) {
			c.Channels.Telegram.Enabled, c.Channels.Telegram.Token, c.Channels.Telegram.OwnerChatID = true, "123456:AAH-x_y", ""
		}},
		{"telegram webhook and local bot api", func(t *testing.T, c *Config) {
			c.Channels.Telegram = Telegram{Enabled: true, Token: "1:abc", APIURL: "http://127.0.0.1:8081",
				WebhookURL: "https://silas.example.com:8443/telegram/webhook", WebAppURL: "https://silas.example.com/"}
		}},
		{"suggestions off without scheduler", func(t *testing.T, c *Config) {
			c.Scheduler.Enabled, c.Suggestions.Enabled = false, false
		}},
		{"profile at exactly 0.80", func(t *testing.T, c *Config) {
			c.Context.Profiles["edge"] = Profile{ChroniclePct: 0.1, MemoryPct: 0.3, WorkspacePct: 0.4}
		}},
		{"custom provider", func(t *testing.T, c *Config) {
			c.Providers["local"] = Provider{BaseURL: "http://127.0.0.1:8080/v1"}
			c.Models.Executor = ModelChain{"local:qwen2.5-coder:7b"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mustLoad(t, LoadOptions{})
			c.mutate(t, cfg)
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestValidateCollectsAll(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{})
	cfg.Channels.Web.Port = 65536
	cfg.Log.Format = "xml"
	cfg.Context.DefaultProfile = "none"
	err := cfg.Validate()
	wantErr(t, err, "silas.channels.web.port", "silas.log.format", "silas.context.default_profile")
	if lines := strings.Split(err.Error(), "\n"); len(lines) != 3 {
		t.Errorf("want one line per problem, got %d:\n%v", len(lines), err)
	}
	var ke *KeyError
	if !errors.As(err, &ke) || !strings.HasPrefix(ke.Key, "silas.") {
		t.Errorf("errors.As KeyError: %v", ke)
	}
}

func TestLoadValidates(t *testing.T) {
	_, err := Load(LoadOptions{Environ: []string{"SILAS_CHANNELS__WEB__HOST=0.0.0.0", "SILAS_LOG__FORMAT=text"}})
	wantErr(t, err, "configuration has 2 problems", "silas.channels.web.auth_token", "silas.log.format")
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("err does not wrap ErrInvalid: %v", err)
	}
}

func TestIsLoopbackHost(t *testing.T) {
	cases := []struct {
		host string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.1.2.3", true},
		{"::1", true},
		{"[::1]", true},
		{"localhost", true},
		{"LocalHost", true},
		{"::ffff:127.0.0.1", true},
		{"0.0.0.0", false},
		{"::", false},
		{"", false},
		{"192.168.1.10", false},
		{"128.0.0.1", false},
		{"localhost.evil.example", false},
		{"example.com", false},
	}
	for _, c := range cases {
		cfg := Config{Channels: Channels{Web: Web{Host: c.host}}}
		if got := cfg.IsLoopbackHost(); got != c.want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", c.host, got, c.want)
		}
	}
}
