package pipeline

import (
	"errors"
	"strings"
	"testing"
)

// TestCustomerNeverReadsAProviderError: when the model provider fails, a
// customer's answer holds none of the provider's error (its URL, host or
// body); the owner's does; the audit keeps the detail for both.
func TestCustomerNeverReadsAProviderError(t *testing.T) {
	providerErr := errors.New(`llm openrouter: chat completion: POST http://10.2.3.4:8421/v1/chat/completions: status 500: {"error":{"message":"upstream db-internal.corp:5432 refused"}}`)
	for _, tt := range []struct {
		name  string
		owner bool
		role  string // the model call that fails
	}{
		{"customer, proxy fails", false, "RouteDecision"},
		{"customer, planner fails", false, "AgentResponse"},
		{"owner, proxy fails", true, "RouteDecision"},
		{"owner, planner fails", true, "AgentResponse"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env, turn := testEnv(), newTurn("hi")
			env.OwnerScope = tt.owner
			if !tt.owner {
				turn.Scope, turn.In.SenderID, turn.In.Authenticated = "c-1", "customer", false
			}
			m := model{"RouteDecision": {plannerRoute}}
			drive(t, turn, env, func(req any) Result {
				switch r := req.(type) {
				case *LoadAccess:
					return ownerAccess
				case *ModelCall:
					if r.Schema == tt.role {
						return Result{Err: providerErr}
					}
					return m.answer(r)
				}
				return Result{}
			})
			text := turn.Answer.Text
			leaked := strings.Contains(text, "10.2.3.4") || strings.Contains(text, "db-internal") || strings.Contains(text, "status 500")
			switch {
			case !tt.owner && (leaked || text != CustomerModelErrorText):
				t.Errorf("customer answer %q, want %q", text, CustomerModelErrorText)
			case tt.owner && !strings.Contains(text, "status 500"):
				t.Errorf("owner answer %q lacks the provider's error", text)
			}
			var audited bool
			for _, a := range turn.Audit {
				if a.Event == "model_error" && strings.Contains(a.Data["error"].(string), "10.2.3.4") {
					audited = true
				}
			}
			if !audited {
				t.Errorf("no model_error audit with the detail: %+v", turn.Audit)
			}
		})
	}
}
