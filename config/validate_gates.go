package config

import (
	"fmt"
	"strings"
)

// validateGates checks the system gates and the LLM gate defaults. Enumerations are
// those of the spec's Gate model.
func (c *Config) validateGates(p *problems) {
	seen := map[string]int{}
	for i, g := range c.Gates.System {
		key := fmt.Sprintf("gates.system[%d]", i)
		p.required(key+".name", g.Name, "give every system gate a unique name")
		if first, dup := seen[g.Name]; dup && g.Name != "" {
			p.add(key+".name", "%q is already the name of silas.gates.system[%d]; names must be unique", g.Name, first)
		} else {
			seen[g.Name] = i
		}
		p.oneOf(key+".on", g.On, "every_user_message", "every_agent_response", "after_step", "on_tool_call")
		if g.On == "after_step" && g.AfterStep == nil {
			p.add(key+".after_step", "is required when on is after_step; set the step index")
		}
		if g.AfterStep != nil && *g.AfterStep < 0 {
			p.add(key+".after_step", "must be at least 0, got %d", *g.AfterStep)
		}
		if g.Provider != "" {
			p.oneOf(key+".provider", g.Provider, "guardrails_ai", "predicate", "llm", "script", "custom")
		}
		if g.Type != "" {
			p.oneOf(key+".type", g.Type, "numeric_range", "string_match", "regex", "file_valid", "approval_always", "custom_check")
		}
		if g.Type == "custom_check" && strings.TrimSpace(g.CheckCommand) == "" {
			p.add(key+".check_command", "is required for type custom_check; set the command to run")
		}
		checkRange(p, key+".auto_approve", g.AutoApprove)
		checkRange(p, key+".require_approval", g.RequireApproval)
		if b := g.Block; b != nil && (len(b.Outside) != 2 || b.Outside[0] > b.Outside[1]) {
			p.add(key+".block.outside", "must be [low, high] with low <= high, got %v", b.Outside)
		}
	}

	d := c.Gates.LLMDefaults
	p.between("gates.llm_defaults.temperature", d.Temperature, 0, 2)
	p.atLeast("gates.llm_defaults.timeout_seconds", d.TimeoutSeconds, 1)
	p.atLeast("gates.llm_defaults.max_tokens", d.MaxTokens, 1)
	if t := c.Gates.ApprovalTimeoutSeconds; !(t > 0) {
		p.add("gates.approval_timeout_seconds", "must be more than 0 seconds, got %s; the default is 120", num(t))
	}
}

func checkRange(p *problems, key string, r *Range) {
	if r != nil && r.Min > r.Max {
		p.add(key, "min %s exceeds max %s; swap them", num(r.Min), num(r.Max))
	}
}
