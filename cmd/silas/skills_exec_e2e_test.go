package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// skillPlan is a task that lists skills (a YAML flow list such as
// "[coding]") and passes its check at once: the tests are about what runs.
func skillPlan(id, skillList string) string {
	return `---
id: ` + id + `
type: task
title: Use a skill
skills: ` + skillList + `
verify:
  - name: ran
    run: "true"
    expect: { exit_code: 0 }
---
Use the skill's script.
`
}

// toolResult is the content of the tool message answering callID.
func toolResult(mock *mockllm.Server, callID string) string {
	for _, r := range mock.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && m.ToolCallID == callID {
				return m.Content
			}
		}
	}
	return ""
}

// TestPlanWithCodingSkillRunsItsScript: a plan with skills: [coding] binds
// the bundled skill's hash into what the owner approves, the executor gets
// the skill's instructions and the skill_script tool, and the script's
// output comes back to it as a tool result.
func TestPlanWithCodingSkillRunsItsScript(t *testing.T) {
	mock := newMock(t)
	diff := "--- a/app.py\n+++ b/app.py\n@@ -1 +1,2 @@\n-print('a')\n+print('b')\n+print('c')\n"
	args, _ := json.Marshal(map[string]any{"skill": "coding", "script": "scripts/summarize_diff.py", "args": map[string]any{"diff": diff}})
	scriptWork(mock, skillPlan("task-skill", "[coding]"), executorScript(
		`{"summary":"summarized","artifact_refs":[],"next_steps":[]}`,
		mockllm.ToolCall{ID: "call-skill", Name: "skill_script", Arguments: string(args)}))
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())

	c.say("summarize this diff")
	req := c.next("approval_request")
	plan, _ := req["plan"].(map[string]any)
	hashes, _ := plan["skill_hashes"].(map[string]any)
	want := d.skills.Snapshot().Approved["coding"]
	if want == "" || hashes["coding"] != want {
		t.Fatalf("approval_request binds skill_hashes %v, want coding's installed hash %q", plan["skill_hashes"], want)
	}
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	evs := c.statusesUntilFinal("task-skill")
	if last := evs[len(evs)-1]; last.str("status") != "done" {
		t.Fatalf("work item ended %v, want done", last)
	}
	var proxySys, plannerSys string
	for _, r := range mock.Requests() {
		if len(r.Messages) == 0 || r.Messages[0].Role != "system" {
			continue
		}
		switch r.Schema {
		case "RouteDecision":
			proxySys = r.Messages[0].Content
		case "AgentResponse":
			plannerSys = r.Messages[0].Content
		}
	}
	if !strings.Contains(proxySys, "- coding: Use when") || strings.Contains(proxySys, "## Skill coding") {
		t.Errorf("the proxy should see the coding skill's name and description only")
	}
	if !strings.Contains(plannerSys, "## Skill coding") || !strings.Contains(plannerSys, "scripts/run_tests.py") {
		t.Errorf("the planner should see the coding skill's full instructions and scripts")
	}
	calls := executorCalls(mock)
	if len(calls) == 0 || !strings.Contains(calls[0].Messages[1].Content, "## Skill coding") || !strings.Contains(calls[0].Messages[1].Content, "scripts/summarize_diff.py") {
		t.Fatalf("the executor's briefing does not carry the coding skill's instructions and scripts")
	}
	if !strings.Contains(strings.Join(calls[0].Tools, ","), "skill_script") {
		t.Fatalf("the executor was not offered skill_script: %v", calls[0].Tools)
	}
	res := toolResult(mock, "call-skill")
	if !strings.Contains(res, `"success":true`) || !strings.Contains(res, "app.py") {
		t.Fatalf("the script's result %q does not summarize the diff", res)
	}
}

// TestSkillPlanHashBindsTheSkills: the plan hash covers the skill list, so
// a plan that lists other skills needs its own approval. (That it covers
// the bound skill hashes too is TestPlanWithCodingSkillRunsItsScript's
// skill_hashes check with messages' plan hash tests.)
func TestSkillPlanHashBindsTheSkills(t *testing.T) {
	mock := newMock(t)
	scriptWork(mock, skillPlan("task-skill", "[coding]"), executorScript(`{"summary":"x","artifact_refs":[],"next_steps":[]}`))
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())
	c.say("plan with coding")
	with := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": with.str("request_id"), "verdict": "declined"})
	c.statusesUntilFinalOrAnswer()

	scriptWork(mock, skillPlan("task-skill", "[coding, skill-maker]"), executorScript(`{"summary":"x","artifact_refs":[],"next_steps":[]}`))
	c.say("plan with two skills")
	both := c.next("approval_request")
	h1, _ := with["plan"].(map[string]any)["plan_hash"].(string)
	h2, _ := both["plan"].(map[string]any)["plan_hash"].(string)
	if h1 == "" || h1 == h2 {
		t.Fatalf("plan hashes %q and %q: changing the skill list must change the hash", h1, h2)
	}
}

