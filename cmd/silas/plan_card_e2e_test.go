package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/plan"
	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/bundled"
)

// everyFieldPlan is a goal that sets every field the approval token signs
// (the plan projection of spec 3.3) to a value that is not its default, so
// that a card leaving one out is caught.
const everyFieldPlan = `---
id: goal-every-field
type: goal
title: Watch the shop feed
parent: goal-umbrella-x
spawned_by: goal-spawner-x
follow_up_of: task-before-x
domain: "business:shop-x"
agent: stream
budget: { max_tokens: 4321, max_cost_usd: 0.75, max_wall_time_seconds: 99, max_attempts: 7, max_planner_calls: 6 }
interaction_mode: act_and_report
input_artifacts_from: [report-x.md]
verify:
  - name: feed_reachable_x
    run: "curl -sf https://feed.example/x"
    expect: { contains: expected-text-x }
    timeout: 31
    network: true
gates:
  - name: tone_gate_x
    on: every_agent_response
    provider: llm
    check: friendly_check_x
    on_block: handoff_x
skills: [coding]
access_levels:
  level_x:
    description: Level description x
    tools: [tool_x]
    requires: [tone_gate_x]
    expires_after: 3601
escalation:
  handoff_x:
    action: transfer_to_queue
    queue: humans-queue-x
    max_retries: 4
schedule: "@every 17m"
on_failure: escalate_human
on_stuck: escalate
failure_context: "Feed failed x: $failed_checks"
tasks: [task-sub-x]
depends_on: [task-setup-x]
---

# Goal briefing x
Keep the feed healthy.
`

// signedMarkers are, for each JSON field of messages.PlanCard, text that
// must appear both in that field of the approval_request frame and in its
// row of every card. plan_hash is the plan's, added by planMarkers.
var signedMarkers = map[string][]string{
	"id":                   {"goal-every-field"},
	"type":                 {"goal"},
	"title":                {"Watch the shop feed"},
	"parent":               {"goal-umbrella-x"},
	"spawned_by":           {"goal-spawner-x"},
	"follow_up_of":         {"task-before-x"},
	"domain":               {"business:shop-x"},
	"agent":                {"stream"},
	"budget":               {"4321", "0.75", "99", "7", "6"},
	"body":                 {"Goal briefing x", "Keep the feed healthy."},
	"interaction_mode":     {"act_and_report"},
	"input_artifacts_from": {"report-x.md"},
	"verify":               {"feed_reachable_x", "curl -sf https://feed.example/x", "expected-text-x", "31"},
	"gates":                {"tone_gate_x", "every_agent_response", "llm", "friendly_check_x", "handoff_x"},
	"skills":               {"coding"},
	"skill_hashes":         {"coding"},
	"access_levels":        {"level_x", "Level description x", "tool_x", "tone_gate_x", "3601"},
	"escalation":           {"handoff_x", "transfer_to_queue", "humans-queue-x", "4"},
	"schedule":             {"@every 17m"},
	"on_failure":           {"escalate_human"},
	"on_stuck":             {"escalate"},
	"failure_context":      {"Feed failed x: $failed_checks"},
	"tasks":                {"task-sub-x"},
	"depends_on":           {"task-setup-x"},
}

// planMarkers returns signedMarkers with the plan hash of markdown, and
// fails when a field of the card has no markers: a field added to the
// signed plan must be added to this test, and so to every card.
func planMarkers(t *testing.T, markdown string) map[string][]string {
	t.Helper()
	w, err := plan.Parse(markdown)
	if err != nil {
		t.Fatalf("the test plan does not parse: %v", err)
	}
	// The daemon binds the installed hashes of the plan's (bundled)
	// skills before it asks: so does the expected hash.
	cat, _ := skills.Load(t.TempDir(), bundled.FS())
	approved := map[string]string{}
	for _, n := range cat.Names() {
		e, _ := cat.Get(n)
		approved[n] = e.Skill.Hash()
	}
	if w.SkillHashes, err = (&skills.Snapshot{Catalog: cat, Approved: approved}).Bind(w.Skills); err != nil {
		t.Fatal(err)
	}
	hash, err := messages.WorkItemPlanHash(w)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{"plan_hash": {hash}}
	for k, v := range signedMarkers {
		out[k] = v
	}
	typ := reflect.TypeFor[messages.PlanCard]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if _, ok := out[name]; !ok && name != "task_plans" && !taskOnlyFields[name] {
			t.Fatalf("PlanCard.%s has no markers in signedMarkers; set it in everyFieldPlan and list what the card must show", name)
		}
	}
	return out
}

