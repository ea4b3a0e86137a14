package messages

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Sandbox backend names accepted in SandboxConfig.Backend.
const (
	BackendSubprocess = "subprocess"
	BackendBubblewrap = "bubblewrap"
	BackendNamespaces = "namespaces"
	BackendDocker     = "docker"
)

// Defaults of the execution models (spec 3.7).
const (
	DefaultSandboxWorkDir   = "./data/sandbox/work"
	DefaultMaxMemoryMB      = 512
	DefaultMaxCPUSeconds    = 60
	DefaultTimeoutSeconds   = 300
	DefaultMaxOutputBytes   = 100_000
	maxEnvValueBytes        = 128 << 10
	maxSandboxPathsPerField = 64
)

// SandboxConfig is the backend-agnostic runtime configuration of one sandboxed
// execution (spec 3.7). Decoding JSON into it starts from DefaultSandboxConfig,
// so absent fields take the spec's defaults.
type SandboxConfig struct {
	// Backend overrides the configured backend ("subprocess", "bubblewrap",
	// "docker"); nil uses the global configuration.
	Backend *string `json:"backend"`
	// WorkDir is the working directory in the sandbox runtime. Backends that
	// create a fresh directory per instance treat it as informational.
	WorkDir string `json:"work_dir"`
	// NetworkAccess requests outbound network. When false the backend MUST
	// isolate the network or refuse to run (fail closed).
	NetworkAccess bool `json:"network_access"`
	// FilesystemRead lists absolute host paths exposed read-only.
	FilesystemRead []string `json:"filesystem_read"`
	// FilesystemWrite lists absolute host paths exposed read-write.
	FilesystemWrite []string `json:"filesystem_write"`
	// MaxMemoryMB is the address-space limit of the sandboxed process.
	MaxMemoryMB int `json:"max_memory_mb"`
	// MaxCPUSeconds is the CPU time limit of the sandboxed process.
	MaxCPUSeconds int `json:"max_cpu_seconds"`
	// Env holds the only environment variables the sandbox sees besides the
	// backend's PATH and HOME.
	Env map[string]string `json:"env"`
}

// DefaultSandboxConfig returns a SandboxConfig holding the spec's defaults:
// no network, no extra paths, 512 MB, 60 CPU seconds, an empty environment.
func DefaultSandboxConfig() SandboxConfig {
	return SandboxConfig{
		WorkDir:         DefaultSandboxWorkDir,
		FilesystemRead:  []string{},
		FilesystemWrite: []string{},
		MaxMemoryMB:     DefaultMaxMemoryMB,
		MaxCPUSeconds:   DefaultMaxCPUSeconds,
		Env:             map[string]string{},
	}
}

// UnmarshalJSON decodes c on top of the spec's defaults.
func (c *SandboxConfig) UnmarshalJSON(data []byte) error {
	type plain SandboxConfig
	p := plain(DefaultSandboxConfig())
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("sandbox_config: %w", err)
	}
	*c = SandboxConfig(p)
	return nil
}

// Validate enforces the rules of SandboxConfig: a known backend, positive
// limits, absolute clean paths and well-formed environment variables.
func (c *SandboxConfig) Validate() error {
	var errs []error
	if c.Backend != nil {
		switch *c.Backend {
		case BackendSubprocess, BackendBubblewrap, BackendNamespaces, BackendDocker:
		default:
			errs = append(errs, fmt.Errorf("sandbox_config.backend %q: want subprocess, bubblewrap, namespaces, docker or null", *c.Backend))
		}
	}
	if strings.TrimSpace(c.WorkDir) == "" {
		errs = append(errs, errors.New("sandbox_config.work_dir is empty"))
	}
	if c.MaxMemoryMB <= 0 {
		errs = append(errs, fmt.Errorf("sandbox_config.max_memory_mb %d: must be positive", c.MaxMemoryMB))
	}
	if c.MaxCPUSeconds <= 0 {
		errs = append(errs, fmt.Errorf("sandbox_config.max_cpu_seconds %d: must be positive", c.MaxCPUSeconds))
	}
	errs = append(errs, validatePaths("filesystem_read", c.FilesystemRead)...)
	errs = append(errs, validatePaths("filesystem_write", c.FilesystemWrite)...)
	for k, v := range c.Env {
		if err := ValidateEnvName(k); err != nil {
			errs = append(errs, fmt.Errorf("sandbox_config.env: %w", err))
		}
		if strings.IndexByte(v, 0) >= 0 || len(v) > maxEnvValueBytes {
			errs = append(errs, fmt.Errorf("sandbox_config.env[%s]: value must be under %d bytes and hold no NUL byte", k, maxEnvValueBytes))
		}
	}
	return errors.Join(errs...)
}

