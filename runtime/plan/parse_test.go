package plan

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

func readPlan(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseSpecExample(t *testing.T) {
	w, err := Parse(readPlan(t, "task.md"))
	if err != nil {
		t.Fatal(err)
	}
	wantBudget := messages.DefaultBudget()
	checks := []struct {
		name      string
		got, want any
	}{
		{"id", w.ID, "task-3f2a9c1e-7b4d-4e8a-9c6f-1d2e3f4a5b6c"},
		{"type", w.Type, messages.WorkTask},
		{"title", w.Title, "Fix the failing date parser tests"},
		{"interaction_mode", w.InteractionMode, messages.ModeActAndReport},
		{"skills", w.Skills, []string{"coding"}},
		{"budget", w.Budget, wantBudget},
		{"verify name", w.Verify[0].Name, "tests_pass"},
		{"verify run", w.Verify[0].Run, "go test ./dateparse/..."},
		{"verify exit code", *w.Verify[0].Expect.ExitCode, 0},
		{"verify timeout", w.Verify[0].Timeout, 60},
		{"on_stuck", w.OnStuck, "consult_planner"},
		{"on_failure", w.OnFailure, "report"},
		{"agent", w.Agent, messages.AgentEphemeral},
		{"needs_approval", w.NeedsApproval, true},
		{"status", w.Status, messages.StatusPending},
		{"approval_token", w.ApprovalToken, (*messages.ApprovalToken)(nil)},
		{"body start", strings.SplitN(w.Body, "\n", 2)[0], "# Context"},
		{"body end", w.Body[strings.LastIndex(w.Body, "\n")+1:], "Report which test still fails and why."},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestParseGoal(t *testing.T) {
	w, err := Parse(readPlan(t, "goal.md"))
	if err != nil {
		t.Fatal(err)
	}
	if w.Agent != messages.AgentStream {
		t.Errorf("always_on goal agent = %s, want stream", w.Agent)
	}
	if len(w.Gates) != 3 || w.Gates[2].Lane() != messages.LaneQuality || w.Gates[1].Block.Outside[1] != 200 {
		t.Errorf("gates = %+v", w.Gates)
	}
	if lvl := w.AccessLevels["verified"]; *lvl.ExpiresAfter != 3600 || lvl.Requires[0] != "verify_customer" {
		t.Errorf("access level = %+v", lvl)
	}
	if esc := w.Escalation["escalate"]; *esc.Queue != "support-humans" || esc.MaxRetries != 2 {
		t.Errorf("escalation = %+v", esc)
	}
	if w.Body != "Greet the customer, then help with their order." {
		t.Errorf("body = %q", w.Body)
	}
}

func TestParseGoldenHashes(t *testing.T) {
	tests := []struct{ plan, hashFile string }{
		{"task.md", "task.plan_hash.txt"},
		{"goal.md", "goal.plan_hash.txt"},
	}
	for _, tt := range tests {
		w, err := Parse(readPlan(t, tt.plan))
		if err != nil {
			t.Fatal(err)
		}
		h, err := messages.WorkItemPlanHash(w)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", tt.hashFile)
		if os.Getenv("UPDATE_GOLDEN") != "" {
			if err := os.WriteFile(path, []byte(h+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if h+"\n" != string(want) {
			t.Errorf("%s: plan hash %s, want %s", tt.plan, h, want)
		}
	}
}

const minimal = "---\nid: t1\ntype: task\ntitle: T\n"

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		plan string
		want string
	}{
		{"no front matter", "# Just prose\n", "plan line 1: a plan starts with YAML front matter"},
		{"unclosed", "\n---\nid: x\n", `plan line 2: the front matter is not closed`},
		{"empty front matter", "---\n---\nbody", "plan line 1: front matter is empty"},
		{"yaml syntax", minimal + "skills: a: b\n---\n", "plan line 5: front matter: mapping values are not allowed"},
		{"yaml unclosed flow", minimal + "skills: [a\n---\n", "front matter: did not find expected ',' or ']'"},
		{"not a mapping", "---\n- a\n---\n", "plan line 2: expected a mapping of fields, got a list"},
		{"unknown key with suggestion", minimal + "verfy: []\n---\n", `plan line 5: verfy: unknown key; did you mean "verify"?`},
		{"unknown nested key", minimal + "budget: { max_token: 5 }\n---\n", `plan line 5: budget.max_token: unknown key; did you mean "max_tokens"?`},
		{"unknown key far from all", minimal + "zzzzzzzzzzzz: 1\n---\n", "unknown key; known keys are access_levels, agent,"},
		{"approval_token", minimal + "approval_token: abc\n---\n", "plan line 5: approval_token: a plan cannot carry an approval token"},
		{"runtime status", minimal + "status: done\n---\n", "plan line 5: status: is managed by the runtime"},
		{"needs_approval", minimal + "needs_approval: false\n---\n", "plan line 5: needs_approval: is managed by the runtime"},
		{"task_artifacts", minimal + "task_artifacts: { task-a: [a.txt] }\n---\n", "plan line 5: task_artifacts: is managed by the runtime"},
		{"body key", minimal + "body: hi\n---\n", "plan line 5: body: the briefing is the markdown"},
		{"missing id", "---\ntype: task\ntitle: T\n---\n", "plan line 1: id: is required"},
		{"missing title", "---\nid: t1\ntype: task\n---\n", "plan line 1: title: is required"},
		{"bad type", "---\nid: t1\ntype: chore\ntitle: T\n---\n", `plan line 3: type: "chore" is not a work item type`},
		{"two predicates", minimal + "verify:\n  - name: a\n    run: b\n    expect: { exit_code: 0, contains: ok }\n---\n",
			"plan line 8: verify[0].expect: exactly one predicate must be set, got 2 (exit_code, contains)"},
		{"no predicate", minimal + "verify:\n  - name: a\n    run: b\n    expect: {}\n---\n", "plan line 8: verify[0].expect: exactly one predicate must be set, got none"},
		{"missing verify field falls back to element line", minimal + "verify:\n  - name: a\n    expect: { exit_code: 0 }\n---\n", "plan line 6: verify[0].run: is required"},
		{"dotdot path", minimal + "verify:\n  - name: a\n    run: b\n    expect:\n      file_exists: ../x\n---\n", `plan line 9: verify[0].expect.file_exists: "../x": ".." components`},
		{"string for int", minimal + "budget: { max_tokens: lots }\n---\n", `plan line 5: budget.max_tokens: expected a whole number, got the string "lots"`},
		{"float for int", minimal + "budget:\n  max_attempts: 2.5\n---\n", "plan line 6: budget.max_attempts: expected a whole number, got float 2.5"},
		{"int for string", "---\nid: 42\ntype: task\ntitle: T\n---\n", "plan line 2: id: expected a string, got int 42; put the value in quotes"},
		{"scalar for list", minimal + "skills: coding\n---\n", `plan line 5: skills: expected a list, got the string "coding"`},
		{"list for struct", minimal + "budget: [1]\n---\n", "plan line 5: budget: expected a mapping of fields, got a list"},
		{"huge int", minimal + "budget: { max_tokens: 90071992547409930 }\n---\n", "budget.max_tokens: 90071992547409930 is out of range"},
		{"alias", minimal + "skills: &s [a]\ndepends_on: *s\n---\n", "anchors and aliases are not supported"},
		{"task on stream", minimal + "agent: stream\n---\n", "plan line 5: agent: a task must use agent ephemeral"},
		{"bad escalation", minimal + "escalation:\n  x:\n    action: respond\n---\n", "plan line 6: escalation.x.message: is required for action respond"},
		{"bad gate trigger", minimal + "gates:\n  - name: g\n    on: sometimes\n---\n", `plan line 7: gates[0].on: "sometimes" is not a gate trigger`},
		{"task schedule", minimal + "schedule: \"@hourly\"\n---\n", "plan line 5: schedule: only goals are scheduled"},
		{"duplicate key", minimal + "title: again\n---\n", "plan line 5: title: is set twice (first on line 4); keep one"},
		{"duplicate nested key", minimal + "escalation:\n  a: { action: report }\n  a: { action: retry }\n---\n", "plan line 7: escalation.a: is set twice (first on line 6)"},
		{"duplicate config key", minimal + "gates:\n  - name: g\n    on: on_tool_call\n    config: { x: 1, x: 2 }\n---\n", "gates[0].config.x: is set twice"},
		{"non-finite config", minimal + "gates:\n  - name: g\n    on: on_tool_call\n    config: { x: .inf }\n---\n", "gates[0].config.x: must be a finite number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.plan)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\ndoes not contain %q", err, tt.want)
			}
			if !errors.Is(err, ErrInvalidPlan) {
				t.Errorf("error %v does not match ErrInvalidPlan", err)
			}
		})
	}
}

func TestParseReportsEveryStructuralError(t *testing.T) {
	_, err := Parse(minimal + "verfy: []\nstatus: done\n---\n")
	if err == nil || !strings.Contains(err.Error(), "plan line 5: verfy") || !strings.Contains(err.Error(), "plan line 6: status") {
		t.Errorf("error %v, want both the unknown key and the runtime field", err)
	}
}

func TestParseDetails(t *testing.T) {
	tests := []struct {
		name  string
		plan  string
		check func(w *messages.WorkItem) bool
	}{
		{"CRLF and BOM", "\ufeff---\r\nid: t1\r\ntype: task\r\ntitle: T\r\n---\r\nBody\r\n", func(w *messages.WorkItem) bool { return w.Title == "T" && w.Body == "Body" }},
		{"leading blank lines", "\n\n" + minimal + "---\n", func(w *messages.WorkItem) bool { return w.ID == "t1" }},
		{"body with its own rule", minimal + "---\nintro\n---\nmore\n", func(w *messages.WorkItem) bool { return w.Body == "intro\n---\nmore" }},
		{"partial budget keeps defaults", minimal + "budget: { max_attempts: 2 }\n---\n", func(w *messages.WorkItem) bool {
			want := messages.DefaultBudget()
			want.MaxAttempts = 2
			return w.Budget == want
		}},
		{"explicit max_retries 0", minimal + "escalation: { r: { action: retry, max_retries: 0 } }\n---\n", func(w *messages.WorkItem) bool { return w.Escalation["r"].MaxRetries == 0 }},
		{"free-form gate config", minimal + "gates:\n  - name: g\n    on: on_tool_call\n    config: { pattern: 'a+', n: 2, nested: [true, null] }\n---\n", func(w *messages.WorkItem) bool {
			c := w.Gates[0].Config
			return c["pattern"] == "a+" && c["n"] == float64(2) && reflect.DeepEqual(c["nested"], []any{true, nil})
		}},
		{"goal cron", "---\nid: g\ntype: goal\ntitle: G\nschedule: \"*/30 * * * *\"\n---\n", func(w *messages.WorkItem) bool {
			return w.Agent == messages.AgentEphemeral && *w.Schedule == "*/30 * * * *"
		}},
		{"no skills, no parent", minimal + "---\n", func(w *messages.WorkItem) bool { return w.Skills != nil && len(w.Skills) == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Parse(tt.plan)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(w) {
				t.Errorf("unexpected result: %+v", w)
			}
		})
	}
}

func TestParseWithParentSkills(t *testing.T) {
	parent := messages.NewWorkItem("goal-1", messages.WorkGoal, "G")
	parent.Skills = []string{"web", "coding"}
	tests := []struct {
		name       string
		skillsLine string
		want       []string
	}{
		{"inherits when absent", "", []string{"web", "coding"}},
		{"explicit list overrides", "skills: [shell]\n", []string{"shell"}},
		{"explicit empty list means none", "skills: []\n", []string{}},
		{"explicit null means none", "skills:\n", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ParseWithParent(minimal+tt.skillsLine+"---\n", parent)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(w.Skills, tt.want) {
				t.Errorf("skills = %#v, want %#v", w.Skills, tt.want)
			}
			if w.Parent == nil || *w.Parent != "goal-1" {
				t.Errorf("parent = %v, want goal-1", w.Parent)
			}
		})
	}
	w, err := ParseWithParent(minimal+"---\n", parent)
	if err != nil {
		t.Fatal(err)
	}
	w.Skills[0] = "changed"
	if parent.Skills[0] != "web" {
		t.Error("the child shares the parent's skills slice")
	}
	if _, err := ParseWithParent(minimal+"parent: other\n---\n", parent); err == nil || !strings.Contains(err.Error(), `plan line 5: parent: "other" differs from the parent work item "goal-1"`) {
		t.Errorf("mismatched parent: %v", err)
	}
}

func TestNearest(t *testing.T) {
	keys := []string{"depends_on", "on_failure", "on_stuck", "skills", "verify"}
	tests := []struct{ key, want string }{
		{"verfy", "verify"},
		{"Skills", "skills"},
		{"depends-on", "depends_on"},
		{"onstuck", "on_stuck"},
		{"colour", ""},
	}
	for _, tt := range tests {
		if got := nearest(tt.key, keys); got != tt.want {
			t.Errorf("nearest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}