// taskOnlyFields are PlanCard fields that only a task of a project may
// carry, so everyFieldPlan (a goal) cannot: projectTaskMarkers checks them.
var taskOnlyFields = map[string]bool{"outputs": true}

// projectPlan is a project of two tasks, each with fields of its own that
// its card must show.
const projectPlan = `---
id: project-two-tasks
type: project
title: Build two pages
tasks: [task-page-a, task-page-b]
---

# Overview
Two pages, the second after the first.

` + "```plan" + `
---
id: task-page-a
type: task
title: Write page A
skills: [skill-page-a]
outputs: [pages/a-out.html]
verify:
  - name: page_a_exists
    run: "test -f a.html"
    expect: { exit_code: 0 }
---

Briefing of page A.
` + "```" + `

` + "```plan" + `
---
id: task-page-b
type: task
title: Write page B
depends_on: [task-page-a]
gates:
  - name: gate_page_b
    on: every_agent_response
    provider: predicate
    type: regex
    config: { pattern: "secret-b" }
---

Briefing of page B.
` + "```" + `
`

// projectTaskMarkers are, for each task of projectPlan, what its card
// must show of its own fields.
var projectTaskMarkers = map[string]map[string][]string{
	"task-page-a": {"id": {"task-page-a"}, "title": {"Write page A"}, "skills": {"skill-page-a"}, "outputs": {"pages/a-out.html"},
		"verify": {"page_a_exists", "test -f a.html"}, "body": {"Briefing of page A."}, "parent": {"project-two-tasks"}},
	"task-page-b": {"id": {"task-page-b"}, "title": {"Write page B"}, "depends_on": {"task-page-a"},
		"gates": {"gate_page_b", "secret-b"}, "body": {"Briefing of page B."}, "parent": {"project-two-tasks"}},
}

// checkFrameFields checks that each field of the frame's plan object
// holds its markers.
func checkFrameFields(t *testing.T, where string, card map[string]any, markers map[string][]string) {
	t.Helper()
	for field, wants := range markers {
		b, _ := json.Marshal(card[field])
		for _, want := range wants {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: plan.%s = %s, want it to hold %q", where, field, b, want)
			}
		}
	}
}

// The approval_request frame carries every field the token signs.
func TestPlanApprovalRequestCarriesEverySignedField(t *testing.T) {
	mock := newMock(t)
	scriptPlan(mock, everyFieldPlan)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())

	id := c.say("watch the shop feed")
	req := c.next("approval_request")
	card, ok := req["plan"].(map[string]any)
	if !ok {
		t.Fatalf("approval_request %v has no plan object", req)
	}
	checkFrameFields(t, "approval_request", card, planMarkers(t, everyFieldPlan))
	if v, _ := card["verify"].([]any); len(v) != 1 || v[0].(map[string]any)["network"] != true {
		t.Errorf("plan.verify %v does not say the check has network access", card["verify"])
	}
	// The fields of spec 8.1 stay for older clients. The plan is a
	// scheduled goal: approving it grants its standing approval.
	if req.str("title") != "Standing approval: Watch the shop feed" || !strings.Contains(req.str("body"), "Keep the feed healthy.") || req["budget"] == nil {
		t.Errorf("approval_request %v lost its spec 8.1 fields", req)
	}
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "declined"})
	c.answer(id)
}

// A project's frame carries each task's own fields, in the order they run.
func TestProjectApprovalRequestCarriesEveryTask(t *testing.T) {
	mock := newMock(t)
	scriptPlan(mock, projectPlan)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())

	id := c.say("build two pages")
	req := c.next("approval_request")
	card, _ := req["plan"].(map[string]any)
	tasks, _ := card["task_plans"].([]any)
	if len(tasks) != 2 {
		t.Fatalf("plan.task_plans = %v, want the project's two tasks", card["task_plans"])
	}
	for i, id := range []string{"task-page-a", "task-page-b"} {
		task, _ := tasks[i].(map[string]any)
		if task["id"] != id {
			t.Fatalf("task_plans[%d] is %v, want %s (tasks in the order they run)", i, task["id"], id)
		}
		checkFrameFields(t, id, task, projectTaskMarkers[id])
		if hash, _ := task["plan_hash"].(string); len(hash) != 64 {
			t.Errorf("%s has plan_hash %q, want its hash", id, hash)
		}
	}
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "declined"})
	c.answer(id)
}