func validatePaths(field string, paths []string) []error {
	var errs []error
	if len(paths) > maxSandboxPathsPerField {
		errs = append(errs, fmt.Errorf("sandbox_config.%s: at most %d paths", field, maxSandboxPathsPerField))
	}
	for _, p := range paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.IndexByte(p, 0) >= 0 {
			errs = append(errs, fmt.Errorf("sandbox_config.%s %q: want an absolute, clean path", field, p))
		}
	}
	return errs
}

// ValidateEnvName reports whether name is a portable environment variable
// name: a letter or underscore, then letters, digits or underscores.
func ValidateEnvName(name string) error {
	if name == "" {
		return errors.New("environment variable name is empty")
	}
	for i, r := range name {
		ok := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("environment variable name %q: want [A-Za-z_][A-Za-z0-9_]*", name)
		}
	}
	return nil
}

// ExecutionEnvelope is everything an ephemeral executor receives, nothing more
// (spec 3.7, 9.3): no conversation history, memory, context, approval tokens
// or Stream state. Decoding JSON into it applies the spec's defaults.
type ExecutionEnvelope struct {
	ExecutionID     string            `json:"execution_id"`
	StepIndex       int               `json:"step_index"`
	TaskDescription string            `json:"task_description"`
	Action          string            `json:"action"`
	Args            map[string]any    `json:"args"`
	InputArtifacts  map[string]string `json:"input_artifacts"`
	// CredentialRefs maps a name to an opaque keyring reference id; it never
	// holds a raw secret.
	CredentialRefs map[string]string `json:"credential_refs"`
	TimeoutSeconds int               `json:"timeout_seconds"`
	MaxOutputBytes int               `json:"max_output_bytes"`
	SandboxConfig  SandboxConfig     `json:"sandbox_config"`
}

// UnmarshalJSON decodes e on top of the spec's defaults (timeout 300 s,
// 100,000 output bytes, the default SandboxConfig).
func (e *ExecutionEnvelope) UnmarshalJSON(data []byte) error {
	type plain ExecutionEnvelope
	p := plain{
		Args:           map[string]any{},
		InputArtifacts: map[string]string{},
		CredentialRefs: map[string]string{},
		TimeoutSeconds: DefaultTimeoutSeconds,
		MaxOutputBytes: DefaultMaxOutputBytes,
		SandboxConfig:  DefaultSandboxConfig(),
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("execution envelope: %w", err)
	}
	*e = ExecutionEnvelope(p)
	return nil
}

// Validate enforces the envelope's rules.
func (e *ExecutionEnvelope) Validate() error {
	var errs []error
	if strings.TrimSpace(e.ExecutionID) == "" {
		errs = append(errs, errors.New("execution envelope: execution_id is empty"))
	}
	if e.StepIndex < 0 {
		errs = append(errs, fmt.Errorf("execution envelope: step_index %d is negative", e.StepIndex))
	}
	if strings.TrimSpace(e.Action) == "" {
		errs = append(errs, errors.New("execution envelope: action is empty"))
	}
	if e.TimeoutSeconds <= 0 {
		errs = append(errs, fmt.Errorf("execution envelope: timeout_seconds %d must be positive", e.TimeoutSeconds))
	}
	if e.MaxOutputBytes <= 0 {
		errs = append(errs, fmt.Errorf("execution envelope: max_output_bytes %d must be positive", e.MaxOutputBytes))
	}
	for name, ref := range e.CredentialRefs {
		if name == "" || strings.TrimSpace(ref) == "" {
			errs = append(errs, fmt.Errorf("execution envelope: credential_refs[%q] needs a name and an opaque reference id", name))
		}
	}
	if err := e.SandboxConfig.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("execution envelope: %w", err))
	}
	return errors.Join(errs...)
}

