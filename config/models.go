package config

import (
	"fmt"
	"strings"
	"time"
)

// Provider is an OpenAI-compatible model endpoint (OpenRouter, OpenAI, a local
// llama.cpp or Ollama server, or any server on the network).
type Provider struct {
	// BaseURL is the API root; requests go to {base_url}/chat/completions.
	// Built-in "openrouter": "https://openrouter.ai/api/v1".
	BaseURL string `koanf:"base_url"`
	// APIKeyEnv names the environment variable holding the API key (the key itself
	// never appears in config). Empty means the endpoint needs no key: requests go
	// to base_url, on any host, without an Authorization header.
	// Built-in "openrouter": "OPENROUTER_API_KEY".
	APIKeyEnv string `koanf:"api_key_env"`
	// Prices are what this provider's models cost, by model id as sent to the
	// provider (the part after "<provider>:" in silas.models, e.g. "gpt-4.1-mini"),
	// with "*" for every model without a price of its own. They are used when the
	// provider does not report a call's cost itself (OpenRouter does; OpenAI,
	// llama.cpp, vLLM and Ollama do not), so that budgets in USD (a work item's
	// max_cost_usd) hold for it. A model with no price counts as $0, and a warning
	// says so once. Default: none.
	Prices map[string]ModelPrice `koanf:"prices"`
}

// ModelPrice is the price of one model, in USD per million tokens.
type ModelPrice struct {
	// InputPerMTok is the price of one million prompt tokens in USD.
	InputPerMTok float64 `koanf:"input_per_mtok"`
	// OutputPerMTok is the price of one million completion tokens in USD.
	OutputPerMTok float64 `koanf:"output_per_mtok"`
}

// ModelChain is the model of a role: one "<provider>:<model id>", or a list of
// them tried in order. When a call fails in a way another provider may not (an
// outage, a timeout, a rate limit, a refused key or request) or the provider's
// circuit is open after repeated failures, the next entry answers. In YAML it is a
// string or a list of strings; in the environment, entries are separated by commas.
type ModelChain []string

// Primary is the first entry, the one that answers while it works.
func (m ModelChain) Primary() string {
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// Models names the model of each role as "<provider>:<model id>", or as a list of
// them tried in order (see ModelChain).
type Models struct {
	// Proxy routes every turn. Default "openrouter:anthropic/claude-haiku-4-5".
	Proxy ModelChain `koanf:"proxy"`
	// Planner writes plans. Default "openrouter:anthropic/claude-sonnet-4-5".
	Planner ModelChain `koanf:"planner"`
	// Executor does the work in the sandbox.
	// Default "openrouter:anthropic/claude-haiku-4-5".
	Executor ModelChain `koanf:"executor"`
	// Scorer scores context blocks for eviction.
	// Default "openrouter:anthropic/claude-haiku-4-5".
	Scorer ModelChain `koanf:"scorer"`
}

// ByRole returns the model chains keyed by role name (proxy, planner, executor,
// scorer).
func (m Models) ByRole() map[string]ModelChain {
	return map[string]ModelChain{
		"proxy":    m.Proxy,
		"planner":  m.Planner,
		"executor": m.Executor,
		"scorer":   m.Scorer,
	}
}

// LLM sets timeouts and retries for every model call.
type LLM struct {
	// TimeoutSeconds bounds one model request. Default 60.
	TimeoutSeconds int `koanf:"timeout_seconds"`
	// MaxRetries is how many times a failed retryable request is retried (0 = never).
	// Default 3.
	MaxRetries int `koanf:"max_retries"`
	// BackoffInitialMS is the first retry delay in milliseconds; it doubles per retry.
	// Default 500.
	BackoffInitialMS int `koanf:"backoff_initial_ms"`
	// BackoffMaxMS caps the retry delay in milliseconds. Default 8000.
	BackoffMaxMS int `koanf:"backoff_max_ms"`
}

// Timeout is TimeoutSeconds as a duration.
func (l LLM) Timeout() time.Duration { return time.Duration(l.TimeoutSeconds) * time.Second }

// BackoffInitial is BackoffInitialMS as a duration.
func (l LLM) BackoffInitial() time.Duration {
	return time.Duration(l.BackoffInitialMS) * time.Millisecond
}

// BackoffMax is BackoffMaxMS as a duration.
func (l LLM) BackoffMax() time.Duration { return time.Duration(l.BackoffMaxMS) * time.Millisecond }

// ParseModelRef splits a model string "<provider>:<model id>" at its first colon. The
// model id may itself contain "/" and ":" ("openrouter:meta/llama:free" is provider
// "openrouter", model "meta/llama:free"). Both parts must be non-empty and the
// provider must not contain spaces.
func ParseModelRef(s string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(s, ":")
	switch {
	case !ok:
		return "", "", fmt.Errorf("%q has no provider prefix: %w", s, ErrBadModelRef)
	case strings.TrimSpace(provider) == "":
		return "", "", fmt.Errorf("%q has an empty provider: %w", s, ErrBadModelRef)
	case strings.ContainsAny(provider, " \t/"):
		return "", "", fmt.Errorf("%q: provider %q must not contain spaces or '/': %w", s, provider, ErrBadModelRef)
	case strings.TrimSpace(model) == "":
		return "", "", fmt.Errorf("%q has an empty model id: %w", s, ErrBadModelRef)
	}
	return provider, model, nil
}

// ResolveModel parses ref and returns its provider's settings and the model id to
// send to that provider.
func (c *Config) ResolveModel(ref string) (Provider, string, error) {
	name, model, err := ParseModelRef(ref)
	if err != nil {
		return Provider{}, "", err
	}
	p, ok := c.Providers[name]
	if !ok {
		return Provider{}, "", fmt.Errorf("model %q: provider %q is not configured; add silas.providers.%s", ref, name, name)
	}
	return p, model, nil
}
