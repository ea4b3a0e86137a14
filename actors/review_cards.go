package actors

import (
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/review"
)

// The card contract (spec 0.5.3) of every card the actors send, each built
// through review.Build from the risk review.Assign gave it: the risk comes
// from the approval scope and what the runtime knows of the action's
// reach and reversibility, never from a model.

// cardContract builds s, logging (not sending) a card that lacks a
// required field: the event still goes out with its own fields.
func cardContract(log zerolog.Logger, s review.Spec) *messages.CardContract {
	c, err := review.Build(s)
	if err != nil {
		log.Error().Err(err).Msg("build the card contract")
		return nil
	}
	return &c
}

// planEffects says whether the plan on card may act where Silas keeps no
// reverse action: a skill it uses runs through an active connection
// granted act (send, change, delete) or manage.
func (s *Scope) planEffects(card *messages.PlanCard) review.Reversibility {
	if s.d.conns == nil {
		return review.Reversible
	}
	for _, name := range review.PlanSkills(card) {
		if conn, ok := s.d.conns.active(name); ok && hasTier(conn.Permissions, messages.PermissionAct) {
			return review.IrreversibleEffects
		}
	}
	return review.Reversible
}

// planContract is a plan approval's card.
func planContract(log zerolog.Logger, ev *messages.ApprovalRequestEvent, risk review.Risk, standing bool, effects review.Reversibility) *messages.CardContract {
	p := &ev.Plan
	checks := make([]string, 0, len(p.Verify))
	for _, c := range p.Verify {
		checks = append(checks, c.Name)
	}
	approve := "Approve + run plan"
	if standing {
		approve = "Approve standing + run fixes"
	}
	rationale := ev.Body
	if strings.TrimSpace(rationale) == "" {
		rationale = "Silas wrote a plan for your request."
	}
	details := []messages.CardDetail{
		{Label: "Plan", Value: ev.Body},
		{Label: "Checks", Value: strings.Join(checks, ", ")},
		{Label: "Budget", Value: fmt.Sprintf("up to $%.2f, %d attempts, %d min", p.Budget.MaxCostUSD, p.Budget.MaxAttempts, p.Budget.MaxWallTimeSeconds/60)},
		{Label: "Skills", Value: strings.Join(review.PlanSkills(p), ", ")},
		{Label: "Plan hash", Value: p.PlanHash},
	}
	if effects == review.IrreversibleEffects {
		details = append([]messages.CardDetail{{Label: "Irreversible", Value: "A skill this plan uses may send, change or delete on a connected service, and Silas keeps no undo for that."}}, details...)
	}
	return cardContract(log, review.Spec{
		Intent: ev.Title, Risk: risk, Rationale: rationale,
		CTAs:     []messages.CardCTA{review.Approve(string(messages.VerdictApproved), approve), review.Decline(string(messages.VerdictDeclined), "Decline, run nothing")},
		Affected: &messages.AffectedItems{Count: len(checks) + len(p.TaskPlans), Summary: fmt.Sprintf("%d check(s), %d task(s)", len(checks), max(1, len(p.TaskPlans)))},
		Details:  details,
	})
}

// skillContract is a skill_install card's.
func skillContract(log zerolog.Logger, ev *messages.SkillInstallRequestEvent, risk review.Risk) *messages.CardContract {
	sk := ev.Skill
	verb := "install"
	if sk.Origin == SkillOriginImported {
		verb = "import"
	}
	rationale := sk.Description
	if strings.TrimSpace(rationale) == "" {
		rationale = "A skill asks to be installed."
	}
	return cardContract(log, review.Spec{
		Intent: ev.Title, Risk: risk, Rationale: rationale,
		CTAs: []messages.CardCTA{review.Approve(string(messages.VerdictApproved), "Approve + "+verb+" skill"),
			review.Decline(string(messages.VerdictDeclined), "Decline, install nothing")},
		Affected: &messages.AffectedItems{Count: len(sk.Files), Summary: fmt.Sprintf("%d file(s), %d script(s)", len(sk.Files), len(sk.Scripts))},
		Details: []messages.CardDetail{{Label: "Skill", Value: sk.Name + " " + sk.Version}, {Label: "From", Value: sk.Dir},
			{Label: "Hash", Value: sk.Hash}, {Label: "Replaces", Value: sk.Replaces}, {Label: "Card", Value: ev.Body}},
	})
}

// connectRisk is the risk of a connection_manage card: reading is medium;
// anything more (drafting, acting, managing) widens it.
func connectRisk(perms []messages.ConnectionPermission) review.Risk {
	widens := false
	for _, p := range perms {
		if p != messages.PermissionObserve {
			widens = true
		}
	}
	return review.Assign(review.Action{Scope: messages.ApprovalConnectionManage, Widens: widens})
}

