package pipeline

import (
	"encoding/json"
	"strings"
	"testing"
)

const testPlan = "---\nid: task-hello\ntype: task\ntitle: Write hello\nverify:\n  - name: exists\n    run: \"test -f hello.txt\"\n    expect: { exit_code: 0 }\n---\n\nCreate hello.txt.\n"

func planAnswer(markdown string, needsApproval bool) string {
	md, _ := json.Marshal(markdown)
	na := "false"
	if needsApproval {
		na = "true"
	}
	return `{"message":"I have a plan.","memory_queries":[],"memory_ops":[],"plan_action":{"action":"propose","plan_markdown":` + string(md) +
		`,"continuation_of":null,"interaction_mode_override":null},"needs_approval":` + na + `}`
}

// drivePlan runs a planner turn whose answer is answer; approval answers
// the ApprovalRequest, if one comes.
func drivePlan(t *testing.T, env *Env, answer string, approval func(*ApprovalRequest) Result) (*Turn, []*ApprovalRequest) {
	t.Helper()
	turn := newTurn("write hello")
	m := model{"RouteDecision": {plannerRoute}, "AgentResponse": {answer}}
	var asked []*ApprovalRequest
	drive(t, turn, env, func(req any) Result {
		switch r := req.(type) {
		case *ModelCall:
			return m.answer(r)
		case *ApprovalRequest:
			asked = append(asked, r)
			return approval(r)
		case *ApplyMemoryOps:
			return Result{Value: 0}
		}
		return Result{}
	})
	return turn, asked
}

func TestPlanNeedsApprovalEvenWhenModelSaysNot(t *testing.T) {
	for _, needs := range []bool{false, true} {
		env := testEnv()
		env.OwnerScope = true
		turn, asked := drivePlan(t, env, planAnswer(testPlan, needs), func(r *ApprovalRequest) Result {
			if r.Work.ApprovalToken != nil || !r.Work.NeedsApproval {
				t.Errorf("work item to approve %+v already carries a token or skips approval", r.Work)
			}
			return Result{Value: ApprovalOutcome{Approved: true}}
		})
		if len(asked) != 1 || asked[0].Work.ID != "task-hello" {
			t.Fatalf("needs_approval=%v: approval requests %v, want one for task-hello", needs, asked)
		}
		if !strings.Contains(turn.Answer.Text, "approved and is running") || !hasAudit(turn, "plan_proposed") {
			t.Errorf("answer %q audit %v", turn.Answer.Text, turn.Audit)
		}
		if !strings.Contains(env.Window.Render(), "Create hello.txt.") {
			t.Error("the plan is not in the workspace zone")
		}
	}
}

func TestPlanDeclinedAndTimedOutAnswers(t *testing.T) {
	for reason, want := range map[string]string{
		"declined":            "was declined",
		"timeout":             "before it timed out",
		"no_owner_connection": "no owner connection",
	} {
		env := testEnv()
		env.OwnerScope = true
		turn, _ := drivePlan(t, env, planAnswer(testPlan, true), func(*ApprovalRequest) Result {
			return Result{Value: ApprovalOutcome{Reason: reason}}
		})
		if !strings.Contains(turn.Answer.Text, want) {
			t.Errorf("%s: answer %q, want %q", reason, turn.Answer.Text, want)
		}
	}
}

func TestInvalidPlanBecomesTheAnswer(t *testing.T) {
	env := testEnv()
	env.OwnerScope = true
	turn, asked := drivePlan(t, env, planAnswer("---\nid: task-x\ntype: task\ntitel: typo\n---\nbody\n", true), func(*ApprovalRequest) Result {
		t.Fatal("an invalid plan was sent for approval")
		return Result{}
	})
	if len(asked) != 0 || !strings.Contains(turn.Answer.Text, "malformed") || !strings.Contains(turn.Answer.Text, "titel") {
		t.Fatalf("answer %q, want the parse error naming the field", turn.Answer.Text)
	}
}

func TestCustomerScopeCannotProposePlans(t *testing.T) {
	env := testEnv()
	turn, asked := drivePlan(t, env, planAnswer(testPlan, true), func(*ApprovalRequest) Result {
		t.Fatal("a customer's plan was sent for approval")
		return Result{}
	})
	if len(asked) != 0 || !strings.Contains(turn.Answer.Text, "by the owner") {
		t.Fatalf("answer %q, want plans need the owner", turn.Answer.Text)
	}
}
