package actors

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
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

// testSigner signs approval tokens with a key of its own.
type testSigner struct{ key ed25519.PrivateKey }

func (s testSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(s.key, msg), nil }

func (s testSigner) VerifyOwnerSignature(msg, sig []byte) (string, bool) {
	return "test", ed25519.Verify(s.key.Public().(ed25519.PublicKey), msg, sig)
}

// execHarness is an actor system that can run work items, with a model
// that writes hello.txt through one shell_exec call.
type execHarness struct {
	d         *shared
	eng       *approval.Engine
	execCalls atomic.Int32
	onExec    func() // when set, runs at every executor model call
	// planner answers the planner's consult and re-plan calls; nil answers
	// with no content.
	planner func(req *llm.Request) (*llm.Response, error)
	// usage is what every executor model call reports it consumed.
	usage llm.Usage
	// exec, when set, answers the executor's model calls instead of the
	// hello.txt script.
	exec func(req *llm.Request) *llm.Response
	// execErr, when set, is the error of every executor model call.
	execErr error
	// briefings are the briefings of the executor's model calls.
	briefMu   sync.Mutex
	briefings []string
}

// newExecHarness starts the system; opts may replace its dependencies.
func newExecHarness(t *testing.T, opts ...func(*Deps)) *execHarness {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Load(config.LoadOptions{Environ: []string{}, Overrides: map[string]any{"silas.data_dir": dir}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := persistence.Open(context.Background(), persistence.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	h := &execHarness{}
	model := llm.NewScripted(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Format == nil || req.Format.Name != llm.SchemaExecutorAgentOutput {
			if h.planner != nil {
				return h.planner(req)
			}
			return &llm.Response{}, nil
		}
		h.execCalls.Add(1)
		h.briefMu.Lock()
		h.briefings = append(h.briefings, req.Messages[1].Content)
		h.briefMu.Unlock()
		if h.onExec != nil {
			h.onExec()
		}
		if h.execErr != nil {
			return nil, h.execErr
		}
		if h.exec != nil {
			return h.exec(req), nil
		}
		if n := len(req.Messages); req.Messages[n-1].Role == llm.RoleTool {
			return &llm.Response{Content: `{"summary":"wrote hello.txt","artifact_refs":[],"next_steps":[]}`, Usage: h.usage}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: executor.ShellExec, Arguments: `{"command":"echo hi > hello.txt"}`}}, Usage: h.usage}, nil
	})
	router, err := llm.NewRouter(map[string]llm.Provider{"openrouter": model}, map[llm.Role]string{
		llm.RoleProxy: "openrouter:p", llm.RolePlanner: "openrouter:pl", llm.RoleExecutor: "openrouter:e", llm.RoleScorer: "openrouter:s",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, key, _ := ed25519.GenerateKey(nil)
	h.eng, err = approval.New(testSigner{key}, db.Nonces(), time.Now, approval.DefaultConfig())
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
	deps := Deps{
		Config: cfg, DB: db, Models: router, Sessions: minter, Log: zerolog.Nop(),
		Approval: h.eng, Sandbox: work, Executors: execs, Verifier: runner,
	}
	for _, o := range opts {
		o(&deps)
	}
	sys, err := Start(context.Background(), deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sys.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		db.Close()
	})
	h.d = sys.d
	return h
}

// approved parses the hello plan and attaches a verified token.
func (h *execHarness) approved(t *testing.T) *messages.WorkItem {
	t.Helper()
	w, err := plan.Parse("---\nid: task-hello\ntype: task\ntitle: Write hello\nverify:\n  - name: exists\n    run: \"test -f hello.txt\"\n    expect: { exit_code: 0 }\n---\n\nCreate hello.txt.\n")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := h.eng.IssueToken(w, messages.ApprovalDecision{Verdict: messages.VerdictApproved, ApprovalStrength: messages.StrengthTap}, messages.ApprovalFullPlan)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Verify(context.Background(), tok, w, nil); err != nil {
		t.Fatal(err)
	}
	w.ApprovalToken = tok
	return w
}

// run runs w as the child of a probe and returns its statuses, up to the
// final one.
func (h *execHarness) run(t *testing.T, w *messages.WorkItem) []messages.WorkItemStatusEvent {
	t.Helper()
	got := make(chan messages.WorkItemStatusEvent, 16)
	probe := actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Spawn(actor.PropsFromProducer(func() actor.Actor { return newWorkItem(h.d, "owner", w) }))
		case *workItemProgress:
			got <- m.event
		}
	})
	pid := h.d.sys.Root.Spawn(probe)
	t.Cleanup(func() { h.d.sys.Root.Stop(pid) })
	var out []messages.WorkItemStatusEvent
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-got:
			out = append(out, ev)
			if st := messages.WorkItemStatus(ev.Status); st.Final() {
				return out
			}
		case <-deadline:
			t.Fatalf("no final status within 20s; got %+v", out)
		}
	}
}

