package actors

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/approval"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/plan"
	"github.com/silas-ai/silas/runtime/session"
	"github.com/silas-ai/silas/runtime/verify"
	"github.com/silas-ai/silas/sandbox/executor"
	"github.com/silas-ai/silas/sandbox/subprocess"
)

// goalHarness is an actor system that runs goals on a fake clock and can
// be stopped and started again on the same database, as a restart would.
type goalHarness struct {
	t     *testing.T
	deps  Deps
	sys   *System
	clock *clockwork.FakeClock
	eng   *approval.Engine
	owner string
}

// newGoalHarness builds the system's dependencies; configGoal, when set, is
// the markdown of silas.active_goal. seed runs on the database before the
// first start.
func newGoalHarness(t *testing.T, configGoal string) *goalHarness {
	t.Helper()
	dir := t.TempDir()
	ov := map[string]any{"silas.data_dir": dir}
	if configGoal != "" {
		path := filepath.Join(dir, "goal.md")
		if err := os.WriteFile(path, []byte(configGoal), 0o600); err != nil {
			t.Fatal(err)
		}
		ov["silas.active_goal"] = path
	}
	cfg, err := config.Load(config.LoadOptions{Environ: []string{}, Overrides: ov})
	if err != nil {
		t.Fatal(err)
	}
	db, err := persistence.Open(context.Background(), persistence.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	// The executor writes hello.txt with one shell_exec call.
	model := llm.NewScripted(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Format == nil || req.Format.Name != llm.SchemaExecutorAgentOutput {
			return &llm.Response{}, nil
		}
		if n := len(req.Messages); req.Messages[n-1].Role == llm.RoleTool {
			return &llm.Response{Content: `{"summary":"wrote hello.txt","artifact_refs":[],"next_steps":[]}`}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: executor.ShellExec, Arguments: `{"command":"echo hi > hello.txt"}`}}}, nil
	})
	router, err := llm.NewRouter(map[string]llm.Provider{"openrouter": model}, map[llm.Role]string{
		llm.RoleProxy: "openrouter:p", llm.RolePlanner: "openrouter:pl", llm.RoleExecutor: "openrouter:e", llm.RoleScorer: "openrouter:s",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, key, _ := ed25519.GenerateKey(nil)
	eng, err := approval.New(testSigner{key}, db.Nonces(), time.Now, approval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	work, err := subprocess.New(subprocess.Options{Root: filepath.Join(dir, "work")})
	if err != nil {
		t.Fatal(err)
	}
	checks, err := subprocess.New(subprocess.Options{Root: filepath.Join(dir, "verify")})
	if err != nil {
		t.Fatal(err)
	}
	execs, err := executor.NewRegistry(executor.Options{Sandbox: work})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := verify.New(verify.Options{Sandbox: checks})
	if err != nil {
		t.Fatal(err)
	}
	minter, _ := session.NewMinter([]byte(strings.Repeat("k", 32)))
	h := &goalHarness{t: t, eng: eng, owner: cfg.OwnerID}
	h.deps = Deps{
		Config: cfg, DB: db, Models: router, Sessions: minter, Log: zerolog.Nop(),
		Approval: eng, Sandbox: work, Executors: execs, Verifier: runner,
	}
	if configGoal != "" {
		if h.deps.Goal, err = ReadGoal(cfg.ActiveGoal); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		h.stop()
		db.Close()
	})
	return h
}

// start starts the system with a fresh fake clock: timers a stopped
// scheduler left behind never count as the new one's.
func (h *goalHarness) start() {
	h.t.Helper()
	h.clock = clockwork.NewFakeClock()
	h.deps.cronOptions = []gocron.SchedulerOption{gocron.WithClock(h.clock)}
	sys, err := Start(context.Background(), h.deps)
	if err != nil {
		h.t.Fatal(err)
	}
	h.sys = sys
}

func (h *goalHarness) stop() {
	if h.sys == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.sys.Stop(ctx); err != nil {
		h.t.Errorf("stop: %v", err)
	}
	h.sys = nil
}

// goals lists the goals by id.
func (h *goalHarness) goals() map[string]GoalView {
	h.t.Helper()
	list, err := h.sys.Goals(h.t.Context())
	if err != nil {
		h.t.Fatal(err)
	}
	out := make(map[string]GoalView, len(list))
	for _, g := range list {
		out[g.ID] = g
	}
	return out
}

// advance waits until n goal jobs wait on the fake clock, moves it by d and
// waits until the runs of each goal in want are reached and no cycle is in
// flight.
func (h *goalHarness) advance(n int, d time.Duration, want map[string]int) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.t.Context(), 10*time.Second)
	defer cancel()
	if err := h.clock.BlockUntilContext(ctx, n); err != nil {
		h.t.Fatalf("%d scheduled jobs never waited on the clock: %v", n, err)
	}
	h.clock.Advance(d)
	checkFor(h.t, 20*time.Second, func() bool {
		gs := h.goals()
		for id, runs := range want {
			if g := gs[id]; g.Runs != runs || g.Busy {
				return false
			}
		}
		return true
	}, "the goals' cycles")
}

