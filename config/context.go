package config

// ContextBudget sets the token budget of the context window and its profiles.
type ContextBudget struct {
	// TotalTokens is the model context window in tokens. Default 180000.
	TotalTokens int `koanf:"total_tokens"`
	// SystemMax caps the system zone (constitution, tools, directives). Default 8000.
	SystemMax int `koanf:"system_max"`
	// SkillMetadataBudgetPct is the share of TotalTokens for unactivated skill
	// metadata, in [0, 0.10]. Default 0.02.
	SkillMetadataBudgetPct float64 `koanf:"skill_metadata_budget_pct"`
	// EvictionThresholdPct is the usage share at which eviction starts; eviction runs
	// until usage is below it. Default 0.80.
	EvictionThresholdPct float64 `koanf:"eviction_threshold_pct"`
	// ScorerThresholdPct is the usage share above which the scorer model is consulted
	// when heuristic eviction is not enough. Default 0.90.
	ScorerThresholdPct float64 `koanf:"scorer_threshold_pct"`
	// MaxSubscriptionTokens caps one context subscription. Default 2000.
	MaxSubscriptionTokens int `koanf:"max_subscription_tokens"`
	// SubscriptionTTLTurns is how many turns without reference deactivate a
	// subscription. Default 10.
	SubscriptionTTLTurns int `koanf:"subscription_ttl_turns"`
	// ObservationMaskAfterTurns is the age in turns after which tool results are
	// masked. Default 5.
	ObservationMaskAfterTurns int `koanf:"observation_mask_after_turns"`
	// DefaultProfile names the profile used when the proxy picks none; it must be a
	// key of Profiles. Default "conversation".
	DefaultProfile string `koanf:"default_profile"`
	// Profiles are the zone allocations by name. Defaults: conversation, coding,
	// research, support. Profiles from the file are merged with these.
	Profiles map[string]Profile `koanf:"profiles"`
}

// Profile allocates shares of the context window to zones. Each share is in [0, 1] and
// the three together are at most 0.80.
type Profile struct {
	// ChroniclePct is the share for conversation history.
	ChroniclePct float64 `koanf:"chronicle_pct"`
	// MemoryPct is the share for injected memories.
	MemoryPct float64 `koanf:"memory_pct"`
	// WorkspacePct is the share for the workspace.
	WorkspacePct float64 `koanf:"workspace_pct"`
}

// Sum is the combined allocable share.
func (p Profile) Sum() float64 { return p.ChroniclePct + p.MemoryPct + p.WorkspacePct }

// Memory configures long-term memory.
type Memory struct {
	// EmbeddingModel is the model that embeds memories for semantic search
	// (spec 6.2), as "<provider>:<model id>" of a provider in silas.providers
	// whose base_url serves the OpenAI-compatible POST /embeddings, e.g.
	// "openai:text-embedding-3-small", or "local:all-minilm" for a local
	// Ollama or llama.cpp server configured without api_key_env. Memories are
	// embedded in the background after they are stored, and each turn's
	// memory search embeds its query; while the provider fails, search falls
	// back to keywords and a log line says so. Changing it embeds every memory
	// again at the next start. Empty turns semantic search off: memory is
	// searched by keywords, time and recency only. Default "".
	EmbeddingModel string `koanf:"embedding_model"`
	// EmbeddingDim is the size of the embedding vectors: when above 0 it is
	// sent to the provider as "dimensions" (models such as OpenAI's
	// text-embedding-3 shorten their vectors to it) and a vector of another
	// size is refused; 0 takes the model's own size. 0 to 8192. Default 0.
	EmbeddingDim int `koanf:"embedding_dim"`
	// SemanticMinSimilarity is the cosine similarity a memory's embedding
	// needs to the query's to count as a semantic match; below it a memory is
	// not brought into context for its meaning (keyword, time and recency
	// matches still are). Embedding models differ: unrelated sentences score
	// about 0.0-0.2 with all-MiniLM-L6-v2 and 0.1-0.3 with OpenAI's
	// text-embedding-3, related ones 0.4 and up. At least 0, below 1.
	// Default 0.3.
	SemanticMinSimilarity float64 `koanf:"semantic_min_similarity"`
	// ConsolidationIntervalMinutes is the period of memory consolidation. Default 30.
	ConsolidationIntervalMinutes int `koanf:"consolidation_interval_minutes"`
	// RawReingestionEnabled stores raw conversation and tool output durably.
	// Default true.
	RawReingestionEnabled bool `koanf:"raw_reingestion_enabled"`
	// RawReingestionDefaultTier is the tier of raw records: "active" or
	// "low_reingestion". Default "low_reingestion".
	RawReingestionDefaultTier string `koanf:"raw_reingestion_default_tier"`
	// PortabilityBundleFormat is the export/import format. Default "jsonl-v1".
	PortabilityBundleFormat string `koanf:"portability_bundle_format"`
}

// Search configures the web_search executor. The tool is loaded only when both
// Provider and APIKey are set (see Enabled); otherwise no model is offered it
// and no prompt lists it. Searches run in the daemon over HTTP, never in the
// sandbox, so the key never reaches agent code. Calls per scope are limited
// by silas.limits.web_search_calls_per_minute_per_scope.
type Search struct {
	// Provider is the search backend key: "tavily" (the only one this build
	// has), or empty to turn web_search off. Default "tavily".
	Provider string `koanf:"provider"`
	// APIKey is the search API key; empty (null) disables web_search. It is
	// sent only to the provider, in the Authorization header.
	// Default "${SEARCH_API_KEY}".
	APIKey string `koanf:"api_key" secret:"true"`
	// BaseURL is the provider's API root: https, or http to a loopback
	// address (a local stand-in or proxy); the key travels in every request,
	// so plain http to a remote host is refused. Empty means the provider's
	// public API (tavily: https://api.tavily.com). Default "".
	BaseURL string `koanf:"base_url"`
	// TimeoutSeconds bounds one search, the provider's answer included.
	// Default 8.
	TimeoutSeconds int `koanf:"timeout_seconds"`
	// MaxResults caps the results of one search (1 to 20, Tavily's own cap);
	// the model may ask for fewer, never more. Default 5.
	MaxResults int `koanf:"max_results"`
	// MaxQueryChars refuses longer queries with a tool error the model sees.
	// Default 300.
	MaxQueryChars int `koanf:"max_query_chars"`
	// AllowedDomains restricts results to these domains and their
	// subdomains: they are passed to the provider and every result outside
	// them is dropped. Empty means the whole web. Default [].
	AllowedDomains []string `koanf:"allowed_domains"`
}

// Enabled reports whether web_search may be registered: a provider and a key are set.
func (s Search) Enabled() bool { return s.Provider != "" && s.APIKey != "" }

// String prints the settings with the API key redacted.
func (s Search) String() string { return redactedString(s) }
