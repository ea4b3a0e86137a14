package review

import "github.com/silas-ai/silas/messages"

// Risk is a card's place on the risk ladder (spec 0.5.2). It decides the
// interaction an approving answer needs: a tap, a confirm chip, a slide, or
// a slide and a security key.
type Risk string

// The risk levels of spec 0.5.2, lowest first.
const (
	Low          Risk = "low"
	Medium       Risk = "medium"
	High         Risk = "high"
	Irreversible Risk = "irreversible"
)

// rank orders the levels; an unknown level ranks as irreversible, so that
// nothing unknown ever needs less than the most.
func (r Risk) rank() int {
	switch r {
	case Low:
		return 0
	case Medium:
		return 1
	case High:
		return 2
	}
	return 3
}

// Valid reports whether r is one of the four levels.
func (r Risk) Valid() bool { return r == Low || r == Medium || r == High || r == Irreversible }

// Parse reads a risk level from an event or a script; ok is false for
// anything but the four levels.
func Parse(s string) (r Risk, ok bool) {
	r = Risk(s)
	return r, r.Valid()
}

// Max returns the highest of rs, Low for none.
func Max(rs ...Risk) Risk {
	out := Low
	for _, r := range rs {
		if r.rank() > out.rank() {
			out = r
		}
	}
	return out
}

// Reversibility says whether what an approval lets Silas do can be undone
// by Silas afterwards.
type Reversibility int

const (
	// Reversible effects stay where Silas can put them back: a work
	// directory in the sandbox, a setting, a grant that can be revoked.
	Reversible Reversibility = iota
	// IrreversibleEffects reach where Silas keeps no reverse action: a
	// message sent, a record deleted on a connected service (spec 0.5.5:
	// without an undo window an action is labelled irreversible).
	IrreversibleEffects
)

// Action is what an approval lets Silas do, as the runtime (not a model)
// knows it.
type Action struct {
	// Scope is the approval scope of spec 3.6; empty for a card that
	// approves nothing by itself (a setup step, a choice of how to
	// recover).
	Scope messages.ApprovalScope
	// Reversibility is whether the effects can be undone.
	Reversibility Reversibility
	// Widens is true when the action reaches beyond its scope's ordinary
	// bounds: the network from a check, a large budget, access a
	// connection did not have.
	Widens bool
}

// Assign returns the risk level of a (spec 0.5.2): irreversible effects
// are irreversible whatever the scope; a scope that installs code, uses a
// credential or updates Silas is high; a plan, a budget, a standing
// approval, a connection's action or setup and an autonomy change are
// medium, and high when they widen; a card that approves nothing is low
// (medium when it widens). An unknown scope is high.
func Assign(a Action) Risk {
	if a.Reversibility == IrreversibleEffects {
		return Irreversible
	}
	base, widened := scopeRisk(a.Scope)
	if a.Widens {
		return widened
	}
	return base
}

// scopeRisk is the table of spec 0.5.2 by scope: the level of an ordinary
// action and of one that widens.
func scopeRisk(s messages.ApprovalScope) (base, widened Risk) {
	switch s {
	case "":
		return Low, Medium
	case messages.ApprovalFullPlan, messages.ApprovalSingleStep, messages.ApprovalStepRange,
		messages.ApprovalToolType, messages.ApprovalBudget, messages.ApprovalStanding,
		messages.ApprovalConnectionAct, messages.ApprovalConnectionManage, messages.ApprovalAutonomyThreshold:
		return Medium, High
	case messages.ApprovalSkillInstall, messages.ApprovalCredentialUse, messages.ApprovalSelfUpdate:
		// Installing code that work items run, handing out a credential
		// and changing Silas itself are high however small they look;
		// self_update is "always high-risk" (spec 3.6).
		return High, High
	}
	return High, High
}
