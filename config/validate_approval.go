package config

import (
	"slices"
	"strings"
)

// approvalScopes are the scopes of the spec's ApprovalScope enum.
func approvalScopes() []string {
	return []string{
		"full_plan", "single_step", "step_range", "tool_type", "skill_install", "credential_use",
		"budget", "self_update", "connection_act", "connection_manage", "autonomy_threshold", "standing",
	}
}

// validateApproval checks approvals, nonces, batch review and autonomy.
func (c *Config) validateApproval(p *problems) {
	a := c.Approval
	p.atLeast("approval.default_ttl_minutes", a.DefaultTTLMinutes, 1)
	p.atLeast("approval.max_executions", a.MaxExecutions, 1)
	p.atLeast("approval.request_timeout_seconds", a.RequestTimeoutSeconds, 1)
	for i, level := range a.AutoApproveRiskLevels {
		if level == "irreversible" {
			p.add(indexed("approval.auto_approve_risk_levels", i), "irreversible actions are never auto-approved; remove it")
			continue
		}
		p.oneOf(indexed("approval.auto_approve_risk_levels", i), level, "low", "medium", "high")
	}
	scopes := approvalScopes()
	for _, scope := range sortedNames(a.ScopeMinStrength) {
		key := "approval.scope_min_strength." + scope
		if !slices.Contains(scopes, scope) {
			p.add(key, "%q is not an approval scope; use one of %s", scope, strings.Join(scopes, ", "))
			continue
		}
		p.oneOf(key, a.ScopeMinStrength[scope], "tap")
	}

	n := c.NonceStore
	if n.TTLMinutes < a.DefaultTTLMinutes {
		p.add("nonce_store.ttl_minutes", "must be at least silas.approval.default_ttl_minutes (%d), got %d; "+
			"a nonce forgotten before its token expires allows replay", a.DefaultTTLMinutes, n.TTLMinutes)
	}
	p.atLeast("nonce_store.prune_interval_minutes", n.PruneIntervalMinutes, 1)

	br := c.BatchReview
	p.atLeast("batch_review.default_size", br.DefaultSize, 1)
	p.between("batch_review.confidence.high_min", br.Confidence.HighMin, 0, 1)
	p.between("batch_review.confidence.medium_min", br.Confidence.MediumMin, 0, 1)
	if br.Confidence.MediumMin > br.Confidence.HighMin {
		p.add("batch_review.confidence.medium_min", "must not exceed silas.batch_review.confidence.high_min (%s), got %s",
			num(br.Confidence.HighMin), num(br.Confidence.MediumMin))
	}

	au := c.Autonomy
	p.atLeast("autonomy.min_samples", au.MinSamples, 1)
	if au.WindowActions < au.MinSamples {
		p.add("autonomy.window_actions", "must be at least silas.autonomy.min_samples (%d), got %d", au.MinSamples, au.WindowActions)
	}
	p.atLeast("autonomy.window_days", au.WindowDays, 1)
	p.between("autonomy.widen_correction_rate_max", au.WidenCorrectionRateMax, 0, 1)
	p.between("autonomy.tighten_correction_rate_min", au.TightenCorrectionRateMin, 0, 1)
	if au.WidenCorrectionRateMax >= au.TightenCorrectionRateMin {
		p.add("autonomy.widen_correction_rate_max", "must be below silas.autonomy.tighten_correction_rate_min (%s), got %s; hysteresis is required",
			num(au.TightenCorrectionRateMin), num(au.WidenCorrectionRateMax))
	}
	p.between("autonomy.hysteresis_delta", au.HysteresisDelta, 0, 1)
	p.atLeast("autonomy.max_standing_executions", au.MaxStandingExecutions, 1)
	if au.MaxBatchReviewSize < br.DefaultSize {
		p.add("autonomy.max_batch_review_size", "must be at least silas.batch_review.default_size (%d), got %d",
			br.DefaultSize, au.MaxBatchReviewSize)
	}
	p.between("autonomy.min_high_confidence", au.MinHighConfidence, 0, 1)
}
