package config

// Gates are the global system gates and the defaults of LLM gates.
type Gates struct {
	// System gates are global and evaluated on every matching trigger, before
	// work-item gates. Defaults: input_guard (jailbreak check on every user message)
	// and pii_scrub (PII check on every agent response).
	System []Gate `koanf:"system"`
	// LLMDefaults apply to gates whose provider is "llm".
	LLMDefaults LLMDefaults `koanf:"llm_defaults"`
	// ApprovalTimeoutSeconds is how long the owner has to answer a gate
	// approval (spec 8.1 gate_approval) before the gate blocks; fractions
	// are allowed. Default 120.
	ApprovalTimeoutSeconds float64 `koanf:"approval_timeout_seconds"`
	// ScriptDir holds the owner's gate scripts: a script gate's command
	// runs there, in the sandbox, with the directory read-only, and its
	// relative paths resolve against it. Nothing an agent writes is ever
	// there. The sandbox's unprivileged user must be able to read it and
	// the scripts (silas init creates it 0755, inside the private data
	// dir). Default "./data/gates"; when data_dir is changed and this is
	// not set, it is <data_dir>/gates.
	ScriptDir string `koanf:"script_dir"`
}

// Gate is one system gate, with the fields of the spec's Gate model. Fields left empty
// take the model's defaults (provider "predicate", type "string_match", on_block
// "report") when the gate is built.
type Gate struct {
	// Name identifies the gate; unique among system gates.
	Name string `koanf:"name"`
	// On is the trigger: every_user_message, every_agent_response, after_step or
	// on_tool_call.
	On string `koanf:"on"`
	// AfterStep is the step index of an after_step trigger.
	AfterStep *int `koanf:"after_step"`
	// Provider evaluates the gate: guardrails_ai, predicate, llm, script or custom.
	Provider string `koanf:"provider"`
	// Type is the kind of check (numeric_range, string_match, regex, file_valid,
	// approval_always, custom_check).
	Type string `koanf:"type"`
	// Check is the provider-specific check name or script command.
	Check string `koanf:"check"`
	// Config is provider-specific configuration.
	Config map[string]any `koanf:"config"`
	// Extract names the variable to extract from agent output.
	Extract string `koanf:"extract"`
	// AutoApprove is the numeric range that auto-approves.
	AutoApprove *Range `koanf:"auto_approve"`
	// RequireApproval is the numeric range that requires approval.
	RequireApproval *Range `koanf:"require_approval"`
	// Block blocks values outside a range.
	Block *Outside `koanf:"block"`
	// AllowedValues are string values that auto-approve.
	AllowedValues []string `koanf:"allowed_values"`
	// ApprovalValues are string values that require approval.
	ApprovalValues []string `koanf:"approval_values"`
	// OnBlock names the escalation to run when the gate blocks.
	OnBlock string `koanf:"on_block"`
	// CheckCommand is the shell command of a custom_check.
	CheckCommand string `koanf:"check_command"`
	// CheckExpect is the success criterion of a custom_check.
	CheckExpect map[string]any `koanf:"check_expect"`
	// PromoteToPolicy makes an llm gate blocking. Default false.
	PromoteToPolicy bool `koanf:"promote_to_policy"`
}

// Range is a closed numeric interval.
type Range struct {
	Min float64 `koanf:"min"`
	Max float64 `koanf:"max"`
}

// Outside blocks values outside [Outside[0], Outside[1]].
type Outside struct {
	Outside []float64 `koanf:"outside"`
}

// LLMDefaults apply to gates whose provider is "llm".
type LLMDefaults struct {
	// Model is "<provider>:<model id>". Default "openrouter:anthropic/claude-haiku-4-5".
	Model string `koanf:"model"`
	// Temperature is the sampling temperature, in [0, 2]. Default 0.0.
	Temperature float64 `koanf:"temperature"`
	// TimeoutSeconds bounds one gate evaluation. Default 8.
	TimeoutSeconds int `koanf:"timeout_seconds"`
	// MaxTokens caps the gate model's answer. Default 256.
	MaxTokens int `koanf:"max_tokens"`
}
