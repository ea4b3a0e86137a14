package review

import (
	"slices"

	"github.com/silas-ai/silas/messages"
)

// A plan whose budget allows more than this widens: the owner slides
// before Silas may spend it.
const (
	largeBudgetUSD     = 5
	longWallTimeSecond = 3600
)

// PlanAction describes the approval of the plan on card: scope full_plan,
// or standing for a goal's standing approval. It widens when a check of
// the plan (or of a project's task) needs the network, or when the budget
// allows more than $5 or an hour of wall time. effects is what the caller
// knows of where the plan reaches: IrreversibleEffects when a skill it uses
// runs through a connection that may act on the service (send, change,
// delete), where Silas keeps no reverse action.
func PlanAction(card *messages.PlanCard, standing bool, effects Reversibility) Action {
	a := Action{Scope: messages.ApprovalFullPlan, Reversibility: effects}
	if standing {
		a.Scope = messages.ApprovalStanding
	}
	for _, c := range append([]messages.PlanCard{*card}, card.TaskPlans...) {
		if slices.ContainsFunc(c.Verify, func(v messages.VerificationCheck) bool { return v.Network }) ||
			c.Budget.MaxCostUSD > largeBudgetUSD || c.Budget.MaxWallTimeSeconds > longWallTimeSecond {
			a.Widens = true
		}
	}
	return a
}

// PlanSkills returns every skill the plan on card uses, its tasks' too,
// sorted and without repeats.
func PlanSkills(card *messages.PlanCard) []string {
	var out []string
	out = append(out, card.Skills...)
	for _, t := range card.TaskPlans {
		out = append(out, t.Skills...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
