package config

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
)

// validateModels checks providers and that every model names a configured provider.
func (c *Config) validateModels(p *problems) {
	if len(c.Providers) == 0 {
		p.add("providers", `no model provider is configured; add one, e.g. silas.providers.openrouter: {base_url: "https://openrouter.ai/api/v1", api_key_env: OPENROUTER_API_KEY}`)
	}
	for _, name := range sortedNames(c.Providers) {
		key := "providers." + name
		if containsAny(name, ": \t/") {
			p.add(key, "provider names must not contain ':', '/' or spaces; rename it")
		}
		pr := c.Providers[name]
		if u, err := url.Parse(pr.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add(key+".base_url", "must be an http(s) URL such as https://openrouter.ai/api/v1, got %q", pr.BaseURL)
		}
		if pr.APIKeyEnv != "" && !isVarName(pr.APIKeyEnv) {
			p.add(key+".api_key_env", "must name an environment variable (letters, digits, '_'), got %q; put the key itself in that variable, never in config", pr.APIKeyEnv)
		}
		validatePrices(p, key+".prices", pr.Prices)
	}

	for _, role := range []string{"proxy", "planner", "executor", "scorer"} {
		c.checkModelChain(p, "models."+role, c.Models.ByRole()[role])
	}
	c.checkModelRef(p, "gates.llm_defaults.model", c.Gates.LLMDefaults.Model)
}

// checkModelChain checks each entry of a role's chain; in a chain of several, the
// key names the entry's index.
func (c *Config) checkModelChain(p *problems, key string, chain ModelChain) {
	if len(chain) == 0 {
		p.add(key, `must name a model, e.g. "openrouter:anthropic/claude-haiku-4-5", or a list of them tried in order`)
		return
	}
	for i, ref := range chain {
		k := key
		if len(chain) > 1 {
			k = fmt.Sprintf("%s[%d]", key, i)
		}
		if slices.Contains(chain[:i], ref) {
			p.add(k, "%q is already in the list; each model is tried once, remove the repeat", ref)
			continue
		}
		c.checkModelRef(p, k, ref)
	}
}

// validatePrices checks a provider's prices.
func validatePrices(p *problems, key string, prices map[string]ModelPrice) {
	for _, model := range sortedNames(prices) {
		k := key + "." + model
		if strings.TrimSpace(model) == "" {
			p.add(key, `has a price for an empty model id; name a model id as sent to the provider, e.g. "gpt-4.1-mini", or "*" for every model`)
			continue
		}
		pr := prices[model]
		if pr.InputPerMTok < 0 || math.IsNaN(pr.InputPerMTok) || math.IsInf(pr.InputPerMTok, 0) {
			p.add(k+".input_per_mtok", "must be a price in USD per million tokens, 0 or more, got %v", pr.InputPerMTok)
		}
		if pr.OutputPerMTok < 0 || math.IsNaN(pr.OutputPerMTok) || math.IsInf(pr.OutputPerMTok, 0) {
			p.add(k+".output_per_mtok", "must be a price in USD per million tokens, 0 or more, got %v", pr.OutputPerMTok)
		}
	}
}

func (c *Config) checkModelRef(p *problems, key, ref string) {
	provider, _, err := ParseModelRef(ref)
	if err != nil {
		p.add(key, `%v, e.g. "openrouter:anthropic/claude-haiku-4-5"`, err)
		return
	}
	if _, ok := c.Providers[provider]; !ok {
		p.add(key, "provider %q is not configured; add silas.providers.%s with base_url and api_key_env, or use one of: %s",
			provider, provider, strings.Join(sortedNames(c.Providers), ", "))
	}
}

func containsAny(s, chars string) bool { return strings.ContainsAny(s, chars) }
