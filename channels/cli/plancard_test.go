package cli

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

func ptr[T any](v T) *T { return &v }

// fullCard is a plan card with every field set to a value that is not a
// default, and markers that show where each field lands.
func fullCard() messages.PlanCard {
	task := messages.PlanCard{
		ID: "task-child", Type: messages.WorkTask, Title: "Child task title", Agent: messages.AgentEphemeral,
		Budget: messages.DefaultBudget(), Body: "Child briefing line", InteractionMode: messages.ModeDefaultAndOffer,
		Skills: []string{"child-skill"}, OnFailure: "report", OnStuck: "consult_planner", Parent: ptr("project-full"),
		Verify:   []messages.VerificationCheck{{Name: "child_check", Run: "test -f child.txt", Expect: messages.Expectation{ExitCode: ptr(0)}, Timeout: 60}},
		PlanHash: "c0ffee",
	}
	return messages.PlanCard{
		ID: "project-full", Type: messages.WorkProject, Title: "Full plan title",
		Parent: ptr("goal-parent-x"), SpawnedBy: ptr("goal-spawner-x"), FollowUpOf: ptr("task-before-x"), Domain: ptr("business:shop-x"),
		Agent:  messages.AgentStream,
		Budget: messages.Budget{MaxTokens: 4321, MaxCostUSD: 0.75, MaxWallTimeSeconds: 99, MaxAttempts: 7, MaxPlannerCalls: 6},
		Body:   "# Brief\nProject briefing line", InteractionMode: messages.ModeActAndReport,
		InputArtifactsFrom: []string{"artifact-source-x"},
		Verify: []messages.VerificationCheck{{Name: "fetch_check", Run: "curl -sf https://example.org/x",
			Expect: messages.Expectation{Contains: ptr("expected-text-x")}, Timeout: 31, Network: true}},
		Gates: []messages.Gate{{Name: "gate-x", On: messages.TriggerOnToolCall, Provider: messages.ProviderLLM, Type: messages.GateRegex,
			Check: ptr("gate-check-x"), Config: map[string]any{"pattern": "pattern-x"}, OnBlock: "queue-x", PromoteToPolicy: true}},
		Skills:       []string{"skill-x"},
		SkillHashes:  map[string]string{"skill-x": "skill-hash-x"},
		AccessLevels: map[string]messages.AccessLevel{"level-x": {Description: "level description x", Tools: []string{"tool-x"}, Requires: []string{"gate-x"}, ExpiresAfter: ptr(3601)}},
		Escalation:   map[string]messages.EscalationAction{"queue-x": {Action: messages.EscalationTransferToQueue, Queue: ptr("humans-x"), MaxRetries: 4}},
		Schedule:     ptr("@every 17m"), OnFailure: "escalate_human", OnStuck: "escalate",
		FailureContext: ptr("failure context x $failed_checks"),
		Tasks:          []string{"task-child"}, DependsOn: []string{"task-setup-x"}, Outputs: []string{"out/report-x.md"},
		PlanHash:  "0123456789abcdef0123456789abcdef",
		TaskPlans: []messages.PlanCard{task},
	}
}

// cardWants is what the terminal must show for each field of fullCard, by
// the field's JSON name.
var cardWants = map[string][]string{
	"id":                   {"plan project-full"},
	"type":                 {"(project)"},
	"title":                {"title: Full plan title"},
	"parent":               {"parent: goal-parent-x"},
	"spawned_by":           {"spawned by: goal-spawner-x"},
	"follow_up_of":         {"follow-up of: task-before-x"},
	"domain":               {"domain: business:shop-x"},
	"agent":                {"agent: stream"},
	"budget":               {"4321 tokens", "$0.75", "99 s wall time", "7 attempts", "6 planner calls"},
	"body":                 {"| # Brief", "| Project briefing line"},
	"interaction_mode":     {"interaction mode: act_and_report"},
	"input_artifacts_from": {"input artifacts from: artifact-source-x"},
	"verify":               {"fetch_check: `curl -sf https://example.org/x`", `"contains":"expected-text-x"`, "timeout 31 s", "network access"},
	"gates":                {"gate-x:", `"on":"on_tool_call"`, `"provider":"llm"`, `"type":"regex"`, `"check":"gate-check-x"`, `"pattern":"pattern-x"`, `"on_block":"queue-x"`, `"promote_to_policy":true`},
	"skills":               {"skills: skill-x"},
	"skill_hashes":         {"skill hashes:", `skill-x: "skill-hash-x"`},
	"access_levels":        {"level-x:", "level description x", `"tools":["tool-x"]`, `"requires":["gate-x"]`, `"expires_after":3601`},
	"escalation":           {"queue-x:", `"action":"transfer_to_queue"`, `"queue":"humans-x"`, `"max_retries":4`},
	"schedule":             {"schedule: @every 17m"},
	"on_failure":           {"on failure: escalate_human"},
	"on_stuck":             {"on stuck: escalate"},
	"failure_context":      {"failure context: failure context x $failed_checks"},
	"tasks":                {"tasks: task-child"},
	"depends_on":           {"depends on: task-setup-x"},
	"outputs":              {"outputs: out/report-x.md"},
	"plan_hash":            {"plan hash 0123456789abcdef"},
	"task_plans":           {"task 1 of 1:", "plan task-child (task)", "title: Child task title", "skills: child-skill", "child_check: `test -f child.txt`", "| Child briefing line", "parent: project-full"},
}

