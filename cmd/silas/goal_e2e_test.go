package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// helloGoal fails its check every cycle (its checks run in an empty
// sandbox), and each fix task passes the same check once the executor
// wrote hello.txt in the fix task's work dir.
const helloGoal = `---
id: goal-hello
type: goal
title: Keep hello.txt present
schedule: "@every 1s"
on_failure: spawn_task
failure_context: "The goal check failed: $failed_checks. Create the file hello.txt in the work dir."
budget: { max_attempts: 1 }
verify:
  - name: hello_exists
    run: "test -f hello.txt"
    expect: { exit_code: 0 }
---

Keep hello.txt in place.
`

// startGoal starts Silas with helloGoal active and a standing token
// allowed maxStanding executions.
func startGoal(t *testing.T, mock *mockllm.Server, dir string, maxStanding int) *testDaemon {
	t.Helper()
	goal := filepath.Join(t.TempDir(), "goal.md")
	if err := os.WriteFile(goal, []byte(helloGoal), 0o600); err != nil {
		t.Fatal(err)
	}
	ov := overrides(t, mock, dir)
	ov["silas.active_goal"] = goal
	ov["silas.autonomy.max_standing_executions"] = maxStanding
	return startTest(t, loadConfig(t, ov))
}

// nextFix waits for a fix task of goal-hello to finish and returns its id.
func nextFix(t *testing.T, c *client) string {
	t.Helper()
	for {
		ev := c.next("work_item_status")
		id := ev.str("work_item_id")
		if !strings.HasPrefix(id, "goal-hello-fix-") {
			t.Fatalf("status of %q, want a fix task of goal-hello", id)
		}
		switch ev.str("status") {
		case "running":
		case "done":
			return id
		default:
			t.Fatalf("fix task %s: %v, want running then done", id, ev)
		}
	}
}

func TestGoalStandingTokenAuthorizesTwoFixTasksThenAsks(t *testing.T) {
	mock := newMock(t)
	scriptPlanner(mock)
	dir := t.TempDir()
	d := startGoal(t, mock, dir, 2)
	c := owner(t, d.Addr())

	// The first failing cycle asks for the goal's standing approval.
	standing := c.next("approval_request")
	if standing.str("title") != "Standing approval: Keep hello.txt present" || !strings.Contains(standing.str("body"), "$failed_checks") {
		t.Fatalf("approval_request %v, want the goal's standing approval showing its fix-task template", standing)
	}
	c.send(map[string]any{"type": "approval_response", "request_id": standing.str("request_id"), "verdict": "approved"})

	// Two fix tasks run under the standing token, one cycle after the other.
	first, second := nextFix(t, c), nextFix(t, c)
	if first == second {
		t.Fatalf("the same fix task %s ran twice", first)
	}
	if n := len(executorCalls(mock)); n != 4 {
		t.Fatalf("%d executor calls for two fix tasks, want 4", n)
	}
	// The third is refused by the exhausted token: the owner is asked.
	third := c.next("approval_request")
	if third.str("title") != "Fix: Keep hello.txt present" || !strings.Contains(third.str("body"), "hello_exists") {
		t.Fatalf("approval_request %v, want the third fix task with its failure details", third)
	}
	if n := len(executorCalls(mock)); n != 4 {
		t.Fatalf("the unapproved third fix task made %d executor calls", n-4)
	}
	c.send(map[string]any{"type": "approval_response", "request_id": third.str("request_id"), "verdict": "approved"})
	if id := nextFix(t, c); id == first || id == second {
		t.Fatalf("fix task %s ran again", id)
	}
	d.stop()

	db := filepath.Join(dir, "db")
	if n := len(auditData(t, db, "goal_fix_authorized")); n != 2 {
		t.Errorf("%d fix tasks authorized by the standing token, want 2", n)
	}
	refused := auditData(t, db, "standing_verification_failed")
	if len(refused) == 0 || !strings.Contains(refused[0], "used 2 of 2 executions") {
		t.Errorf("standing_verification_failed entries %v, want the exhausted token", refused)
	}
	if n := len(auditData(t, db, "execution_blocked_no_approval")); n != 0 {
		t.Errorf("%d fix tasks were blocked at their entry check", n)
	}
}

func TestGoalStandingApprovalDeclinedAsksPerFixTask(t *testing.T) {
	mock := newMock(t)
	scriptPlanner(mock)
	dir := t.TempDir()
	d := startGoal(t, mock, dir, 2)
	c := owner(t, d.Addr())

	standing := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": standing.str("request_id"), "verdict": "declined"})
	fix := c.next("approval_request")
	if fix.str("title") != "Fix: Keep hello.txt present" {
		t.Fatalf("approval_request %v, want the fix task itself", fix)
	}
	c.send(map[string]any{"type": "approval_response", "request_id": fix.str("request_id"), "verdict": "declined"})
	// The declined fix task is blocked and never runs; the next cycle asks
	// about a new one.
	next := c.next("approval_request")
	if next.str("title") != "Fix: Keep hello.txt present" || next.str("request_id") == fix.str("request_id") {
		t.Fatalf("approval_request %v, want a new fix task", next)
	}
	if n := len(executorCalls(mock)); n != 0 {
		t.Fatalf("declined fix tasks made %d executor calls", n)
	}
	d.stop()
	if n := len(auditData(t, filepath.Join(dir, "db"), "goal_fix_blocked")); n < 1 {
		t.Fatal("no goal_fix_blocked audit entry for the declined fix task")
	}
}
