package main

import (
	"encoding/json"
	"fmt"
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
	return startTest(t, loadConfig(t, goalOverrides(t, mock, dir, maxStanding)))
}

// goalOverrides are startGoal's configuration overrides.
func goalOverrides(t *testing.T, mock *mockllm.Server, dir string, maxStanding int) map[string]any {
	t.Helper()
	goal := filepath.Join(dir, "goal.md")
	if err := os.WriteFile(goal, []byte(helloGoal), 0o600); err != nil {
		t.Fatal(err)
	}
	ov := overrides(t, mock, dir)
	ov["silas.active_goal"] = goal
	ov["silas.autonomy.max_standing_executions"] = maxStanding
	return ov
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

// Spec 5.2.3, 8.1: a goal's standing approval asked while no owner
// connection is open waits for the owner, who is asked on connect; an owner
// who leaves while asked declines that request, which is no refusal of the
// standing approval: the next failing cycle asks again.
func TestGoalApprovalWaitsForOwner(t *testing.T) {
	mock := newMock(t)
	scriptPlanner(mock)
	dir := t.TempDir()
	d := startGoal(t, mock, dir, 2)

	var pending []string
	checkFor(t, waitLimit, func() bool {
		_, pending = pendingApprovals(t, d.Addr(), pwaToken)
		return len(pending) == 1
	}, "the standing approval to wait for the owner")
	if n := wsConnections(t, d.Addr()); n != 0 {
		t.Fatalf("%d connections while the standing approval was asked, want none", n)
	}
	c := owner(t, d.Addr())
	first := c.next("approval_request")
	if first.str("request_id") != pending[0] || first.str("work_item_id") != "goal-hello" {
		t.Fatalf("approval_request %v on connect, want the waiting standing approval %s", first, pending[0])
	}
	_ = c.conn.Close()
	checkFor(t, waitLimit, func() bool {
		_, pending = pendingApprovals(t, d.Addr(), pwaToken)
		return len(pending) == 1 && pending[0] != first.str("request_id")
	}, "the request the owner left declined, and a later cycle asking again")

	again := owner(t, d.Addr())
	standing := again.next("approval_request")
	if standing.str("title") != "Standing approval: Keep hello.txt present" || standing.str("request_id") == first.str("request_id") {
		t.Fatalf("approval_request %v, want a new standing approval", standing)
	}
	again.send(map[string]any{"type": "approval_response", "request_id": standing.str("request_id"), "verdict": "approved"})
	nextFix(t, again)
	d.stop()

	db := filepath.Join(dir, "db")
	declined := auditData(t, db, "approval_declined")
	if len(declined) == 0 || !strings.Contains(declined[0], first.str("request_id")) || !strings.Contains(declined[0], `"reason":"no_owner_connection"`) {
		t.Errorf("approval_declined entries %v, want the first request declined when the owner left", declined)
	}
	if n := len(auditData(t, db, "standing_approval_declined")); n != 0 {
		t.Errorf("%d standing_approval_declined entries: an owner's absence is no refusal", n)
	}
}

// Shutdown declines a goal's pending approval at once, and the Scheduler
// does not take it as the owner's refusal.
func TestGoalApprovalDeclinedAtShutdown(t *testing.T) {
	mock := newMock(t)
	scriptPlanner(mock)
	dir := t.TempDir()
	d := startGoal(t, mock, dir, 2)
	checkFor(t, waitLimit, func() bool {
		_, pending := pendingApprovals(t, d.Addr(), pwaToken)
		return len(pending) == 1
	}, "the standing approval to wait for the owner")
	d.stop()

	db := filepath.Join(dir, "db")
	declined := auditData(t, db, "approval_declined")
	if len(declined) == 0 || !strings.Contains(declined[0], `"reason":"shutdown"`) {
		t.Errorf("approval_declined entries %v, want the standing approval declined by the shutdown", declined)
	}
	for _, event := range []string{"standing_approval_declined", "goal_fix_blocked"} {
		if n := len(auditData(t, db, event)); n != 0 {
			t.Errorf("%d %s entries after a shutdown", n, event)
		}
	}
}

// Spec 5.2.3: the goal's standing token survives a restart. It allows two
// executions: one before the restart, one after it without asking the
// owner, and then it is exhausted, so the third fix task is asked about.
func TestGoalStandingTokenSurvivesRestart(t *testing.T) {
	mock := newMock(t)
	scriptPlanner(mock)
	dir := t.TempDir()
	ov := goalOverrides(t, mock, dir, 2)
	d := startTest(t, loadConfig(t, ov))
	c := owner(t, d.Addr())
	standing := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": standing.str("request_id"), "verdict": "approved"})
	first := nextFix(t, c)
	d.stop()

	d = startTest(t, loadConfig(t, ov))
	c = owner(t, d.Addr())
	var second string
	for second == "" {
		switch ev := c.nextAny(); ev.str("type") {
		case "approval_request":
			t.Fatalf("the owner was asked again after the restart: %v", ev)
		case "work_item_status":
			if ev.str("status") == "done" {
				second = ev.str("work_item_id")
			}
		}
	}
	if second == first || !strings.HasPrefix(second, "goal-hello-fix-") {
		t.Fatalf("after the restart fix task %q finished, want a new fix task of goal-hello", second)
	}
	if third := c.next("approval_request"); third.str("title") != "Fix: Keep hello.txt present" {
		t.Fatalf("approval_request %v, want the third fix task: the restored token is exhausted", third)
	}
	d.stop()

	db := filepath.Join(dir, "db")
	if n := len(auditData(t, db, "standing_approval_granted")); n != 1 {
		t.Errorf("%d standing approvals granted, want 1 across the restart", n)
	}
	if n := len(auditData(t, db, "goal_fix_authorized")); n != 2 {
		t.Errorf("%d fix tasks authorized by the standing token, want 2", n)
	}
	// Without the stored token the restarted daemon would have asked for a
	// new standing approval, not about the third fix task.
	if restored := auditData(t, db, "standing_approval_restored"); len(restored) != 1 || strings.Contains(restored[0], `"executions_used":0`) {
		t.Errorf("standing_approval_restored entries %v, want one with the execution before the restart counted", restored)
	}
}

// A goal that keeps failing on a 1 s schedule audits the first failing
// cycle and the recovery, which counts the failing cycles left unaudited,
// not every cycle. Its check notes each run in a file the test reads, and
// passes once the test creates the flag file.
func TestGoalRepeatedFailuresAuditedOnce(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	runs, flag := filepath.Join(dir, "runs"), filepath.Join(dir, "healthy")
	goal := strings.NewReplacer(
		"on_failure: spawn_task", "on_failure: report",
		`run: "test -f hello.txt"`, fmt.Sprintf(`run: "echo run >> %s && test -f %s"`, runs, flag),
	).Replace(helloGoal)
	path := filepath.Join(dir, "goal.md")
	if err := os.WriteFile(path, []byte(goal), 0o600); err != nil {
		t.Fatal(err)
	}
	ov := overrides(t, mock, dir)
	ov["silas.active_goal"] = path
	// The check counts its runs in a host file and passes on a host flag:
	// only the unisolated backend lets it. What is tested here is the
	// scheduler's auditing, not isolation.
	ov["silas.sandbox.backend"] = "subprocess"
	ov["silas.sandbox.allow_unisolated"] = true
	d := startTest(t, loadConfig(t, ov))

	cycles := func() int { b, _ := os.ReadFile(runs); return strings.Count(string(b), "run\n") }
	checkFor(t, waitLimit, func() bool { return cycles() >= 4 }, "four failing cycles")
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Cycles never overlap: once the second cycle after the flag started,
	// the first passed.
	after := cycles()
	checkFor(t, waitLimit, func() bool { return cycles() >= after+2 }, "two cycles after the flag")
	d.stop()

	db := filepath.Join(dir, "db")
	if failed := auditData(t, db, "goal_failed"); len(failed) != 1 {
		t.Errorf("%d goal_failed entries for one run of failures, want 1: %v", len(failed), failed)
	}
	entries := auditData(t, db, "goal_cycle")
	if len(entries) != 2 || !strings.Contains(entries[0], `"passed":false`) || !strings.Contains(entries[1], `"passed":true`) {
		t.Fatalf("goal_cycle entries %v, want the first failure and the recovery", entries)
	}
	var recovery struct {
		Repeats int `json:"previous_outcome_repeats"`
	}
	if err := json.Unmarshal([]byte(entries[1]), &recovery); err != nil || recovery.Repeats < 2 {
		t.Errorf("the recovery %s counts %d repeated failures, want at least 2 (%v)", entries[1], recovery.Repeats, err)
	}
}