// statusesUntilFinalOrAnswer drains the answer to a declined plan.
func (c *client) statusesUntilFinalOrAnswer() { c.next("message") }

// writeLocalSkill writes a minimal local skill into dir/<name> and records
// it as installed, as an approved install would.
func writeLocalSkill(t *testing.T, skillsDir, dbDir, name string) string {
	t.Helper()
	md := `---
name: ` + name + `
description: Use when the owner asks for a greeting in a test.
activation: auto
script_args:
  scripts/hello.py:
    who: {type: string, default: "world", max_length: 40}
---

# Greeter

## When to use
Use it to greet.
`
	script := "import argparse\np = argparse.ArgumentParser()\np.add_argument('--who', default='world')\nprint('hello ' + p.parse_args().who)\n"
	installRecorded(t, skillsDir, dbDir, name, map[string]string{"SKILL.md": md, "scripts/hello.py": script})
	return filepath.Join(skillsDir, name, "scripts", "hello.py")
}

// TestChangedSkillIsRefused (INV-06): one byte changed in an installed
// skill's script, and the next work item that uses it ends blocked with
// the reason before any script runs.
func TestChangedSkillIsRefused(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	ov := overrides(t, mock, dir)
	cfg := loadConfig(t, ov)
	script := writeLocalSkill(t, cfg.SkillsDir, filepath.Join(dir, "db"), "greeter")
	call := mockllm.ToolCall{ID: "call-greet", Name: "skill_script", Arguments: `{"skill":"greeter","script":"scripts/hello.py","args":{"who":"owner"}}`}
	scriptWork(mock, skillPlan("task-greet", "[greeter]"), executorScript(`{"summary":"greeted","artifact_refs":[],"next_steps":[]}`, call))
	d := startTest(t, cfg)
	c := owner(t, d.Addr())

	c.say("greet me")
	if last := c.approveAndFinish("task-greet"); last[len(last)-1].str("status") != "done" {
		t.Fatalf("the untouched skill's work item ended %v, want done", last[len(last)-1])
	}
	if res := toolResult(mock, "call-greet"); !strings.Contains(res, "hello owner") {
		t.Fatalf("the skill's script result %q, want its greeting", res)
	}

	b, _ := os.ReadFile(script)
	if err := os.WriteFile(script, append(b, '#'), 0o644); err != nil {
		t.Fatal(err)
	}
	before := len(executorCalls(mock))
	scriptWork(mock, skillPlan("task-greet-2", "[greeter]"), executorScript(`{"summary":"greeted","artifact_refs":[],"next_steps":[]}`, call))
	c.say("greet me again")
	evs := c.approveAndFinish("task-greet-2")
	last := evs[len(evs)-1]
	if last.str("status") != "blocked" || !strings.Contains(last.str("detail"), "greeter changed since it was approved") ||
		!strings.Contains(last.str("detail"), "scripts/hello.py") {
		t.Fatalf("the work item with a changed skill ended %v, want blocked naming the skill and the file", last)
	}
	if n := len(executorCalls(mock)); n != before {
		t.Fatalf("the executor was called %d times for a work item whose skill changed", n-before)
	}
}