// goalMarkdown is a goal whose check passes (or, failing, fails in the
// check's empty sandbox and spawns a fix task that writes hello.txt).
func goalMarkdown(id, schedule string, failing bool) string {
	check := "true"
	if failing {
		check = "test -f hello.txt"
	}
	return "---\nid: " + id + "\ntype: goal\ntitle: Goal " + id + "\nschedule: \"" + schedule + "\"\non_failure: spawn_task\n" +
		"failure_context: \"Failed: $failed_checks. Create hello.txt.\"\nbudget: { max_attempts: 1 }\nverify:\n" +
		"  - name: check\n    run: \"" + check + "\"\n    expect: { exit_code: 0 }\n---\n\nKeep it so.\n"
}

// seed stores a planner goal as an approval would, with a standing token
// of maxExec executions when maxExec > 0.
func (h *goalHarness) seed(md string, paused bool, maxExec int) *messages.WorkItem {
	h.t.Helper()
	w, err := plan.Parse(md)
	if err != nil {
		h.t.Fatal(err)
	}
	var tok *messages.ApprovalToken
	if maxExec > 0 {
		tok, err = h.eng.IssueToken(w, messages.ApprovalDecision{Verdict: messages.VerdictApproved, ApprovalStrength: messages.StrengthTap},
			messages.ApprovalStanding, approval.WithMaxExecutions(maxExec), approval.WithTTL(time.Hour))
		if err != nil {
			h.t.Fatal(err)
		}
	}
	rec := persistence.Goal{Goal: w, ID: w.ID, Source: persistence.GoalFromPlanner, AddedAt: time.Now().UTC(), Paused: paused}
	if err := h.deps.DB.Goals().Add(h.t.Context(), h.owner, rec, tok); err != nil {
		h.t.Fatal(err)
	}
	return w
}