// ExecutionResult is everything an ephemeral executor returns (spec 3.7).
//
// Only ReturnValue and Content may reach a model, and only through gates and
// taint handling; use ModelView to take them. Metadata is application-only
// (audit, observability, provider diagnostics) and MUST NEVER be injected into
// a model's context, whatever its taint.
type ExecutionResult struct {
	ExecutionID string           `json:"execution_id"`
	StepIndex   int              `json:"step_index"`
	Success     bool             `json:"success"`
	ReturnValue string           `json:"return_value"`
	Content     []map[string]any `json:"content"`
	// Metadata is for the application only; never show it to a model.
	Metadata        map[string]any    `json:"metadata"`
	Artifacts       map[string]string `json:"artifacts"`
	Taint           TaintLevel        `json:"taint"`
	Error           *string           `json:"error"`
	DurationSeconds float64           `json:"duration_seconds"`
	TokensUsed      int               `json:"tokens_used"`
	CostUSD         float64           `json:"cost_usd"`
}

// ExecutionModelView is the model-facing part of an ExecutionResult.
type ExecutionModelView struct {
	ReturnValue string           `json:"return_value"`
	Content     []map[string]any `json:"content"`
}

// ModelView returns the only channels of r that may be shown to a model:
// return_value and content. Metadata is deliberately left out.
func (r *ExecutionResult) ModelView() ExecutionModelView {
	return ExecutionModelView{ReturnValue: r.ReturnValue, Content: r.Content}
}

// Validate enforces the result's rules: an execution id, a defined taint, an
// error exactly when the execution failed, and no negative measures.
func (r *ExecutionResult) Validate() error {
	var errs []error
	if strings.TrimSpace(r.ExecutionID) == "" {
		errs = append(errs, errors.New("execution result: execution_id is empty"))
	}
	if r.StepIndex < 0 {
		errs = append(errs, fmt.Errorf("execution result: step_index %d is negative", r.StepIndex))
	}
	if err := r.Taint.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("execution result: %w", err))
	}
	if r.Success && r.Error != nil {
		errs = append(errs, errors.New("execution result: a successful result must not carry an error"))
	}
	if !r.Success && (r.Error == nil || *r.Error == "") {
		errs = append(errs, errors.New("execution result: a failed result must say why in error"))
	}
	if r.DurationSeconds < 0 || r.TokensUsed < 0 || r.CostUSD < 0 {
		errs = append(errs, errors.New("execution result: duration_seconds, tokens_used and cost_usd must not be negative"))
	}
	return errors.Join(errs...)
}

// ExecutorAgentOutput is the structured output of the executor agent
// (spec 3.7); runtime metrics are not part of it.
type ExecutorAgentOutput struct {
	Summary      string   `json:"summary"`
	ArtifactRefs []string `json:"artifact_refs"`
	NextSteps    []string `json:"next_steps"`
}

// Validate requires a summary and non-empty list entries.
func (o *ExecutorAgentOutput) Validate() error {
	var errs []error
	if strings.TrimSpace(o.Summary) == "" {
		errs = append(errs, errors.New("executor output: summary is empty"))
	}
	for i, a := range o.ArtifactRefs {
		if strings.TrimSpace(a) == "" {
			errs = append(errs, fmt.Errorf("executor output: artifact_refs[%d] is empty", i))
		}
	}
	for i, s := range o.NextSteps {
		if strings.TrimSpace(s) == "" {
			errs = append(errs, fmt.Errorf("executor output: next_steps[%d] is empty", i))
		}
	}
	return errors.Join(errs...)
}

// LedgerEntry is one tool call of a work item's attempt as it actually ran
// (spec 5.2.1 step c1): the authoritative record of what happened, from
// which the attempt's artifacts are taken. Result.Metadata is kept for the
// application and never shown to a model.
type LedgerEntry struct {
	Attempt int    `json:"attempt"`
	Tool    string `json:"tool"`
	// Blocked names the policy gate that kept the call from running; empty
	// when it ran.
	Blocked string          `json:"blocked,omitempty"`
	Result  ExecutionResult `json:"result"`
}
