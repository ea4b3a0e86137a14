package messages

// PlanCard is what the owner is shown before approving a plan: every field
// of the plan projection that the approval token signs (WorkItemPlanHash,
// spec 3.3), under the spec's field names and with the defaults the hash
// applies, so that nothing the token binds stays hidden from the card. A
// test fails when a field joins the projection but not the card.
//
// TaskPlans holds, for a project, the card of each of its tasks in the
// order they run: their plans sit in the project's briefing, which the
// project's hash covers, and the owner approves each of them with it.
type PlanCard struct {
	ID                 string                      `json:"id"`
	Type               WorkItemType                `json:"type"`
	Title              string                      `json:"title"`
	Parent             *string                     `json:"parent"`
	SpawnedBy          *string                     `json:"spawned_by"`
	FollowUpOf         *string                     `json:"follow_up_of"`
	Domain             *string                     `json:"domain"`
	Agent              AgentLane                   `json:"agent"`
	Budget             Budget                      `json:"budget"`
	Body               string                      `json:"body"`
	InteractionMode    InteractionMode             `json:"interaction_mode"`
	InputArtifactsFrom []string                    `json:"input_artifacts_from"`
	Verify             []VerificationCheck         `json:"verify"`
	Gates              []Gate                      `json:"gates"`
	Skills             []string                    `json:"skills"`
	SkillHashes        map[string]string           `json:"skill_hashes,omitempty"`
	AccessLevels       map[string]AccessLevel      `json:"access_levels"`
	Escalation         map[string]EscalationAction `json:"escalation"`
	Schedule           *string                     `json:"schedule"`
	OnFailure          string                      `json:"on_failure"`
	OnStuck            string                      `json:"on_stuck"`
	FailureContext     *string                     `json:"failure_context"`
	Tasks              []string                    `json:"tasks"`
	DependsOn          []string                    `json:"depends_on"`
	Outputs            []string                    `json:"outputs,omitempty"`

	// PlanHash is the hash the approval token binds (ApprovalToken.plan_hash),
	// so that the owner can match the card with the audit log.
	PlanHash string `json:"plan_hash"`
	// TaskPlans are the cards of a project's tasks; empty for other types.
	TaskPlans []PlanCard `json:"task_plans,omitempty"`
}

// NewPlanCard returns the card of w: its plan projection with defaults
// applied and absent lists and objects empty, exactly as hashed. The
// caller adds TaskPlans for a project (plan.Card does both). PlanHash is
// empty when w cannot be hashed, which also means it cannot be approved.
func NewPlanCard(w *WorkItem) PlanCard {
	n := w.normalized()
	hash, _ := WorkItemPlanHash(w)
	return PlanCard{
		ID: n.ID, Type: n.Type, Title: n.Title, Parent: n.Parent, SpawnedBy: n.SpawnedBy,
		FollowUpOf: n.FollowUpOf, Domain: n.Domain, Agent: n.Agent, Budget: n.Budget, Body: n.Body,
		InteractionMode: n.InteractionMode, InputArtifactsFrom: n.InputArtifactsFrom, Verify: n.Verify,
		Gates: n.Gates, Skills: n.Skills, SkillHashes: n.SkillHashes, AccessLevels: n.AccessLevels, Escalation: n.Escalation,
		Schedule: n.Schedule, OnFailure: n.OnFailure, OnStuck: n.OnStuck, FailureContext: n.FailureContext,
		Tasks: n.Tasks, DependsOn: n.DependsOn, Outputs: n.Outputs, PlanHash: hash,
	}
}