// TestSkillChangedWhileRunningStopsBeforeTheNextScript: the skill is
// changed between two script calls of one attempt; the second call does not
// run and the work item ends blocked.
func TestSkillChangedWhileRunningStopsBeforeTheNextScript(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	cfg := loadConfig(t, overrides(t, mock, dir))
	script := writeLocalSkill(t, cfg.SkillsDir, filepath.Join(dir, "db"), "greeter")
	first := mockllm.ToolCall{ID: "call-1", Name: "skill_script", Arguments: `{"skill":"greeter","script":"scripts/hello.py","args":{"who":"one"}}`}
	second := mockllm.ToolCall{ID: "call-2", Name: "skill_script", Arguments: `{"skill":"greeter","script":"scripts/hello.py","args":{"who":"two"}}`}
	next := executorScript(`{"summary":"greeted","artifact_refs":[],"next_steps":[]}`, first, second)
	scriptWork(mock, skillPlan("task-greet", "[greeter]"), func(r *mockllm.RecordedRequest) mockllm.Reply {
		reply := next(r)
		if len(reply.ToolCalls) == 1 && reply.ToolCalls[0].ID == "call-2" {
			// The first script ran: change the skill before the second.
			b, _ := os.ReadFile(script)
			_ = os.WriteFile(script, append(b, '#'), 0o644)
		}
		return reply
	})
	d := startTest(t, cfg)
	c := owner(t, d.Addr())
	c.say("greet twice")
	evs := c.approveAndFinish("task-greet")
	last := evs[len(evs)-1]
	if last.str("status") != "blocked" || !strings.Contains(last.str("detail"), "greeter changed since it was approved") {
		t.Fatalf("work item ended %v, want blocked because the skill changed", last)
	}
	if !strings.Contains(toolResult(mock, "call-1"), "hello one") {
		t.Fatal("the first script call did not run")
	}
	if strings.Contains(toolResult(mock, "call-2"), "hello two") {
		t.Fatal("the second script call ran with the changed skill")
	}
}

// TestSkillArgsViolationNeverStarts: arguments outside the script's schema
// are refused before a process starts.
func TestSkillArgsViolationNeverStarts(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	cfg := loadConfig(t, overrides(t, mock, dir))
	writeLocalSkill(t, cfg.SkillsDir, filepath.Join(dir, "db"), "greeter")
	bad := mockllm.ToolCall{ID: "call-bad", Name: "skill_script",
		Arguments: `{"skill":"greeter","script":"scripts/hello.py","args":{"who":"` + strings.Repeat("x", 41) + `","extra":"--rm"}}`}
	scriptWork(mock, skillPlan("task-greet", "[greeter]"), executorScript(`{"summary":"x","artifact_refs":[],"next_steps":[]}`, bad))
	d := startTest(t, cfg)
	c := owner(t, d.Addr())
	c.say("greet badly")
	c.approveAndFinish("task-greet")
	res := toolResult(mock, "call-bad")
	if !strings.Contains(res, "did not run") || !strings.Contains(res, "script arguments rejected") || strings.Contains(res, "hello x") {
		t.Fatalf("arguments outside the schema got %q, want a refusal before any process", res)
	}
}

// TestRemovedSkillBlocksItsWorkItem: the owner removes a skill while a work
// item uses it; the item stops, blocked, and its next script does not run.
func TestRemovedSkillBlocksItsWorkItem(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	cfg := loadConfig(t, overrides(t, mock, dir))
	writeLocalSkill(t, cfg.SkillsDir, filepath.Join(dir, "db"), "greeter")
	first := mockllm.ToolCall{ID: "call-1", Name: "skill_script", Arguments: `{"skill":"greeter","script":"scripts/hello.py","args":{"who":"one"}}`}
	second := mockllm.ToolCall{ID: "call-2", Name: "skill_script", Arguments: `{"skill":"greeter","script":"scripts/hello.py","args":{"who":"two"}}`}
	next := executorScript(`{"summary":"greeted","artifact_refs":[],"next_steps":[]}`, first, second)
	var addr string
	scriptWork(mock, skillPlan("task-greet", "[greeter]"), func(r *mockllm.RecordedRequest) mockllm.Reply {
		reply := next(r)
		if len(reply.ToolCalls) == 1 && reply.ToolCalls[0].ID == "call-2" {
			req, _ := http.NewRequest(http.MethodDelete, "http://"+addr+"/skills/greeter", nil)
			req.Header.Set("Authorization", "Bearer owner-secret-token")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		return reply
	})
	d := startTest(t, cfg)
	addr = d.Addr()
	c := owner(t, d.Addr())
	c.say("greet twice")
	evs := c.approveAndFinish("task-greet")
	last := evs[len(evs)-1]
	if last.str("status") != "blocked" || !strings.Contains(last.str("detail"), "greeter") {
		t.Fatalf("work item ended %v, want blocked because its skill was removed", last)
	}
	if strings.Contains(toolResult(mock, "call-2"), "hello two") {
		t.Fatal("a script of the removed skill ran")
	}
}
