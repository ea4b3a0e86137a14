package config

import (
	"strconv"

	"github.com/rs/zerolog"
)

// validateBasics checks identity, sizes and limits that have no cross-field rule.
func (c *Config) validateBasics(p *problems) {
	p.required("owner_id", c.OwnerID, `set it to the owner's scope id, e.g. "owner"`)
	p.required("data_dir", c.DataDir, `set it to the directory for durable state, e.g. "./data"`)
	p.required("skills_dir", c.SkillsDir, `set it to the custom skills directory, e.g. "./silas/skills"`)

	p.atLeast("llm.timeout_seconds", c.LLM.TimeoutSeconds, 1)
	p.atLeast("llm.max_retries", c.LLM.MaxRetries, 0)
	p.atLeast("llm.backoff_initial_ms", c.LLM.BackoffInitialMS, 1)
	if c.LLM.BackoffMaxMS < c.LLM.BackoffInitialMS {
		p.add("llm.backoff_max_ms", "must be at least silas.llm.backoff_initial_ms (%d), got %d",
			c.LLM.BackoffInitialMS, c.LLM.BackoffMaxMS)
	}

	c.Search.validate(p)

	p.atLeast("rehydration.max_chronicle_entries", c.Rehydration.MaxChronicleEntries, 0)
	p.atLeast("rehydration.scope_idle_timeout_seconds", c.Rehydration.ScopeIdleTimeoutSeconds, 1)
	if mb := c.Persistence.MinFreeMB; mb < 0 || mb > maxMinFreeMB {
		p.add("persistence.min_free_mb", "must be between 0 (off) and %d MB, got %d; the default is 256", maxMinFreeMB, mb)
	}
	if mb := c.Process.MemorySoftLimitMB; mb != 0 && (mb < minMemorySoftLimitMB || mb > maxMinFreeMB) {
		p.add("process.memory_soft_limit_mb", "must be 0 (the runtime's default) or between %d and %d MB, got %d; below %d MB the collector would run without pause", minMemorySoftLimitMB, maxMinFreeMB, mb, minMemorySoftLimitMB)
	}

	m := c.Memory
	c.validateEmbeddings(p)
	p.atLeast("memory.consolidation_interval_minutes", m.ConsolidationIntervalMinutes, 1)
	p.oneOf("memory.raw_reingestion_default_tier", m.RawReingestionDefaultTier, "active", "low_reingestion")
	p.oneOf("memory.portability_bundle_format", m.PortabilityBundleFormat, "jsonl-v1")

	p.atLeast("behavior_preferences.max_new_inferences_per_day", c.BehaviorPreferences.MaxNewInferencesPerDay, 0)
	p.atLeast("chatbot.session_ttl_hours", c.Chatbot.SessionTTLHours, 1)
	p.allAtLeast("limits", c.Limits, 1)

	b := c.Backpressure
	p.atLeast("backpressure.max_pending_turns_per_scope", b.MaxPendingTurnsPerScope, 1)
	if b.MaxPendingTurnsTotal < b.MaxPendingTurnsPerScope {
		p.add("backpressure.max_pending_turns_total", "must be at least silas.backpressure.max_pending_turns_per_scope (%d), got %d",
			b.MaxPendingTurnsPerScope, b.MaxPendingTurnsTotal)
	}
	if b.OwnerReservedTurns < 1 || b.OwnerReservedTurns >= b.MaxPendingTurnsTotal {
		p.add("backpressure.owner_reserved_turns", "must be at least 1 and less than silas.backpressure.max_pending_turns_total (%d), so that the owner and customers each have room; got %d",
			b.MaxPendingTurnsTotal, b.OwnerReservedTurns)
	}
	p.atLeast("backpressure.max_pending_turns_per_ip", b.MaxPendingTurnsPerIP, 1)
	p.atLeast("backpressure.shutdown_grace_seconds", b.ShutdownGraceSeconds, 0)

	sb := c.Sandbox
	switch sb.Backend {
	case "auto", "namespaces", "bwrap", "bubblewrap":
	case "subprocess":
		if !sb.AllowUnisolated {
			p.add("sandbox.backend", `"subprocess" does not isolate the filesystem (agent code could read the data dir and keys); `+
				`use "auto", or set silas.sandbox.allow_unisolated: true to accept that`)
		}
	case "docker":
		p.add("sandbox.backend", `there is no docker backend; use "auto" (the built-in namespaces sandbox, or bubblewrap)`)
	default:
		p.add("sandbox.backend", `must be one of auto, namespaces, bwrap, subprocess; got %q`, sb.Backend)
	}
	p.atLeast("sandbox.default_memory_mb", sb.DefaultMemoryMB, 1)
	p.atLeast("sandbox.default_cpu_seconds", sb.DefaultCPUSeconds, 1)

	p.atLeast("connections.recovery_max_attempts", c.Connections.RecoveryMaxAttempts, 0)
	p.atLeast("connections.script_timeout_seconds", c.Connections.ScriptTimeoutSeconds, 1)
	p.atLeast("connections.setup_timeout_seconds", c.Connections.SetupTimeoutSeconds, 1)

	if _, err := zerolog.ParseLevel(c.Log.Level); err != nil || c.Log.Level == "" {
		p.add("log.level", "must be one of trace, debug, info, warn, error, fatal, panic, disabled; got %q", c.Log.Level)
	}
	p.oneOf("log.format", c.Log.Format, "json", "console")
}

// minMemorySoftLimitMB is the smallest process.memory_soft_limit_mb: an
// idle daemon's heap is about 20 MB, and a limit under twice that would keep
// the collector running.
const minMemorySoftLimitMB = 48

// maxMinFreeMB bounds persistence.min_free_mb (1 TiB): a larger value is
// a unit mistake (bytes or KB for MB), not a watermark.
const maxMinFreeMB = 1 << 20

func indexed(key string, i int) string { return key + "[" + strconv.Itoa(i) + "]" }
