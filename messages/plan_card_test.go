package messages

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// jsonFields maps the JSON names of t's fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = f.Type
		}
	}
	return out
}

// A field that joins the hashed plan projection must join the card the
// owner approves, under the same name and type: the token must never sign
// something the owner was not shown.
func TestPlanCardHasEveryHashedField(t *testing.T) {
	card := jsonFields(reflect.TypeFor[PlanCard]())
	for name, typ := range jsonFields(reflect.TypeFor[planProjection]()) {
		got, ok := card[name]
		switch {
		case !ok:
			t.Errorf("the plan hash covers %q but PlanCard lacks it: add it to PlanCard, NewPlanCard and the PWA and CLI cards", name)
		case got != typ:
			t.Errorf("PlanCard.%s is a %v, the hashed field a %v", name, got, typ)
		}
	}
	ev := jsonFields(reflect.TypeFor[ApprovalRequestEvent]())
	if ev["plan"] != reflect.TypeFor[PlanCard]() {
		t.Error("ApprovalRequestEvent does not carry the PlanCard as plan")
	}
}

// fullPlan is a work item with every hashed field set to a value that is
// not its default.
func fullPlan() *WorkItem {
	w := NewWorkItem("task-full", WorkTask, "Every field")
	w.Parent, w.SpawnedBy, w.FollowUpOf, w.Domain = ptr("goal-parent"), ptr("goal-parent"), ptr("task-before"), ptr("business:shop")
	w.Agent = AgentStream
	w.Budget = Budget{MaxTokens: 1234, MaxCostUSD: 0.75, MaxWallTimeSeconds: 99, MaxAttempts: 2, MaxPlannerCalls: 1}
	w.Body = "# Brief\nDo it."
	w.InteractionMode = ModeActAndReport
	w.InputArtifactsFrom = []string{"task-before"}
	w.Verify = []VerificationCheck{{Name: "fetches", Run: "curl -sf https://example.org", Expect: Expectation{ExitCode: ptr(0)}, Timeout: 30, Network: true}}
	w.Gates = []Gate{{Name: "no_pii", On: TriggerEveryAgentResponse, Provider: ProviderGuardrailsAI, Type: GateRegex, Check: ptr("pii"), Config: map[string]any{"mode": "redact"}}}
	w.Skills = []string{"coding"}
	w.AccessLevels = map[string]AccessLevel{"verified": {Description: "Verified", Tools: []string{"order_lookup"}, Requires: []string{"no_pii"}, ExpiresAfter: ptr(60)}}
	w.Escalation = map[string]EscalationAction{"queue": {Action: EscalationTransferToQueue, Queue: ptr("humans"), MaxRetries: 1}}
	w.Schedule = ptr("@every 5m")
	w.OnFailure, w.OnStuck = "escalate_human", "escalate"
	w.FailureContext = ptr("Failed: $failed_checks")
	w.Tasks = []string{"task-a"}
	w.DependsOn = []string{"task-before"}
	return w
}

// NewPlanCard copies every hashed field, with the values the hash sees.
func TestNewPlanCardCopiesEveryHashedField(t *testing.T) {
	w := fullPlan()
	hashed, err := WorkItemPlanHashBytes(w)
	if err != nil {
		t.Fatal(err)
	}
	var projection map[string]any
	if err := json.Unmarshal(hashed, &projection); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(NewPlanCard(w))
	if err != nil {
		t.Fatal(err)
	}
	var card map[string]any
	if err := json.Unmarshal(b, &card); err != nil {
		t.Fatal(err)
	}
	for name, want := range projection {
		if empty(want) {
			t.Errorf("fullPlan leaves %q empty; set it so that the card is checked for it", name)
		}
		if !reflect.DeepEqual(card[name], want) {
			t.Errorf("card %s = %v, the hashed value %v", name, card[name], want)
		}
	}
	hash, _ := WorkItemPlanHash(w)
	if card["plan_hash"] != hash {
		t.Errorf("card plan_hash %v, want %s", card["plan_hash"], hash)
	}
	if _, ok := card["task_plans"]; ok {
		t.Error("NewPlanCard set task_plans; only plan.Card knows a project's tasks")
	}
}

// The card shows the defaults the hash applies, not the absent values.
func TestNewPlanCardAppliesDefaults(t *testing.T) {
	w := &WorkItem{ID: "task-bare", Type: WorkTask, Title: "Bare", Gates: []Gate{{Name: "g", On: TriggerEveryUserMessage}}}
	c := NewPlanCard(w)
	if c.Agent != AgentEphemeral || c.InteractionMode != DefaultInteractionMode || c.OnStuck != DefaultOnStuck ||
		c.Gates[0].Provider != ProviderPredicate || c.Skills == nil || c.AccessLevels == nil {
		t.Fatalf("card %+v lacks the defaults the hash applies", c)
	}
	if w.Agent != "" || w.Gates[0].Provider != "" {
		t.Fatal("NewPlanCard changed the work item")
	}
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
