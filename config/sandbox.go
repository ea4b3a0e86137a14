package config

import "time"

// Sandbox configures the execution sandbox.
type Sandbox struct {
	// Backend chooses the sandbox that runs agent tools, verification checks
	// and script gates: "auto" (the strongest isolating backend that works
	// on this host, probed at start), "namespaces" (built in: user, mount,
	// PID, network, IPC and UTS namespaces, seccomp, limits), "bwrap"
	// (bubblewrap, where installed; "bubblewrap" is the same) or
	// "subprocess" (no filesystem isolation; needs allow_unisolated).
	// There is no docker backend. Default "auto".
	Backend string `koanf:"backend"`
	// AllowUnisolated lets the subprocess backend run agent code although it
	// does not isolate the filesystem: the agent can read everything the
	// daemon's user can, the data dir and keys included. Only for hosts
	// where no isolating backend works and the owner accepts that. With it
	// off, a host without isolation blocks work items instead. Default false.
	AllowUnisolated bool `koanf:"allow_unisolated"`
	// DefaultMemoryMB is the memory limit of one execution. Default 512.
	DefaultMemoryMB int `koanf:"default_memory_mb"`
	// DefaultCPUSeconds is the CPU time limit of one execution. Default 60.
	DefaultCPUSeconds int `koanf:"default_cpu_seconds"`
	// VerifyDir is the working directory of verification runs; it must differ from
	// CustomerContextDir. Default "./data/verify"; when data_dir is changed and this is
	// not set, it is <data_dir>/verify.
	VerifyDir string `koanf:"verify_dir"`
	// CustomerContextDir holds per-customer context; it must be inside data_dir and
	// not world-writable. Default "./data/customer_context"; when data_dir is changed
	// and this is not set, it is <data_dir>/customer_context.
	CustomerContextDir string `koanf:"customer_context_dir"`
}

// Approval configures approval tokens.
type Approval struct {
	// DefaultTTLMinutes is how long an approval token is valid. Default 30.
	DefaultTTLMinutes int `koanf:"default_ttl_minutes"`
	// MaxExecutions is how many executions one token allows. Default 1.
	MaxExecutions int `koanf:"max_executions"`
	// AutoApproveRiskLevels are risk levels (low, medium, high) approved without
	// asking. Default [] (always ask).
	AutoApproveRiskLevels []string `koanf:"auto_approve_risk_levels"`
	// ScopeMinStrength maps an approval scope to its minimum verification strength;
	// "tap" is the only strength. Default: tap for self_update, connection_act,
	// connection_manage, autonomy_threshold and skill_install.
	ScopeMinStrength map[string]string `koanf:"scope_min_strength"`
	// RequestTimeoutSeconds is how long the owner has to answer an
	// approval_request before the plan counts as declined; a plan asked
	// while no owner connection is open waits as long for one. Default 300.
	RequestTimeoutSeconds int `koanf:"request_timeout_seconds"`
}

// NonceStore configures the execution-nonce store.
type NonceStore struct {
	// TTLMinutes is how long a used nonce is remembered; it must be at least
	// approval.default_ttl_minutes so a token cannot be replayed. Default 40.
	TTLMinutes int `koanf:"ttl_minutes"`
	// PruneIntervalMinutes is the period of pruning expired nonces. Default 10.
	PruneIntervalMinutes int `koanf:"prune_interval_minutes"`
}

// Connections configures connection skills' health and recovery.
type Connections struct {
	// HealthCheckDefault is the standard 5-field cron of health checks.
	// Default "*/30 * * * *".
	HealthCheckDefault string `koanf:"health_check_default"`
	// AutoRecoveryEnabled runs recover.py once when a health check fails
	// (and a refresh did not cure it). Default true.
	AutoRecoveryEnabled bool `koanf:"auto_recovery_enabled"`
	// RecoveryMaxAttempts caps the automatic recoveries (recover.py) in a
	// row, with no health check passing on its own in between; the next
	// failure ends in a failure card. 0: never recover automatically.
	// Default 3.
	RecoveryMaxAttempts int `koanf:"recovery_max_attempts"`
	// ScriptTimeoutSeconds bounds each run of discover.py, probe.py,
	// health_check.py, refresh_token.py and recover.py. Default 60.
	ScriptTimeoutSeconds int `koanf:"script_timeout_seconds"`
	// SetupTimeoutSeconds bounds a whole setup conversation (setup.py),
	// the owner's sign-in included. Default 1200.
	SetupTimeoutSeconds int `koanf:"setup_timeout_seconds"`
}

// ScriptTimeout is ScriptTimeoutSeconds as a duration.
func (c Connections) ScriptTimeout() time.Duration {
	return time.Duration(c.ScriptTimeoutSeconds) * time.Second
}

// SetupTimeout is SetupTimeoutSeconds as a duration.
func (c Connections) SetupTimeout() time.Duration {
	return time.Duration(c.SetupTimeoutSeconds) * time.Second
}

// BatchReview configures batched approval review.
type BatchReview struct {
	// DefaultSize is the number of items per batch. Default 10.
	DefaultSize int `koanf:"default_size"`
	// Confidence sets the confidence bands.
	Confidence Confidence `koanf:"confidence"`
}

// Confidence sets the confidence bands of batch review, 0 <= medium_min <= high_min <= 1.
type Confidence struct {
	// HighMin is the lower bound of high confidence. Default 0.85.
	HighMin float64 `koanf:"high_min"`
	// MediumMin is the lower bound of medium confidence. Default 0.50.
	MediumMin float64 `koanf:"medium_min"`
}

// Autonomy configures autonomy threshold calibration.
type Autonomy struct {
	// Enabled turns calibration proposals on. Default true.
	Enabled bool `koanf:"enabled"`
	// MinSamples is the minimum number of actions before a proposal. Default 30.
	MinSamples int `koanf:"min_samples"`
	// WindowActions is the number of recent actions considered. Default 50.
	WindowActions int `koanf:"window_actions"`
	// WindowDays is the age limit of considered actions. Default 14.
	WindowDays int `koanf:"window_days"`
	// WidenCorrectionRateMax is the correction rate below which autonomy may widen;
	// it must be below TightenCorrectionRateMin. Default 0.05.
	WidenCorrectionRateMax float64 `koanf:"widen_correction_rate_max"`
	// TightenCorrectionRateMin is the correction rate above which autonomy tightens.
	// Default 0.20.
	TightenCorrectionRateMin float64 `koanf:"tighten_correction_rate_min"`
	// HysteresisDelta is the margin against flapping. Default 0.05.
	HysteresisDelta float64 `koanf:"hysteresis_delta"`
	// MaxStandingExecutions caps a standing approval's executions. Default 100.
	MaxStandingExecutions int `koanf:"max_standing_executions"`
	// MaxBatchReviewSize caps a batch; it must be at least batch_review.default_size.
	// Default 50.
	MaxBatchReviewSize int `koanf:"max_batch_review_size"`
	// MinHighConfidence is the confidence needed to act alone. Default 0.70.
	MinHighConfidence float64 `koanf:"min_high_confidence"`
}
