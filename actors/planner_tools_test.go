package actors

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/pipeline"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/executor"
	"github.com/silas-ai/silas/sandbox/subprocess"
)

const toPlanner = `{"route":"planner","reason":"needs a plan","response":null,"interaction_register":"execution","interaction_mode":"act_and_report","continuation_of":null,"context_profile":"conversation"}`

// plannerAnswer is an AgentResponse whose message is text.
func plannerAnswer(text string) *llm.Response {
	b, _ := json.Marshal(text)
	return &llm.Response{Content: `{"message":` + string(b) + `,"memory_queries":[],"memory_ops":[],"plan_action":null,"needs_approval":false}`}
}

func researchOutput(summary string) *llm.Response {
	b, _ := json.Marshal(summary)
	return &llm.Response{Content: `{"summary":` + string(b) + `,"artifact_refs":[],"next_steps":[]}`}
}

// plannerScript routes every turn to the planner; the planner makes the
// calls of its first round, then answers with the last message it read
// (the research results); research answers the research executor.
func plannerScript(first []llm.ToolCall, research func(ctx context.Context, req *llm.Request) (*llm.Response, error)) func(context.Context, *llm.Request) (*llm.Response, error) {
	return func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		switch req.Format.Name {
		case llm.SchemaRouteDecision:
			return &llm.Response{Content: toPlanner}, nil
		case llm.SchemaAgentResponse:
			if !slices.ContainsFunc(req.Messages, func(m llm.Message) bool { return m.Role == llm.RoleAssistant }) {
				return &llm.Response{ToolCalls: first, FinishReason: "tool_calls"}, nil
			}
			return plannerAnswer("Plan after reading: " + req.Messages[len(req.Messages)-1].Text()), nil
		case llm.SchemaExecutorAgentOutput:
			return research(ctx, req)
		}
		return &llm.Response{}, nil
	}
}

func requestsOf(h *harness, schema string) []llm.Request {
	var out []llm.Request
	for _, r := range h.model.Requests() {
		if r.Format != nil && r.Format.Name == schema {
			out = append(out, r)
		}
	}
	return out
}

// audited flushes the audit log and returns the data of its event entries.
func (h *harness) audited(event string) []map[string]any {
	h.t.Helper()
	if _, err := h.sys.d.sys.Root.RequestFuture(h.sys.d.audit, &messages.Flush{}, 10*time.Second).Result(); err != nil {
		h.t.Fatalf("flush audit: %v", err)
	}
	entries, err := h.db.Audit().Range(context.Background(), 0, 10_000)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []map[string]any
	for _, e := range entries {
		if e.Event == event {
			var data map[string]any
			if err := json.Unmarshal(e.Data, &data); err != nil {
				h.t.Fatal(err)
			}
			out = append(out, data)
		}
	}
	return out
}

// TestPlannerResearchesInParallelThenFinalizes: the planner asks for two
// research tasks in one round; both run at the same time (each waits for
// the other to start), both results reach the planner in one message after
// the round's tool messages, and it answers from them.
func TestPlannerResearchesInParallelThenFinalizes(t *testing.T) {
	var arrived atomic.Int32
	both := make(chan struct{})
	var once sync.Once
	h := newHarness(t, plannerScript([]llm.ToolCall{
		toolCall("c1", "request_research", `{"instructions":"Find the opening hours of the Lisbon Oceanarium."}`),
		toolCall("c2", "request_research", `{"instructions":"Find the ticket price of the Lisbon Oceanarium."}`),
	}, func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if arrived.Add(1) == 2 {
			once.Do(func() { close(both) })
		}
		select {
		case <-both:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return nil, errors.New("the other research never started: research ran one at a time")
		}
		return researchOutput("Found: " + req.Messages[1].Content), nil
	}), nil)
	c, s := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: "plan a visit to the Oceanarium", MessageID: "m1"})
	ans := s.wait(t, "answer", typed("message", "reply_to", "m1"))
	text, _ := ans["text"].(string)
	for _, want := range []string{"[RESEARCH RESULTS]", "Found: Find the opening hours", "Found: Find the ticket price"} {
		if !strings.Contains(text, want) {
			t.Fatalf("answer %q lacks %q", text, want)
		}
	}
	planner := requestsOf(h, llm.SchemaAgentResponse)
	if len(planner) != 2 {
		t.Fatalf("%d planner calls, want the research round and the answer", len(planner))
	}
	if got := offered(planner[0]); got != "memory_search,validate_plan,request_research" {
		t.Fatalf("planner offered %q", got)
	}
	// Each tool call's tool message follows the assistant message at once;
	// the results come after them.
	msgs := planner[1].Messages[2:]
	if len(msgs) != 4 || msgs[0].Role != llm.RoleAssistant || len(msgs[0].ToolCalls) != 2 ||
		msgs[1].ToolCallID != "c1" || msgs[2].ToolCallID != "c2" || msgs[3].Role != llm.RoleUser {
		t.Fatalf("planner's second request %+v", msgs)
	}
	if !strings.Contains(msgs[1].Content, `"status":"started"`) {
		t.Fatalf("immediate result %s", msgs[1].Content)
	}
	research := requestsOf(h, llm.SchemaExecutorAgentOutput)
	if len(research) != 2 {
		t.Fatalf("%d research calls", len(research))
	}
	for _, r := range research {
		if len(r.Tools) != 0 || r.Messages[0].Content != ResearchInstructions {
			t.Fatalf("research offered %q with prompt %q; want no tools without search", offered(r), r.Messages[0].Content)
		}
	}
	checkFor(t, 5*time.Second, func() bool {
		return len(h.audited("research_requested")) == 2 && len(h.audited("research_completed")) == 2 && len(h.audited("turn_completed")) == 1
	}, "research requested, completed and the turn audited")
	if done := h.audited("turn_completed")[0]; done["model_calls"] != float64(5) {
		t.Fatalf("turn_completed %v: want the proxy, two planner and two research calls charged", done)
	}
}