// Every field of the card reaches the terminal: the owner sees all that the
// approval token signs before answering y.
func TestChatShowsEveryPlanCardField(t *testing.T) {
	card := fullCard()
	v := reflect.ValueOf(card)
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if v.Field(i).IsZero() {
			t.Errorf("fullCard leaves %s empty; set it so that the test checks it is shown", name)
		}
		if _, ok := cardWants[name]; !ok {
			t.Errorf("PlanCard.%s has no expected output in cardWants; show it in writePlanCard and list it here", name)
		}
	}

	verdicts := make(chan frame, 1)
	url := startServer(t, "", func(p *peer) {
		f, ok := p.read()
		if !ok {
			return
		}
		p.send(map[string]any{"type": "approval_request", "request_id": "req-plan", "title": card.Title, "body": card.Body, "plan": card})
		resp, ok := p.read()
		if !ok {
			return
		}
		verdicts <- resp
		p.answer(f, "ok")
		p.read()
	})
	r := run(t, context.Background(), url, "", strings.NewReader("build it\ny\n"))
	if r.runErr != nil {
		t.Fatalf("Run: %v (stderr %q)", r.runErr, r.err)
	}
	if resp := <-verdicts; resp.Verdict != verdictApproved {
		t.Fatalf("verdict %+v, want approved", resp)
	}
	card2, _, _ := strings.Cut(r.out, "approve? [y/N]")
	for field, wants := range cardWants {
		for _, want := range wants {
			if !strings.Contains(card2, want) {
				t.Errorf("%s: the card does not show %q:\n%s", field, want, card2)
			}
		}
	}
}

// Text the model wrote cannot drive the terminal: escape sequences, a
// carriage return or a bidi override in any field are shown escaped, so
// that no line of the card can be hidden or faked.
func TestChatPlanCardEscapesControlCharacters(t *testing.T) {
	card := fullCard()
	card.Title = "harmless\x1b[2K\rtitle"
	card.Body = "line\x1b[1A\x1b[2Kmore"
	card.Gates[0].Name = "gate\u202eevil"
	card.Skills = []string{"skill\nfake: line"}
	url := startServer(t, "", func(p *peer) {
		f, ok := p.read()
		if !ok {
			return
		}
		p.send(map[string]any{"type": "approval_request", "request_id": "r", "title": card.Title, "plan": card})
		p.read()
		p.answer(f, "ok")
		p.read()
	})
	r := run(t, context.Background(), url, "", strings.NewReader("go\nn\n"))
	if r.runErr != nil {
		t.Fatalf("Run: %v", r.runErr)
	}
	if strings.ContainsAny(r.out, "\x1b\r\u202e") || strings.Contains(r.out, "\nfake: line") {
		t.Fatalf("stdout carries control characters or a forged line: %q", r.out)
	}
	for _, want := range []string{`harmless\u001b[2K\u000dtitle`, `line\u001b[1A\u001b[2Kmore`, `gate\u202eevil`, `skill\u000afake: line`} {
		if !strings.Contains(r.out, want) {
			t.Errorf("stdout lacks the escaped %q: %q", want, r.out)
		}
	}
}
