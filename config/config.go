package config

import (
	"path/filepath"
	"time"
)

// Config is the whole configuration: the content of the "silas:" root of
// config/silas.yaml. Each field's koanf tag is its YAML key.
type Config struct {
	// OwnerID is the scope id of the owner; single-user turns run in this scope.
	// Default "owner".
	OwnerID string `koanf:"owner_id"`
	// DataDir holds all durable state (Badger, keys, sandbox directories). A relative
	// path is relative to the working directory; it is kept as written here. Changing
	// it also moves the sandbox directories that are not set explicitly.
	// Default "./data".
	DataDir string `koanf:"data_dir"`

	// Providers are the OpenAI-compatible model endpoints, by name. A model string
	// "<provider>:<model id>" picks one. Default: one provider, "openrouter".
	Providers map[string]Provider `koanf:"providers"`
	// Models names the model of each role.
	Models Models `koanf:"models"`
	// LLM sets timeouts and retries for every model call.
	LLM LLM `koanf:"llm"`
	// Search configures the web_search executor.
	Search Search `koanf:"search"`
	// Context sets the token budget and the context profiles.
	Context ContextBudget `koanf:"context"`
	// Rehydration controls what is reloaded after a restart.
	Rehydration Rehydration `koanf:"rehydration"`
	// Memory configures long-term memory.
	Memory Memory `koanf:"memory"`
	// Personality configures the persona engine.
	Personality Personality `koanf:"personality"`
	// Interaction sets how assertively Silas proceeds by interaction register.
	Interaction Interaction `koanf:"interaction"`
	// Suggestions configures proactive suggestions.
	Suggestions Suggestions `koanf:"suggestions"`
	// BehaviorPreferences configures learned behaviour preferences.
	BehaviorPreferences BehaviorPreferences `koanf:"behavior_preferences"`
	// Channels configures the web, Telegram and CLI channels.
	Channels Channels `koanf:"channels"`
	// Chatbot configures multi-customer chatbot deployments.
	Chatbot Chatbot `koanf:"chatbot"`
	// Limits are per-scope and per-IP rate limits.
	Limits Limits `koanf:"limits"`
	// Backpressure bounds queued turns.
	Backpressure Backpressure `koanf:"backpressure"`
	// Sandbox configures the execution sandbox.
	Sandbox Sandbox `koanf:"sandbox"`
	// Approval configures approval tokens.
	Approval Approval `koanf:"approval"`
	// NonceStore configures the execution-nonce store.
	NonceStore NonceStore `koanf:"nonce_store"`
	// Connections configures connection skills' health and recovery.
	Connections Connections `koanf:"connections"`
	// BatchReview configures batched approval review.
	BatchReview BatchReview `koanf:"batch_review"`
	// Autonomy configures autonomy threshold calibration.
	Autonomy Autonomy `koanf:"autonomy"`
	// Gates are the global system gates and the defaults of LLM gates.
	Gates Gates `koanf:"gates"`
	// ActiveGoal is the path of a goal markdown file loaded at startup; empty (null)
	// means none. Default null.
	ActiveGoal string `koanf:"active_goal"`
	// Scheduler configures the cron scheduler.
	Scheduler Scheduler `koanf:"scheduler"`
	// Skills configures skill validation and import.
	Skills Skills `koanf:"skills"`
	// SkillsDir is where installed custom skills live. Default "./silas/skills".
	SkillsDir string `koanf:"skills_dir"`
	// Log configures logging.
	Log Log `koanf:"log"`
	// Persistence configures the Badger store.
	Persistence Persistence `koanf:"persistence"`
	// Process configures the daemon process itself.
	Process Process `koanf:"process"`
}

