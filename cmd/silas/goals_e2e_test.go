package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/ownerapi"
)

// goalSlide is the confirmation a standing approval (high risk, spec 0.5.2)
// climbs to: the app's slide to approve.
var goalSlide = map[string]any{"method": "slide"}

// goalsHTTP calls an owner goal endpoint and decodes the answer into v.
func goalsHTTP(t *testing.T, addr, method, path string, want int, v any) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+addr+path, nil)
	req.Header.Set("Authorization", "Bearer owner-secret-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: HTTP %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// goalView reads goal id from GET /goals.
func goalView(t *testing.T, addr, id string) actors.GoalView {
	t.Helper()
	var r ownerapi.GoalsResponse
	goalsHTTP(t, addr, "GET", "/goals", http.StatusOK, &r)
	for _, g := range r.Goals {
		if g.ID == id {
			return g
		}
	}
	t.Fatalf("GET /goals has no %s: %+v", id, r.Goals)
	return actors.GoalView{}
}

// settled waits until goal id has no cycle in flight and no fix task is
// active, and returns it.
func settled(t *testing.T, d *testDaemon, id string) actors.GoalView {
	t.Helper()
	var g actors.GoalView
	checkFor(t, waitLimit, func() bool {
		g = goalView(t, d.Addr(), id)
		active, err := d.in.db.WorkItems().List(context.Background(), "owner")
		return err == nil && !g.Busy && len(active) == 0
	}, "the goal's cycle and fix task to end")
	return g
}

// The planner proposes a goal; the owner approves it over /ws, which grants
// its standing approval; it runs on its schedule (its fix tasks run under
// that approval, nobody is asked again), survives a restart paused and with
// its standing count, and is paused and resumed from chat, the owner API
// and `silas goals`.
func TestPlannedGoalScheduledPausedResumedAcrossRestart(t *testing.T) {
	mock := newMock(t)
	scriptPlan(mock, helloGoal)
	dir := t.TempDir()
	ov := overrides(t, mock, dir)
	ov["silas.autonomy.max_standing_executions"] = 10
	ov["silas.approval.request_timeout_seconds"] = 120
	cfgPath := writeConfig(t, ov)
	d := startTest(t, loadConfig(t, ov))
	c := owner(t, d.Addr())

	asked := c.say("make sure hello.txt is always there")
	req := c.next("approval_request")
	if req.str("title") != "Standing approval: Keep hello.txt present" || !strings.Contains(req.str("body"), "$failed_checks") {
		t.Fatalf("approval_request %v, want the goal with the fix tasks its standing approval allows", req)
	}
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved", "confirmation": goalSlide})
	if ans := c.answerTo(asked).str("text"); !strings.Contains(ans, "runs on its schedule (@every 1s)") || !strings.Contains(ans, "/goal pause goal-hello") {
		t.Fatalf("answer %q, want the goal scheduled", ans)
	}
	// Its cycles run on the schedule: the check fails in the empty check
	// sandbox, and the fix task runs under the standing approval.
	nextFix(t, c)
	g := goalView(t, d.Addr(), "goal-hello")
	if g.Source != "planner" || g.Status != actors.GoalActive || g.Schedule != "@every 1s" || g.Runs < 1 ||
		g.Standing == nil || g.Standing.ExecutionsUsed < 1 || g.Standing.MaxExecutions != 10 {
		t.Fatalf("GET /goals after a cycle: %+v", g)
	}

	// Paused from chat: a command, answered without a model call.
	calls := len(mock.Requests())
	cmd := c.say("/goal pause goal-hello")
	if ans := c.answerTo(cmd).str("text"); !strings.Contains(ans, "Paused goal-hello") {
		t.Fatalf("answer to the pause command: %q", ans)
	}
	if n := len(mock.Requests()); n != calls {
		t.Fatalf("the chat command made %d model calls", n-calls)
	}
	paused := settled(t, d, "goal-hello")
	if paused.Status != actors.GoalPaused || paused.NextRun != nil || paused.PausedAt == nil {
		t.Fatalf("after /goal pause: %+v", paused)
	}
	used := paused.Standing.ExecutionsUsed
	d.stop()

	// After a restart it is still paused, with its standing count.
	d = startTest(t, loadConfig(t, ov))
	c = owner(t, d.Addr())
	g = goalView(t, d.Addr(), "goal-hello")
	if g.Status != actors.GoalPaused || g.Runs != 0 || g.Standing == nil || g.Standing.ExecutionsUsed != used || g.Title != "Keep hello.txt present" {
		t.Fatalf("after the restart: %+v, want paused with %d standing executions used", g, used)
	}

	// Resumed through the owner API: it runs again, on the restored token.
	var v actors.GoalView
	goalsHTTP(t, d.Addr(), "POST", "/goals/goal-hello/resume", http.StatusOK, &v)
	if v.Status != actors.GoalActive || v.NextRun == nil {
		t.Fatalf("POST resume answered %+v", v)
	}
	nextFix(t, c)
	checkFor(t, waitLimit, func() bool {
		g = goalView(t, d.Addr(), "goal-hello")
		return g.Runs >= 1 && g.Standing != nil && g.Standing.ExecutionsUsed > used
	}, "a fix task under the restored standing approval")

	// Paused with `silas goals`, resumed from chat.
	url := "http://" + d.Addr()
	if out, err := runCLI(t, "goals", "pause", "goal-hello", "--config", cfgPath, "--url", url); err != nil || !strings.Contains(out, "paused goal-hello") {
		t.Fatalf("silas goals pause: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "goals", "--config", cfgPath, "--url", url); err != nil || !strings.Contains(out, "goal-hello") || !strings.Contains(out, "paused") {
		t.Fatalf("silas goals: %v\n%s", err, out)
	}
	runs := settled(t, d, "goal-hello").Runs
	cmd = c.say("/goal resume goal-hello")
	if ans := c.answerTo(cmd).str("text"); !strings.Contains(ans, "Resumed goal-hello") {
		t.Fatalf("answer to the resume command: %q", ans)
	}
	checkFor(t, waitLimit, func() bool { return goalView(t, d.Addr(), "goal-hello").Runs > runs }, "a cycle after /goal resume")
	list := c.say("/goals")
	if ans := c.answerTo(list).str("text"); !strings.Contains(ans, "**goal-hello** (Keep hello.txt present): active, @every 1s") {
		t.Fatalf("answer to /goals: %q", ans)
	}
	bad := c.say("/goal pause no-such-goal")
	if ans := c.answerTo(bad).str("text"); !strings.Contains(ans, `There is no goal "no-such-goal"`) {
		t.Fatalf("answer to pausing an unknown goal: %q", ans)
	}
	// The same goal proposed again is not scheduled twice.
	again := c.say("make sure hello.txt is always there")
	req = c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved", "confirmation": goalSlide})
	if ans := c.answerTo(again).str("text"); !strings.Contains(ans, `a goal with the id "goal-hello" is already scheduled`) {
		t.Fatalf("answer to the same goal approved twice: %q", ans)
	}
	d.stop()

	db := filepath.Join(dir, "db")
	if n := len(auditData(t, db, "approval_requested")); n != 2 {
		t.Errorf("%d approval requests, want the goal's and its duplicate's: its fix tasks run on the standing approval", n)
	}
	if n := len(auditData(t, db, "goal_added")); n != 1 {
		t.Errorf("%d goal_added entries, want 1", n)
	}
	for event, via := range map[string]string{"goal_added": `"via":"plan"`, "goal_paused": `"via":"chat"`, "goal_resumed": `"via":"api"`} {
		if e := auditData(t, db, event); len(e) == 0 || !strings.Contains(e[0], via) {
			t.Errorf("%s entries %v, want the first %s", event, e, via)
		}
	}
}

// A goal the planner proposes that cannot run on a schedule (no checks)
// is refused before the owner is asked.
func TestPlannedGoalRefused(t *testing.T) {
	mock := newMock(t)
	noChecks := strings.Replace(helloGoal, "verify:\n  - name: hello_exists\n    run: \"test -f hello.txt\"\n    expect: { exit_code: 0 }\n", "", 1)
	scriptPlan(mock, noChecks)
	dir := t.TempDir()
	ov := overrides(t, mock, dir)
	ov["silas.approval.request_timeout_seconds"] = 120
	d := startTest(t, loadConfig(t, ov))
	c := owner(t, d.Addr())
	ans := c.answerTo(c.say("watch hello.txt")).str("text")
	if !strings.Contains(ans, "was not run") || !strings.Contains(ans, "no verify checks") {
		t.Fatalf("answer %q, want the goal refused for its missing checks", ans)
	}
	var r ownerapi.GoalsResponse
	goalsHTTP(t, d.Addr(), "GET", "/goals", http.StatusOK, &r)
	if len(r.Goals) != 0 {
		t.Fatalf("goals after a refused plan: %+v", r.Goals)
	}
	goalsHTTP(t, d.Addr(), "POST", "/goals/goal-hello/pause", http.StatusNotFound, nil)
	d.stop()
	if n := len(auditData(t, filepath.Join(dir, "db"), "approval_requested")); n != 0 {
		t.Errorf("the owner was asked %d times about an unschedulable goal", n)
	}
}
