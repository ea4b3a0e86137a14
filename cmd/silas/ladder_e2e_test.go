package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// missingPlan is helloPlan with a check the executor's usual work does not
// satisfy: it wants missing.txt.
func missingPlan(budget string) string {
	p := strings.Replace(helloPlan, "test -f hello.txt", "test -f missing.txt", 1)
	if budget != "" {
		p = strings.Replace(p, "title: Write hello.txt", "title: Write hello.txt\nbudget: "+budget, 1)
	}
	return p
}

// revisedPlan is the planner's re-plan: another id and a check it can pass.
const revisedPlan = `---
id: task-hello-revised
type: task
title: Write hello.txt, revised
verify:
  - name: hello_exists
    run: "test -f hello.txt"
    expect: { exit_code: 0 }
---

# What to do
Create hello.txt; the earlier plan checked the wrong file.
`

const guidanceText = "The check wants missing.txt: create missing.txt, not hello.txt."

// ladderScript scripts a planner that proposes markdown, answers
// consult_planner with guidanceText and replan_request with revised, and
// an executor that writes hello.txt unless its briefing carries the
// planner's guidance, in which case it writes missing.txt.
type ladderScript struct {
	mu       sync.Mutex
	consults []int // executor calls made before each consult
	replans  int
	exec     int
	// hold, when set, delays every executor call until it is closed.
	hold chan struct{}
}

func (l *ladderScript) install(mock *mockllm.Server, markdown, revised string) {
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		if r.Schema == "ExecutorAgentOutput" && l.hold != nil {
			<-l.hold
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		switch r.Schema {
		case "RouteDecision":
			return mockllm.Reply{Content: routeDecision("planner", "")}, true
		case "PlannerGuidance":
			if r.Model != plannerModel || !strings.HasPrefix(r.LastUser(), "consult_planner") {
				return mockllm.Reply{Status: 400}, true
			}
			l.consults = append(l.consults, l.exec)
			return mockllm.Reply{Content: `{"guidance":"` + guidanceText + `"}`}, true
		case "AgentResponse":
			if strings.HasPrefix(r.LastUser(), "replan_request") {
				l.replans++
				return mockllm.Reply{Content: planReply(revised)}, true
			}
			return mockllm.Reply{Content: planReply(markdown)}, true
		case "ExecutorAgentOutput":
			l.exec++
			if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "tool" {
				return mockllm.Reply{Content: `{"summary":"wrote the file","artifact_refs":[],"next_steps":[]}`}, true
			}
			file := "hello.txt"
			if strings.Contains(requestText(r), guidanceText) {
				file = "missing.txt"
			}
			return mockllm.Reply{ToolCalls: []mockllm.ToolCall{{ID: "call-1", Name: "shell_exec", Arguments: `{"command":"echo hi > ` + file + `"}`}}}, true
		}
		return mockllm.Reply{}, false
	})
}

// statusTrail reads the work_item_status events of id up to a final one
// and returns them as status+attempt.
func statusTrail(c *client, id string) []string {
	var got []string
	for {
		ev := c.next("work_item_status")
		if ev.str("work_item_id") != id {
			continue
		}
		got = append(got, ev.str("status")+fmt.Sprint(ev["attempt"]))
		if st := ev.str("status"); st != "running" && st != "verification_failed" {
			return got
		}
	}
}