// Process configures the daemon process itself.
type Process struct {
	// MemorySoftLimitMB is the Go runtime's soft memory limit, in MB: as
	// the heap nears it, the garbage collector runs more often instead of
	// letting the heap grow to twice what is live. Badger builds its
	// tables in buffers on the Go heap, and each burst of compaction
	// otherwise doubles the heap's target for a while; the limit trades
	// some CPU in those bursts for a flat resident size. It is soft: a
	// live heap above it is not an error (the collector then takes at
	// most half the CPU). 0 leaves the runtime's default, or the
	// GOMEMLIMIT environment variable, in force. Default 0.
	MemorySoftLimitMB int `koanf:"memory_soft_limit_mb"`
}

// MemorySoftLimitBytes is MemorySoftLimitMB in bytes.
func (p Process) MemorySoftLimitBytes() int64 { return int64(p.MemorySoftLimitMB) << 20 }

// DataPath joins elem under DataDir, as written (a relative DataDir gives a relative
// path): DataPath("keys") is "data/keys" with the default DataDir.
func (c *Config) DataPath(elem ...string) string {
	return filepath.Join(append([]string{c.DataDir}, elem...)...)
}

// ProfileNames returns the set of configured context profile names.
func (c *Config) ProfileNames() map[string]bool {
	names := make(map[string]bool, len(c.Context.Profiles))
	for name := range c.Context.Profiles {
		names[name] = true
	}
	return names
}

// IsLoopbackHost reports whether the web channel binds only to loopback.
func (c *Config) IsLoopbackHost() bool { return c.Channels.Web.IsLoopbackHost() }

// Log configures logging.
type Log struct {
	// Level is the minimum level: trace, debug, info, warn, error, fatal, panic or
	// disabled. Default "info".
	Level string `koanf:"level"`
	// Format is "json" (one JSON object per line) or "console" (human-readable).
	// Default "json".
	Format string `koanf:"format"`
}

// Persistence configures the Badger store.
type Persistence struct {
	// SyncWrites makes each group commit wait for fsync, so an acknowledged message
	// survives power loss. Default true.
	SyncWrites bool `koanf:"sync_writes"`
	// MinFreeMB is the free-space watermark of the data dir's file system,
	// in MB: below it, new messages are refused with a clear error (turns
	// already accepted finish), /ready turns false, and both recover by
	// themselves once space is freed. It keeps room for Badger to flush
	// and compact (its memtable is 32 MB) and for the turns in flight, so
	// that a full disk is an error, not a crash. 0 turns the check, and
	// those protections, off. Default 256.
	MinFreeMB int `koanf:"min_free_mb"`
}

// MinFreeBytes is MinFreeMB in bytes, as persistence.Options takes it.
func (p Persistence) MinFreeBytes() int64 { return int64(p.MinFreeMB) << 20 }

// Rehydration controls what is reloaded after a restart.
type Rehydration struct {
	// MaxChronicleEntries is how many recent chronicle entries each scope reloads.
	// Default 50.
	MaxChronicleEntries int `koanf:"max_chronicle_entries"`
	// ScopeIdleTimeoutSeconds (the scope_idle_timeout) is how long a scope
	// stays in memory with no turn pending or running, no work item running, no
	// approval waiting and no connection attached. Then it is passivated: its
	// actor stops, and its next message reloads it from Badger exactly as after
	// a restart. Lower saves memory on deployments with many customers who come
	// and go; a reload costs a few reads. Default 300.
	ScopeIdleTimeoutSeconds int `koanf:"scope_idle_timeout_seconds"`
}

// ScopeIdleTimeout is ScopeIdleTimeoutSeconds as a duration.
func (r Rehydration) ScopeIdleTimeout() time.Duration {
	return time.Duration(r.ScopeIdleTimeoutSeconds) * time.Second
}

// Scheduler configures the cron scheduler.
type Scheduler struct {
	// Enabled runs the scheduler (goals, suggestion and autonomy heartbeats, nonce
	// pruning). Default true.
	Enabled bool `koanf:"enabled"`
	// Timezone is the IANA zone cron expressions are evaluated in.
	// Default "Europe/Vienna".
	Timezone string `koanf:"timezone"`
}