func statuses(evs []messages.WorkItemStatusEvent) string {
	var s []string
	for _, ev := range evs {
		s = append(s, ev.Status)
	}
	return strings.Join(s, ",")
}

func TestWorkItemRunsApprovedPlan(t *testing.T) {
	h := newExecHarness(t)
	evs := h.run(t, h.approved(t))
	if got := statuses(evs); got != "running,done" {
		t.Fatalf("statuses %s (%+v), want running,done", got, evs)
	}
	if n := h.execCalls.Load(); n != 2 {
		t.Fatalf("%d executor calls, want 2", n)
	}
}

func TestWorkItemChangedAfterApprovalIsBlocked(t *testing.T) {
	h := newExecHarness(t)
	w := h.approved(t)
	w.Body += "x" // one byte of the briefing changed after approval
	evs := h.run(t, w)
	if got := statuses(evs); got != "blocked" || !strings.Contains(evs[0].Detail, "could not be verified") {
		t.Fatalf("statuses %s (%+v), want blocked", got, evs)
	}
	if n := h.execCalls.Load(); n != 0 {
		t.Fatalf("a blocked work item made %d executor calls", n)
	}
}

func TestWorkItemWithoutTokenIsBlocked(t *testing.T) {
	h := newExecHarness(t)
	w := h.approved(t)
	w.ApprovalToken = nil
	if got := statuses(h.run(t, w)); got != "blocked" {
		t.Fatalf("statuses %s, want blocked", got)
	}
	if n := h.execCalls.Load(); n != 0 {
		t.Fatalf("a work item without a token made %d executor calls", n)
	}
}

// stored puts w into the work item store and reads it back, as a scope
// does when it resumes work items after a restart.
func (h *execHarness) stored(t *testing.T, w *messages.WorkItem) *messages.WorkItem {
	t.Helper()
	if err := h.d.DB.WorkItems().Put(t.Context(), "owner", w); err != nil {
		t.Fatal(err)
	}
	all, err := h.d.DB.WorkItems().List(t.Context(), "owner")
	if err != nil || len(all) != 1 {
		t.Fatalf("List = %d items, %v; want the one put", len(all), err)
	}
	return all[0]
}