func TestThirdFailureConsultsPlanner(t *testing.T) {
	mock := newMock(t)
	ls := &ladderScript{}
	ls.install(mock, missingPlan(""), revisedPlan)
	dir := t.TempDir()
	d := startTest(t, loadConfig(t, overrides(t, mock, dir)))
	c := owner(t, d.Addr())

	c.say("please write hello.txt")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	got := statusTrail(c, "task-hello-file")
	want := "running1,verification_failed1,running2,verification_failed2,running3,verification_failed3,running4,done4"
	if strings.Join(got, ",") != want {
		t.Fatalf("statuses %v, want %s", got, want)
	}
	ls.mu.Lock()
	consults := ls.consults
	ls.mu.Unlock()
	// Three attempts of two executor calls each failed before the consult.
	if len(consults) != 1 || consults[0] != 6 {
		t.Fatalf("consults after executor calls %v, want one after the third attempt's 6 calls", consults)
	}
	calls := executorCalls(mock)
	if len(calls) != 8 {
		t.Fatalf("%d executor calls, want 2 per attempt", len(calls))
	}
	third, fourth := requestText(&calls[4]), requestText(&calls[6])
	if strings.Contains(third, "Planner guidance") {
		t.Fatal("the third attempt's briefing has planner guidance before any consult")
	}
	if !strings.Contains(fourth, "# Planner guidance\n"+guidanceText) || !strings.Contains(fourth, "# Previous attempt 3 failed") {
		t.Fatalf("the fourth attempt's briefing lacks the guidance or the failure:\n%s", fourth)
	}
	var consult *mockllm.RecordedRequest
	for _, r := range mock.Requests() {
		if r.Schema == "PlannerGuidance" {
			consult = &r
		}
	}
	if consult == nil || !strings.Contains(requestText(consult), "test -f missing.txt") || !strings.Contains(requestText(consult), "hello_exists") {
		t.Fatalf("the consult does not show the plan's checks and failures: %v", consult)
	}
	d.stop()
	db := filepath.Join(dir, "db")
	if n := len(auditData(t, db, "planner_consulted")); n != 1 {
		t.Fatalf("%d planner_consulted audit entries, want 1", n)
	}
	if n := len(auditData(t, db, "planner_guidance")); n != 1 {
		t.Fatalf("%d planner_guidance audit entries, want 1", n)
	}
}

func TestExhaustedBudgetAsksOwnerToApproveReplan(t *testing.T) {
	mock := newMock(t)
	ls := &ladderScript{}
	ls.install(mock, missingPlan("{ max_attempts: 2 }"), revisedPlan)
	dir := t.TempDir()
	d := startTest(t, loadConfig(t, overrides(t, mock, dir)))
	c := owner(t, d.Addr())

	c.say("please write hello.txt")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})

	// Both attempts fail; the re-plan needs the owner's approval before
	// anything else runs.
	replan := c.next("approval_request")
	if replan.str("title") != "Write hello.txt, revised" || replan.str("request_id") == req.str("request_id") {
		t.Fatalf("re-plan approval_request %v, want a fresh request for the revised plan", replan)
	}
	execBefore := len(executorCalls(mock))
	if execBefore != 4 {
		t.Fatalf("%d executor calls before the re-plan was approved, want the 2 attempts' 4", execBefore)
	}
	// A plan the owner asks for meanwhile does not take the re-plan's place.
	if got := c.answer(c.say("please write hello.txt")).str("text"); !strings.Contains(got, "another approval is waiting for your answer") {
		t.Fatalf("a plan asked while the re-plan waits answered %q", got)
	}
	c.send(map[string]any{"type": "approval_response", "request_id": replan.str("request_id"), "verdict": "approved"})

	seen := map[string]event{}
	for len(seen) < 2 {
		ev := c.next("work_item_status")
		if st := ev.str("status"); st != "running" && st != "verification_failed" {
			seen[ev.str("work_item_id")] = ev
		}
	}
	if old := seen["task-hello-file"]; old.str("status") != "failed" || !strings.Contains(old.str("detail"), "replaced by the re-plan task-hello-revised") {
		t.Fatalf("the old work item ended %v, want failed and replaced by the re-plan", old)
	}
	if revised := seen["task-hello-revised"]; revised.str("status") != "done" {
		t.Fatalf("the re-plan ended %v, want done", revised)
	}
	ls.mu.Lock()
	replans := ls.replans
	ls.mu.Unlock()
	if replans != 1 {
		t.Fatalf("%d replan_requests, want 1", replans)
	}
	d.stop()
	db := filepath.Join(dir, "db")
	for _, ev := range []string{"replan_requested", "replan_proposed", "work_item_replanned"} {
		if n := len(auditData(t, db, ev)); n != 1 {
			t.Errorf("%d %s audit entries, want 1", n, ev)
		}
	}
}

func TestDeclinedReplanEscalatesToOwner(t *testing.T) {
	mock := newMock(t)
	ls := &ladderScript{}
	ls.install(mock, missingPlan("{ max_attempts: 1 }"), revisedPlan)
	dir := t.TempDir()
	d := startTest(t, loadConfig(t, overrides(t, mock, dir)))
	c := owner(t, d.Addr())

	c.say("please write hello.txt")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	replan := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": replan.str("request_id"), "verdict": "declined"})
	end := waitFinal(t, c, "task-hello-file", "stuck")
	if d := end.str("detail"); !strings.Contains(d, "was not approved (declined)") || !strings.Contains(d, "Tell me how to proceed") {
		t.Fatalf("stuck detail %q, want the declined re-plan and what to do", d)
	}
	if n := len(executorCalls(mock)); n != 2 {
		t.Fatalf("%d executor calls, want the one attempt's 2: a declined re-plan runs nothing", n)
	}
	d.stop()
	if n := len(auditData(t, filepath.Join(dir, "db"), "work_item_escalated")); n != 1 {
		t.Fatalf("%d work_item_escalated audit entries, want 1", n)
	}
}