// Several goals run on their own schedules; a paused goal starts no cycle
// while the others go on, a resumed one runs again, a removed one is gone
// from the store, and the config goal can be paused but not removed. A
// restart loads the goals as they were left.
func TestSchedulerGoalsPauseResumeRemoveRestart(t *testing.T) {
	h := newGoalHarness(t, goalMarkdown("g-config", "@every 3m", false))
	h.seed(goalMarkdown("g-a", "@every 1m", false), false, 0)
	h.seed(goalMarkdown("g-b", "@every 2m", false), false, 0)
	h.seed(goalMarkdown("g-c", "@every 1m", false), true, 0)
	h.start()

	gs := h.goals()
	if len(gs) != 4 {
		t.Fatalf("goals after start: %+v, want g-a, g-b, g-c and the config goal", gs)
	}
	if g := gs["g-c"]; g.Status != GoalPaused || g.NextRun != nil {
		t.Fatalf("stored paused goal loaded as %+v, want paused without a next run", g)
	}
	if g := gs["g-config"]; g.Source != persistence.GoalFromConfig || g.Status != GoalActive || g.NextRun == nil {
		t.Fatalf("config goal %+v", g)
	}
	// Three jobs (a, b, config): a runs each minute, b every second one.
	h.advance(3, time.Minute, map[string]int{"g-a": 1, "g-b": 0})
	h.advance(3, time.Minute, map[string]int{"g-a": 2, "g-b": 1})

	ctx := t.Context()
	v, err := h.sys.PauseGoal(ctx, "g-a")
	if err != nil || v.Status != GoalPaused || v.NextRun != nil || v.PausedAt == nil {
		t.Fatalf("PauseGoal = %+v, %v", v, err)
	}
	if again, err := h.sys.PauseGoal(ctx, "g-a"); err != nil || again.Status != GoalPaused {
		t.Fatalf("pausing twice = %+v, %v; want paused, no error", again, err)
	}
	// Two jobs now: b runs twice more, the paused a not once.
	h.advance(2, 2*time.Minute, map[string]int{"g-a": 2, "g-b": 2})
	h.advance(2, 2*time.Minute, map[string]int{"g-a": 2, "g-b": 3})

	if v, err = h.sys.ResumeGoal(ctx, "g-a"); err != nil || v.Status != GoalActive || v.NextRun == nil {
		t.Fatalf("ResumeGoal = %+v, %v", v, err)
	}
	h.advance(3, time.Minute, map[string]int{"g-a": 3})

	if v, err = h.sys.RemoveGoal(ctx, "g-b"); err != nil || v.ID != "g-b" || v.Status != GoalRemoved {
		t.Fatalf("RemoveGoal = %+v, %v", v, err)
	}
	if _, err := h.deps.DB.Goals().Get(ctx, h.owner, "g-b"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("removed goal still stored: %v", err)
	}
	for name, call := range map[string]func() error{
		"remove twice":       func() error { _, err := h.sys.RemoveGoal(ctx, "g-b"); return err },
		"pause unknown":      func() error { _, err := h.sys.PauseGoal(ctx, "nope"); return err },
		"resume unknown":     func() error { _, err := h.sys.ResumeGoal(ctx, ""); return err },
		"remove config goal": func() error { _, err := h.sys.RemoveGoal(ctx, "g-config"); return err },
	} {
		want := ErrNoSuchGoal
		if name == "remove config goal" {
			want = ErrConfigGoal
		}
		if err := call(); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	if _, err := h.sys.PauseGoal(ctx, "g-config"); err != nil {
		t.Fatal(err)
	}
	// The config goal is paused too: a runs alone.
	h.advance(1, time.Minute, map[string]int{"g-a": 4, "g-b": 0})

	h.stop()
	h.start()
	gs = h.goals()
	if _, ok := gs["g-b"]; ok || len(gs) != 3 {
		t.Fatalf("goals after restart: %+v, want g-a, g-c and the config goal", gs)
	}
	for id, status := range map[string]string{"g-a": GoalActive, "g-c": GoalPaused, "g-config": GoalPaused} {
		if g := gs[id]; g.Status != status || g.Runs != 0 {
			t.Errorf("after restart %s is %s with %d runs, want %s and a fresh count", id, g.Status, g.Runs, status)
		}
	}
	h.advance(1, time.Minute, map[string]int{"g-a": 1, "g-c": 0, "g-config": 0})
}

// Spec 5.2.3: a planner goal's standing token authorizes its fix tasks, and
// its execution count survives a restart: the next fix task uses the next
// execution, the owner is not asked.
func TestSchedulerStandingCountSurvivesRestart(t *testing.T) {
	h := newGoalHarness(t, "")
	h.seed(goalMarkdown("g-fix", "@every 1m", true), false, 3)
	h.start()
	ctx := t.Context()
	if st := h.goals()["g-fix"].Standing; st == nil || st.ExecutionsUsed != 0 || st.MaxExecutions != 3 {
		t.Fatalf("standing before a run: %+v, want 0 of 3", st)
	}
	fixDone := func(what string) {
		t.Helper()
		checkFor(t, 20*time.Second, func() bool {
			active, err := h.deps.DB.WorkItems().List(ctx, h.owner)
			return err == nil && len(active) == 0
		}, what)
	}
	h.advance(1, time.Minute, map[string]int{"g-fix": 1})
	if st := h.goals()["g-fix"].Standing; st == nil || st.ExecutionsUsed != 1 {
		t.Fatalf("standing after the first fix task: %+v, want 1 used", st)
	}
	fixDone("the first fix task to finish")

	h.stop()
	h.start()
	g := h.goals()["g-fix"]
	if g.Standing == nil || g.Standing.ExecutionsUsed != 1 || g.Standing.MaxExecutions != 3 {
		t.Fatalf("standing after restart: %+v, want 1 of 3 used", g.Standing)
	}
	h.advance(1, time.Minute, map[string]int{"g-fix": 1})
	if st := h.goals()["g-fix"].Standing; st == nil || st.ExecutionsUsed != 2 {
		t.Fatalf("standing after the fix task after the restart: %+v, want 2 used", st)
	}
	fixDone("the second fix task to finish")
	tok, err := h.deps.DB.WorkItems().Standing(ctx, h.owner, "g-fix")
	if err != nil || tok.ExecutionsUsed != 2 {
		t.Fatalf("stored standing token %+v, %v; want 2 used", tok, err)
	}
}

func TestParseGoalCommand(t *testing.T) {
	for _, tc := range []struct {
		text string
		kind goalOpKind
		id   string
		err  string
	}{
		{"/goals", opList, "", ""},
		{"  /goals list ", opList, "", ""},
		{"/goal", opList, "", ""},
		{"/goal pause g-1", opPause, "g-1", ""},
		{"/goals Resume g-1", opResume, "g-1", ""},
		{"/goal remove g-1", opRemove, "g-1", ""},
		{"/goal delete g-1", opRemove, "g-1", ""},
		{"/goal pause", 0, "", "name one goal: /goal pause <id>"},
		{"/goal pause a b", 0, "", "name one goal"},
		{"/goal run g-1", 0, "", `"run" is no goal command`},
	} {
		if !isGoalCommand(tc.text) {
			t.Errorf("%q is not seen as a goal command", tc.text)
			continue
		}
		kind, id, err := parseGoalCommand(tc.text)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.err)
		case tc.err == "" && (err != nil || kind != tc.kind || id != tc.id):
			t.Errorf("%q = %s %q %v, want %s %q", tc.text, kind, id, err, tc.kind, tc.id)
		}
	}
	for _, text := range []string{"pause goal g-1", "/goalie", "please /goals", "", "/connect x"} {
		if isGoalCommand(text) {
			t.Errorf("%q taken for a goal command", text)
		}
	}
}

func TestGoalListText(t *testing.T) {
	if got := goalListText(nil); !strings.Contains(got, "no scheduled goals") {
		t.Fatalf("empty list: %q", got)
	}
	next := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	got := goalListText([]GoalView{
		{ID: "g-1", Title: "One", Status: GoalActive, Schedule: "@every 1m", Source: "planner", NextRun: &next,
			Standing: &StandingView{ExecutionsUsed: 2, MaxExecutions: 5, ExpiresAt: next}},
		{ID: "g-2", Title: "Two", Status: GoalPaused, Schedule: "0 * * * *", Source: "config", LastOutcome: "passed"},
	})
	for _, want := range []string{"**g-1** (One): active, @every 1m, next check 2026-03-04 05:06:07 UTC; standing approval: 2 of 5",
		"**g-2** (Two): paused, 0 * * * *, from silas.active_goal, last check: passed; no standing approval", "/goal pause <id>"} {
		if !strings.Contains(got, want) {
			t.Errorf("list text lacks %q:\n%s", want, got)
		}
	}
}