func TestWorkItemResumesWithPersistedAttempts(t *testing.T) {
	h := newExecHarness(t)
	w := h.approved(t)
	w.Status, w.Attempts = messages.StatusRunning, 1
	w.BudgetUsed = messages.BudgetUsed{Attempts: 1, Tokens: 100}
	evs := h.run(t, h.stored(t, w))
	if got := statuses(evs); got != "running,done" {
		t.Fatalf("statuses %s (%+v), want running,done", got, evs)
	}
	if evs[0].Attempt != 2 || evs[1].Attempt != 2 {
		t.Fatalf("attempts %d,%d, want the fresh attempt numbered 2", evs[0].Attempt, evs[1].Attempt)
	}
	if n := h.execCalls.Load(); n != 2 {
		t.Fatalf("%d executor calls, want 2 (a fresh attempt)", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for ; ; <-tick.C {
		all, err := h.d.DB.WorkItems().List(t.Context(), "owner")
		if err != nil {
			t.Fatal(err)
		}
		if len(all) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the finished work item is still stored: %+v", all[0])
		}
	}
}

func TestWorkItemResumedCountsSpentBudget(t *testing.T) {
	h := newExecHarness(t)
	w := h.approved(t)
	w.Status, w.Attempts = messages.StatusRunning, w.Budget.MaxAttempts
	w.BudgetUsed = messages.BudgetUsed{Attempts: w.Budget.MaxAttempts}
	evs := h.run(t, h.stored(t, w))
	if got := statuses(evs); got != "stuck" || !strings.Contains(evs[0].Detail, "budget exhausted") || !strings.Contains(evs[0].Detail, "re-plan failed") {
		t.Fatalf("statuses %s (%+v), want stuck for an exhausted budget the planner could not re-plan", got, evs)
	}
	if n := h.execCalls.Load(); n != 0 {
		t.Fatalf("a work item with no attempts left made %d executor calls", n)
	}
}

func TestWorkItemPersistsAttemptBeforeRunning(t *testing.T) {
	h := newExecHarness(t)
	w := h.approved(t)
	seen := make(chan *messages.WorkItem, 1)
	h.onExec = func() {
		all, err := h.d.DB.WorkItems().List(context.Background(), "owner")
		if err == nil && len(all) == 1 {
			select {
			case seen <- all[0]:
			default:
			}
		}
	}
	if got := statuses(h.run(t, w)); got != "running,done" {
		t.Fatalf("statuses %s, want running,done", got)
	}
	select {
	case r := <-seen:
		if r.Status != messages.StatusRunning || r.Attempts != 1 || r.BudgetUsed.Attempts != 1 || r.ApprovalToken == nil {
			t.Fatalf("stored during the attempt: status %s attempts %d used %+v token %v; want running, attempt 1 counted, the token",
				r.Status, r.Attempts, r.BudgetUsed, r.ApprovalToken != nil)
		}
	default:
		t.Fatal("the work item was not stored when its attempt ran")
	}
}

func TestWorkItemJournalsRunningAttemptSpend(t *testing.T) {
	h := newExecHarness(t)
	h.usage = llm.Usage{PromptTokens: 100, CompletionTokens: 20}
	w := h.approved(t)
	w.BudgetUsed = messages.BudgetUsed{Tokens: 1000}
	// At the attempt's second model call, the store must know the first
	// call's 120 tokens: a crash now would not forget them.
	journaled := make(chan int, 1)
	h.onExec = func() {
		if h.execCalls.Load() != 2 {
			return
		}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			all, err := h.d.DB.WorkItems().List(context.Background(), "owner")
			if err == nil && len(all) == 1 && all[0].BudgetUsed.Tokens == 1120 {
				journaled <- all[0].BudgetUsed.Tokens
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		journaled <- -1
	}
	if got := statuses(h.run(t, h.stored(t, w))); got != "running,done" {
		t.Fatalf("statuses %s, want running,done", got)
	}
	if got := <-journaled; got != 1120 {
		t.Fatal("the first model call's tokens were not journaled before the second call")
	}
}

func TestWorkItemReplayedAfterItFinishedIsBlocked(t *testing.T) {
	h := newExecHarness(t)
	w := h.approved(t)
	again := *w // the same work item and token, kept for a second run
	if got := statuses(h.run(t, w)); got != "running,done" {
		t.Fatalf("first run: statuses %s, want running,done", got)
	}
	// The token's execution is recorded as spent before the item leaves
	// the store; wait for that.
	deadline := time.Now().Add(10 * time.Second)
	for {
		all, err := h.d.DB.WorkItems().List(t.Context(), "owner")
		if err != nil {
			t.Fatal(err)
		}
		if len(all) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the finished work item is still stored")
		}
		time.Sleep(5 * time.Millisecond)
	}
	evs := h.run(t, &again)
	if got := statuses(evs); got != "blocked" || !strings.Contains(evs[0].Detail, "already ran to its end") {
		t.Fatalf("second run: statuses %s (%+v), want blocked as a replay", got, evs)
	}
	if n := h.execCalls.Load(); n != 2 {
		t.Fatalf("%d executor calls, want the first run's 2 only", n)
	}
}
