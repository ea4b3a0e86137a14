package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/access"
	"github.com/silas-ai/silas/runtime/gates"
)

var errTest = errors.New("test failure")

// ownerAccess is the access view of an owner scope in these tests.
var ownerAccess = Result{Value: AccessView{Level: access.OwnerLevel, Tools: []string{"memory_search", "shell_exec"}}}

// The tools the model is told about are those of the access view, and a
// customer context appears only while the view carries one.
func TestToolsetRendersAccessView(t *testing.T) {
	env := testEnv()
	views := []AccessView{
		{Level: "verified", Tools: []string{"faq_search", "order_lookup"}, CustomerContext: `{"name":"Ada"}`},
		{Level: "anonymous", Tools: []string{"faq_search"}, Expired: []string{"verified"}},
	}
	for i, v := range views {
		turn := newTurn("hi")
		turn.Number = 7 + i
		var system string
		drive(t, turn, env, func(req any) Result {
			switch r := req.(type) {
			case *LoadAccess:
				return Result{Value: v}
			case *ModelCall:
				system = r.System
				return model{"RouteDecision": {directRoute}}.answer(r)
			}
			return Result{}
		})
		hasOrder := strings.Contains(system, "order_lookup")
		hasCustomer := strings.Contains(system, `{"name":"Ada"}`)
		if i == 0 && (!hasOrder || !hasCustomer || !strings.Contains(system, "faq_search")) {
			t.Errorf("verified turn: system prompt lacks its tools or customer context:\n%s", system)
		}
		if i == 1 && (hasOrder || hasCustomer) {
			t.Errorf("after expiry the system prompt still shows the verified level:\n%s", system)
		}
		if i == 1 && !hasAudit(turn, "access_level_expired") {
			t.Error("expiry not audited")
		}
	}
}

// A failed access view fails closed: no tools, memory queries refused.
func TestToolsetFailsClosed(t *testing.T) {
	env, turn := testEnv(), newTurn("plan it")
	m := model{"RouteDecision": {plannerRoute}, "AgentResponse": {plannerAnswer}}
	var queries int
	drive(t, turn, env, func(req any) Result {
		switch r := req.(type) {
		case *LoadAccess:
			return Result{Err: errTest}
		case *QueryMemory:
			queries++
		case *ModelCall:
			if !strings.Contains(r.System, "Tools available in this conversation: none") {
				t.Errorf("%s call offered tools after a failed access view:\n%s", r.Role, r.System)
			}
			return m.answer(r)
		}
		return Result{}
	})
	if queries != 1 { // the auto-retrieval of step 4 only
		t.Errorf("memory queries run = %d, want only the auto-retrieval", queries)
	}
	if !hasAudit(turn, "memory_queries_refused") || !hasAudit(turn, "access_view_failed") {
		t.Errorf("audit = %+v", turn.Audit)
	}
}

// Step 14 hands the controller only the custom_check input gates that
// continued in step 1.
func TestAccessUpdateOnPassedGates(t *testing.T) {
	cmd := "printenv SILAS_GATE_VALUE"
	gs := []messages.Gate{
		{Name: "verify", On: messages.TriggerEveryUserMessage, Provider: messages.ProviderScript, Type: messages.GateCustomCheck, Check: &cmd, CheckCommand: &cmd},
		{Name: "other", On: messages.TriggerEveryAgentResponse, Provider: messages.ProviderScript, Type: messages.GateCustomCheck, Check: &cmd, CheckCommand: &cmd},
	}
	env, turn := testEnv(), newTurn("code 42")
	env.WorkGates = gs
	var update *UpdateAccess
	drive(t, turn, env, func(req any) Result {
		switch r := req.(type) {
		case *RunPolicyGates:
			return Result{Value: gates.PolicyDecision{Action: messages.GateContinue, Blocked: -1, Context: r.Check.Context, Evaluations: []gates.Evaluation{
				{Gate: "verify", Result: messages.GateResult{GateName: "verify", Lane: messages.LanePolicy, Action: messages.GateContinue}},
				{Gate: "other", Result: messages.GateResult{GateName: "other", Lane: messages.LanePolicy, Action: messages.GateContinue}},
			}}}
		case *LoadAccess:
			return Result{Value: AccessView{Level: "anonymous"}}
		case *ModelCall:
			return model{"RouteDecision": {directRoute}}.answer(r)
		case *UpdateAccess:
			update = r
			return Result{Value: []access.Transition{{Gate: "verify", From: "anonymous", To: "verified"}}}
		}
		return Result{}
	})
	if update == nil || len(update.Gates) != 1 || update.Gates[0] != "verify" {
		t.Fatalf("access update = %+v, want the verify gate only", update)
	}
	if !hasAudit(turn, "access_level_changed") {
		t.Error("level change not audited")
	}
}
