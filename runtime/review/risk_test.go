package review

import (
	"testing"

	"github.com/silas-ai/silas/messages"
)

func TestAssign(t *testing.T) {
	tests := []struct {
		name string
		a    Action
		want Risk
	}{
		{"no approval: a setup step", Action{}, Low},
		{"no approval that widens: reconnecting", Action{Widens: true}, Medium},
		{"a plan", Action{Scope: messages.ApprovalFullPlan}, Medium},
		{"a plan that reaches the network", Action{Scope: messages.ApprovalFullPlan, Widens: true}, High},
		{"a plan that acts on a service", Action{Scope: messages.ApprovalFullPlan, Reversibility: IrreversibleEffects}, Irreversible},
		{"irreversible beats widening", Action{Scope: messages.ApprovalFullPlan, Widens: true, Reversibility: IrreversibleEffects}, Irreversible},
		{"one step", Action{Scope: messages.ApprovalSingleStep}, Medium},
		{"a step range", Action{Scope: messages.ApprovalStepRange}, Medium},
		{"a tool type", Action{Scope: messages.ApprovalToolType}, Medium},
		{"a budget", Action{Scope: messages.ApprovalBudget}, Medium},
		{"a standing approval", Action{Scope: messages.ApprovalStanding}, Medium},
		{"a standing approval that widens", Action{Scope: messages.ApprovalStanding, Widens: true}, High},
		{"reading a connected service", Action{Scope: messages.ApprovalConnectionManage}, Medium},
		{"letting a connection act", Action{Scope: messages.ApprovalConnectionManage, Widens: true}, High},
		{"revoking a connection", Action{Scope: messages.ApprovalConnectionManage, Reversibility: IrreversibleEffects}, Irreversible},
		{"one connection action", Action{Scope: messages.ApprovalConnectionAct}, Medium},
		{"tightening autonomy", Action{Scope: messages.ApprovalAutonomyThreshold}, Medium},
		{"widening autonomy", Action{Scope: messages.ApprovalAutonomyThreshold, Widens: true}, High},
		{"installing a skill", Action{Scope: messages.ApprovalSkillInstall}, High},
		{"using a credential", Action{Scope: messages.ApprovalCredentialUse}, High},
		{"self update is always high", Action{Scope: messages.ApprovalSelfUpdate}, High},
		{"an unknown scope is high", Action{Scope: "launch_rockets"}, High},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Assign(tt.a); got != tt.want {
				t.Errorf("Assign(%+v) = %s, want %s", tt.a, got, tt.want)
			}
		})
	}
}

// TestAssignCoversEveryScope: every scope of spec 3.6 has a level, and
// none is below medium (every scope approves something that runs).
func TestAssignCoversEveryScope(t *testing.T) {
	for _, s := range messages.ApprovalScopes() {
		if r := Assign(Action{Scope: s}); r.rank() < Medium.rank() || !r.Valid() {
			t.Errorf("scope %s: %q", s, r)
		}
		if r := Assign(Action{Scope: s, Reversibility: IrreversibleEffects}); r != Irreversible {
			t.Errorf("scope %s with irreversible effects: %q", s, r)
		}
	}
}

func TestMaxAndParse(t *testing.T) {
	if got := Max(); got != Low {
		t.Errorf("Max() = %s", got)
	}
	if got := Max(Medium, Low, High, Medium); got != High {
		t.Errorf("Max = %s, want high", got)
	}
	// A level nobody knows ranks as the most, so it never lowers a card.
	if got := Max(High, Risk("bogus")); got.rank() != Irreversible.rank() {
		t.Errorf("Max with an unknown level = %s", got)
	}
	for _, s := range []string{"low", "medium", "high", "irreversible"} {
		if r, ok := Parse(s); !ok || string(r) != s {
			t.Errorf("Parse(%q) = %q, %v", s, r, ok)
		}
	}
	for _, s := range []string{"", "HIGH", "critical"} {
		if _, ok := Parse(s); ok {
			t.Errorf("Parse(%q) accepted it", s)
		}
	}
}

func TestPlanAction(t *testing.T) {
	base := func() *messages.PlanCard {
		return &messages.PlanCard{Budget: messages.Budget{MaxCostUSD: 2, MaxWallTimeSeconds: 1800}, Skills: []string{"b", "a"}}
	}
	tests := []struct {
		name     string
		edit     func(*messages.PlanCard)
		standing bool
		effects  Reversibility
		want     Risk
		scope    messages.ApprovalScope
	}{
		{"a small local plan", func(*messages.PlanCard) {}, false, Reversible, Medium, messages.ApprovalFullPlan},
		{"a check needs the network", func(c *messages.PlanCard) { c.Verify = []messages.VerificationCheck{{Name: "up", Network: true}} }, false, Reversible, High, messages.ApprovalFullPlan},
		{"a project task's check needs the network", func(c *messages.PlanCard) {
			c.TaskPlans = []messages.PlanCard{{Verify: []messages.VerificationCheck{{Name: "up", Network: true}}}}
		}, false, Reversible, High, messages.ApprovalFullPlan},
		{"more than $5", func(c *messages.PlanCard) { c.Budget.MaxCostUSD = 5.01 }, false, Reversible, High, messages.ApprovalFullPlan},
		{"exactly $5", func(c *messages.PlanCard) { c.Budget.MaxCostUSD = 5 }, false, Reversible, Medium, messages.ApprovalFullPlan},
		{"more than an hour", func(c *messages.PlanCard) { c.Budget.MaxWallTimeSeconds = 3601 }, false, Reversible, High, messages.ApprovalFullPlan},
		{"a task's large budget", func(c *messages.PlanCard) {
			c.TaskPlans = []messages.PlanCard{{Budget: messages.Budget{MaxCostUSD: 50}}}
		}, false, Reversible, High, messages.ApprovalFullPlan},
		{"a standing approval", func(*messages.PlanCard) {}, true, Reversible, Medium, messages.ApprovalStanding},
		{"acting on a connected service", func(*messages.PlanCard) {}, false, IrreversibleEffects, Irreversible, messages.ApprovalFullPlan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.edit(c)
			a := PlanAction(c, tt.standing, tt.effects)
			if got := Assign(a); got != tt.want || a.Scope != tt.scope {
				t.Errorf("PlanAction = %+v (%s), want %s at scope %s", a, got, tt.want, tt.scope)
			}
		})
	}
	c := base()
	c.TaskPlans = []messages.PlanCard{{Skills: []string{"c", "a"}}}
	if got := PlanSkills(c); len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" {
		t.Errorf("PlanSkills = %v, want [a b c]", got)
	}
}