// countingSandbox counts the instances created through it.
type countingSandbox struct {
	sandbox.Manager
	creates atomic.Int32
}

func (c *countingSandbox) Create(ctx context.Context, cfg messages.SandboxConfig) (sandbox.Instance, error) {
	c.creates.Add(1)
	return c.Manager.Create(ctx, cfg)
}

// TestResearchCannotRunShellExec: the research executor asks for
// shell_exec and python_exec as well as web_search; only the search runs:
// no sandbox is ever created, the calls get errors, the rejections are
// audited, and the result reaches the planner tainted external.
func TestResearchCannotRunShellExec(t *testing.T) {
	srv, searches := fakeSearch(t)
	work, err := subprocess.New(subprocess.Options{Root: filepath.Join(t.TempDir(), "work")})
	if err != nil {
		t.Fatal(err)
	}
	sb := &countingSandbox{Manager: work}
	reg, err := executor.NewRegistry(executor.Options{Sandbox: sb, Search: executor.SearchOptions{
		Provider: executor.TavilyName, APIKey: "test-key", BaseURL: srv.URL,
	}})
	if err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(t.TempDir(), "pwned")
	h := newHarness(t, plannerScript([]llm.ToolCall{
		toolCall("c1", "request_research", `{"instructions":"How hot should green tea be brewed?"}`),
	}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		var seen []string
		for _, m := range req.Messages {
			if m.Role == llm.RoleTool {
				seen = append(seen, m.Name+": "+m.Content)
			}
		}
		if len(seen) == 0 {
			return &llm.Response{FinishReason: "tool_calls", ToolCalls: []llm.ToolCall{
				toolCall("x1", "shell_exec", `{"command":"touch `+pwned+`"}`),
				toolCall("x2", "python_exec", `{"code":"open('`+pwned+`','w')"}`),
				toolCall("x3", "web_search", `{"query":"green tea temperature"}`),
			}}, nil
		}
		return researchOutput(strings.Join(seen, " | ")), nil
	}), nil, func(d *Deps) { d.Executors = reg })
	c, s := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: "plan my tea", MessageID: "m1"})
	ans := s.wait(t, "answer", typed("message", "reply_to", "m1"))
	text, _ := ans["text"].(string)

	if n := sb.creates.Load(); n != 0 {
		t.Fatalf("research created %d sandboxes", n)
	}
	if _, err := os.Stat(pwned); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the shell or python call ran: %v", err)
	}
	if searches.Load() != 1 {
		t.Fatalf("search API called %d times, want the one allowed search", searches.Load())
	}
	research := requestsOf(h, llm.SchemaExecutorAgentOutput)
	if got := offered(research[0]); got != "web_search" {
		t.Fatalf("research offered %q, want web_search only", got)
	}
	if strings.Count(text, "research is read-only") != 2 || !strings.Contains(text, "Steep at 80C") {
		t.Fatalf("answer %q: want both refusals and the search result", text)
	}
	if !strings.Contains(text, `\"taint\":\"external\"`) && !strings.Contains(text, `"taint":"external"`) {
		t.Fatalf("answer %q: the research result is not marked external", text)
	}
	if strings.Contains(strings.ToLower(text), "ignore all previous instructions") {
		t.Fatalf("search text not scrubbed: %q", text)
	}
	checkFor(t, 5*time.Second, func() bool { return len(h.audited("research_tool_rejected")) == 2 }, "two rejected calls audited")
	var rejected []string
	for _, d := range h.audited("research_tool_rejected") {
		rejected = append(rejected, d["tool"].(string))
	}
	slices.Sort(rejected)
	if strings.Join(rejected, ",") != "python_exec,shell_exec" {
		t.Fatalf("rejected %v", rejected)
	}
	// The turn read web text: its answer is stored external.
	items, err := h.db.Chronicle().Recent(context.Background(), "owner", 10)
	if err != nil {
		t.Fatal(err)
	}
	if last := items[len(items)-1]; last.Taint != messages.TaintExternal {
		t.Fatalf("answer stored with taint %s, want external", last.Taint)
	}
}

// TestResearchTaskExpiresAtDeadline: a micro-task whose model never answers
// ends expired at its deadline, with what it spent.
func TestResearchTaskExpiresAtDeadline(t *testing.T) {
	task := &researchTask{id: "research-1", instructions: "x", execs: map[string]executor.Executor{},
		complete: func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, audit: func(string, map[string]any) {}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if o := task.run(ctx); o.Status != pipeline.ResearchTimedOut || o.Usage.Calls != 1 {
		t.Fatalf("outcome %+v, want expired after one call", o)
	}
	// A micro-task cancelled because its turn ended is not "expired".
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if o := task.run(ctx); o.Status != pipeline.ResearchFailed {
		t.Fatalf("outcome %+v, want failed", o)
	}
}

// TestResearchAllowlistIsReadOnly pins the allowlist: nothing on it runs
// code or writes.
func TestResearchAllowlistIsReadOnly(t *testing.T) {
	for _, name := range researchAllowlist {
		if name == executor.ShellExec || name == executor.PythonExec || name == SkillScript {
			t.Fatalf("%s is on the research allowlist", name)
		}
	}
}