// connectContract is a connection_manage card's.
func connectContract(log zerolog.Logger, ev *messages.ConnectionApprovalEvent, risk review.Risk) *messages.CardContract {
	c := ev.Connection
	perms := make([]string, 0, len(c.Permissions))
	for _, p := range c.Permissions {
		perms = append(perms, string(p))
	}
	return cardContract(log, review.Spec{
		Intent: ev.Title, Risk: risk, Rationale: ev.Body,
		CTAs: []messages.CardCTA{review.Approve(string(messages.VerdictApproved), "Approve + connect"),
			review.Decline(string(messages.VerdictDeclined), "Decline, connect nothing")},
		Affected: &messages.AffectedItems{Count: 1, Summary: "connection " + c.Name},
		Details: []messages.CardDetail{{Label: "Connection", Value: c.ConnectionID}, {Label: "Skill", Value: c.SkillName},
			{Label: "Silas may", Value: strings.Join(perms, ", ")}, {Label: "Service scopes", Value: strings.Join(c.RequestedScopes, ", ")}},
	})
}

// permissionRisk is the risk of a permission escalation (spec 0.5.3):
// widening within what the connection may already do is medium, a new
// kind of access (acting, managing, new service scopes) is high.
func permissionRisk(tier messages.ConnectionPermission, scopes []string) review.Risk {
	return review.Assign(review.Action{Scope: messages.ApprovalConnectionManage,
		Widens: tierRank[tier] >= tierRank[messages.PermissionAct] || len(scopes) > 0})
}

// permissionContract is a permission escalation card's.
func permissionContract(log zerolog.Logger, ev *messages.PermissionEscalationEvent, risk review.Risk) *messages.CardContract {
	return cardContract(log, review.Spec{
		Intent: "Give " + ev.ConnectionName + " more access: " + strings.Join(ev.RequestedPermissions, ", "), Risk: risk, Rationale: ev.Reason,
		CTAs: []messages.CardCTA{review.Approve(permissionApprove, "Approve access"), review.Alternative(permissionJustOnce, "Just this once"),
			review.Decline(permissionDeny, "Deny, the call fails")},
		Affected: &messages.AffectedItems{Count: 1, Summary: "connection " + ev.ConnectionName},
		Details: []messages.CardDetail{{Label: "Now", Value: strings.Join(ev.CurrentPermissions, ", ")},
			{Label: "Asked for", Value: strings.Join(ev.RequestedPermissions, ", ")}},
	})
}

// recoveryRisk is the risk of one recovery option: the level the option
// declares (the runtime's own options, or a connection script's report),
// low when it declares none. A script can raise its card's risk, never
// lower it below what the runtime's options need.
func recoveryRisk(o messages.RecoveryOption) review.Risk {
	if r, ok := review.Parse(o.RiskLevel); ok {
		return r
	}
	return review.Low
}

// optionRisk is the risk of choosing action on failure f: its option's,
// or the card's for an action the card does not offer (which the
// connection refuses anyway).
func optionRisk(f *messages.ConnectionFailure, action string) review.Risk {
	for _, o := range f.RecoveryOptions {
		if o.Action == action {
			return recoveryRisk(o)
		}
	}
	return failureRisk(f)
}

// failureRisk is a failure card's risk: its riskiest option's.
func failureRisk(f *messages.ConnectionFailure) review.Risk {
	r := review.Low
	for _, o := range f.RecoveryOptions {
		r = review.Max(r, recoveryRisk(o))
	}
	return r
}

// failureContract is a connection failure card's.
func failureContract(log zerolog.Logger, ev *messages.ConnectionFailureEvent, risk review.Risk) *messages.CardContract {
	// The first way out is the recommended one, the others alternatives,
	// skip last.
	ctas := []messages.CardCTA{}
	recommended := false
	for _, o := range ev.RecoveryOptions {
		switch {
		case o.Action == "skip":
			ctas = append(ctas, review.Decline(o.Action, o.Label))
		case !recommended:
			recommended = true
			ctas = append(ctas, review.Approve(o.Action, o.Label))
		default:
			ctas = append(ctas, review.Alternative(o.Action, o.Label))
		}
	}
	if !hasSkip(ev.RecoveryOptions) {
		ctas = append(ctas, review.Decline("skip", "Skip"))
	}
	service := ev.Service
	if service == "" {
		service = "A connection"
	}
	return cardContract(log, review.Spec{
		Intent: service + ": " + strings.ReplaceAll(ev.FailureType, "_", " "), Risk: risk, Rationale: ev.Message, CTAs: ctas,
		Details: []messages.CardDetail{{Label: "Connection", Value: ev.ConnectionID}},
	})
}

func hasSkip(opts []messages.RecoveryOption) bool {
	for _, o := range opts {
		if o.Action == "skip" {
			return true
		}
	}
	return false
}

// setupContract is a setup step's card: it approves nothing by itself.
func setupContract(log zerolog.Logger, ev *messages.ConnectionSetupStepEvent, risk review.Risk) *messages.CardContract {
	return cardContract(log, review.Spec{
		Intent: "Sign in to " + ev.Service + " (" + strings.ReplaceAll(ev.StepType, "_", " ") + ")", Risk: risk,
		Rationale: "Silas is connecting " + ev.Service + " and needs you to finish signing in there.",
		CTAs: []messages.CardCTA{review.Approve(messages.ConnectionSetupActionDone, "I've done it"), review.Alternative("trouble", "Having trouble"),
			review.Decline(messages.ConnectionSetupActionCancel, "Cancel, store nothing")},
		Details: []messages.CardDetail{{Label: "Connection", Value: ev.ConnectionID}},
	})
}