func TestSamePlanAgainEscalates(t *testing.T) {
	mock := newMock(t)
	ls := &ladderScript{}
	plan := missingPlan("{ max_attempts: 1 }")
	ls.install(mock, plan, plan) // the planner has no alternative
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())

	c.say("please write hello.txt")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	end := waitFinal(t, c, "task-hello-file", "stuck")
	if !strings.Contains(end.str("detail"), "same plan again") {
		t.Fatalf("stuck detail %q, want no alternative plan", end.str("detail"))
	}
}

func TestReplanWaitsForOwnerToReconnect(t *testing.T) {
	mock := newMock(t)
	ls := &ladderScript{hold: make(chan struct{})}
	ls.install(mock, missingPlan("{ max_attempts: 1 }"), revisedPlan)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())

	c.say("please write hello.txt")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	c.next("work_item_status") // running: the attempt waits on the executor
	_ = c.conn.Close()
	checkFor(t, waitLimit, func() bool { return wsConnections(t, d.Addr()) == 0 }, "the owner to be gone")
	close(ls.hold)
	checkFor(t, waitLimit, func() bool { ls.mu.Lock(); defer ls.mu.Unlock(); return ls.replans == 1 }, "the re-plan")

	// Nobody could approve the re-plan: it waits and asks the owner who
	// comes back.
	again := owner(t, d.Addr())
	replan := again.next("approval_request")
	if replan.str("title") != "Write hello.txt, revised" {
		t.Fatalf("approval_request %v, want the re-plan", replan)
	}
	again.send(map[string]any{"type": "approval_response", "request_id": replan.str("request_id"), "verdict": "approved"})
	waitFinal(t, again, "task-hello-revised", "done")
}

// The wait for an owner to approve a re-plan is bounded by
// silas.approval.request_timeout_seconds, as for a turn's plan: with no
// owner back in time the re-plan is not approved and the work item is
// stuck, never left waiting for good.
func TestReplanWithoutOwnerIsStuckAfterTheTimeout(t *testing.T) {
	mock := newMock(t)
	ls := &ladderScript{hold: make(chan struct{})}
	ls.install(mock, missingPlan("{ max_attempts: 1 }"), revisedPlan)
	dir := t.TempDir()
	ov := overrides(t, mock, dir)
	ov["silas.approval.request_timeout_seconds"] = 2
	d := startTest(t, loadConfig(t, ov))
	c := owner(t, d.Addr())

	c.say("please write hello.txt")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	c.next("work_item_status") // running: the attempt waits on the executor
	_ = c.conn.Close()
	checkFor(t, waitLimit, func() bool { return wsConnections(t, d.Addr()) == 0 }, "the owner to be gone")
	close(ls.hold)
	checkFor(t, waitLimit, func() bool {
		_, pending := pendingApprovals(t, d.Addr(), pwaToken)
		return len(pending) == 1
	}, "the re-plan to wait for the owner")
	checkFor(t, waitLimit, func() bool {
		declined, escalated := false, false
		for _, e := range activityAll(t, d.Addr(), "", 200) {
			declined = declined || e.Event == "approval_declined" && strings.Contains(e.Title, "while you were offline")
			escalated = escalated || e.Event == "work_item_escalated"
		}
		return declined && escalated
	}, "the re-plan declined for want of an owner, and the work item escalated")
	if _, pending := pendingApprovals(t, d.Addr(), pwaToken); len(pending) != 0 {
		t.Errorf("approvals %v still pending after the timeout", pending)
	}
	d.stop()

	db := filepath.Join(dir, "db")
	escalated := auditData(t, db, "work_item_escalated")
	if len(escalated) != 1 || !strings.Contains(escalated[0], "task-hello-revised") || !strings.Contains(escalated[0], "no_owner_connection") {
		t.Errorf("work_item_escalated entries %v, want the re-plan not approved for want of an owner", escalated)
	}
	if n := len(auditData(t, db, "work_item_replanned")); n != 0 {
		t.Errorf("%d work_item_replanned entries without an approval", n)
	}
}
