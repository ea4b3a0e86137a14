package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/scheduler"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/pipeline"
	"github.com/silas-ai/silas/sandbox/executor"
)

// The planner's research (runtime/pipeline stage_plan_research.go, spec
// 19.4.1 and 19.5.1). The state machine is turn data; the scope starts each
// micro-task off its mailbox when the turn asks (StartResearch), resumes the
// turn at once, and hands it the outcomes as they arrive (AwaitResearch),
// keeping those that arrive while the turn awaits something else.

// researchAllowlist is RESEARCH_TOOL_ALLOWLIST (spec 19.5.1): the only
// tools a research micro-task may call, enforced here and not by its
// prompt. Each is offered only when registered (web_search needs
// silas.search). Nothing that runs code or writes is on it: shell_exec,
// python_exec and skill scripts are never offered, and a call to them gets
// an error result and runs nothing.
var researchAllowlist = []string{executor.WebSearch}

const (
	// maxResearchToolCalls bounds the tool calls of one micro-task; after
	// them it must answer.
	maxResearchToolCalls = 6
	// researchGrace is how long after its timeout a micro-task's result
	// may still arrive before the scope's timer expires it: the
	// micro-task stops at its deadline, the timer is the backstop.
	researchGrace = 5 * time.Second
)

// researchDone carries the outcome of a research micro-task. Sender: the
// micro-task's goroutine, or the scope's timer once the micro-task ran past
// its deadline. Receiver: the Scope, which hands it to its turn.
type researchDone struct {
	turnID  string
	outcome pipeline.ResearchOutcome
}

// researchRuns is the research of the scope's current turn: the
// micro-tasks running (each with what stops it and its timer), the
// outcomes the turn has not taken yet, and whether it waits for one.
type researchRuns struct {
	running map[string]func()
	ready   []pipeline.ResearchOutcome
	waiting bool
}

// stop cancels every micro-task still running: their turn ended.
func (r *researchRuns) stop() {
	for _, stop := range r.running {
		stop()
	}
	r.running, r.ready, r.waiting = nil, nil, false
}

// startResearch starts the micro-task r asks for and resumes the turn at
// once. It counts as one model call against the scope's per-minute limit.
func (s *Scope) startResearch(c actor.Context, turnID string, r *pipeline.StartResearch) {
	if !s.llmLimit.Allow(s.d.now()) {
		s.resumeNow(c, turnID, pipeline.Result{Err: fmt.Errorf(
			"this conversation reached its limit of %d model calls a minute (limits.llm_calls_per_minute_per_scope)", s.d.Config.Limits.LLMCallsPerMinutePerScope)})
		return
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = pipeline.ResearchTimeout
	}
	task := s.researchTask(r)
	self, root := c.Self(), s.d.sys.Root
	reply := func(o pipeline.ResearchOutcome) { root.Send(self, &researchDone{turnID: turnID, outcome: o}) }
	turnCtx, cancel := context.WithCancel(context.Background())
	started := s.d.tasks.Go("research "+r.ID, func(ctx context.Context) {
		ctx, stop := context.WithTimeout(ctx, timeout)
		defer stop()
		defer context.AfterFunc(turnCtx, stop)()
		reply(task.run(ctx))
	}, func(err error) {
		reply(pipeline.ResearchOutcome{ID: r.ID, Status: pipeline.ResearchFailed, Error: err.Error()})
	})
	if !started {
		cancel()
		s.resumeNow(c, turnID, pipeline.Result{Err: errShuttingDown})
		return
	}
	cancelTimer := scheduler.NewTimerScheduler(c).SendOnce(timeout+researchGrace, self,
		&researchDone{turnID: turnID, outcome: pipeline.ResearchOutcome{ID: r.ID, Status: pipeline.ResearchTimedOut}})
	rr := &s.current.research
	if rr.running == nil {
		rr.running = make(map[string]func())
	}
	rr.running[r.ID] = func() { cancel(); cancelTimer() }
	s.resumeNow(c, turnID, pipeline.Result{})
}

// awaitResearch hands the turn the next outcome, at once when one arrived.
func (s *Scope) awaitResearch(c actor.Context, turnID string) {
	rr := &s.current.research
	switch {
	case len(rr.ready) > 0:
		o := rr.ready[0]
		rr.ready = rr.ready[1:]
		s.resumeNow(c, turnID, pipeline.Result{Value: o})
	case len(rr.running) == 0:
		// Nothing runs that could answer: never wait for nothing.
		s.resumeNow(c, turnID, pipeline.Result{Err: errors.New("no research is running")})
	default:
		rr.waiting = true
	}
}

// onResearchDone takes a micro-task's outcome: the turn gets it now if it
// waits for one, else when it asks. The first outcome of a micro-task
// counts (its result, or the timer's expiry); it stops the other.
func (s *Scope) onResearchDone(c actor.Context, m *researchDone) {
	r := s.current
	if r == nil || r.turn.ID != m.turnID || r.failed {
		return
	}
	rr := &r.research
	stop, ok := rr.running[m.outcome.ID]
	if !ok {
		return
	}
	stop()
	delete(rr.running, m.outcome.ID)
	if rr.waiting {
		rr.waiting = false
		s.resumeNow(c, m.turnID, pipeline.Result{Value: m.outcome})
		return
	}
	rr.ready = append(rr.ready, m.outcome)
}

// researchTask builds the micro-task of r from what the scope holds; it
// holds only values and thread-safe handles.
func (s *Scope) researchTask(r *pipeline.StartResearch) *researchTask {
	t := &researchTask{
		id: r.ID, scope: s.id, instructions: r.Instructions,
		complete: s.d.Models.Completer(llm.RoleExecutor),
		format:   s.d.formats[llm.SchemaExecutorAgentOutput],
		execs:    map[string]executor.Executor{},
	}
	if reg := s.d.Executors; reg != nil {
		for _, tool := range executorTools(reg) {
			if !slices.Contains(researchAllowlist, tool.Name) {
				continue
			}
			if ex, ok := reg.Get(tool.Name); ok {
				t.tools = append(t.tools, tool)
				t.execs[tool.Name] = ex
			}
		}
	}
	root, auditPID, scope, now := s.d.sys.Root, s.d.audit, s.id, s.d.now
	t.audit = func(event string, data map[string]any) {
		data["research_id"] = r.ID
		root.Send(auditPID, &messages.AuditEvent{Time: now(), Event: event, Scope: scope, Data: data})
	}
	return t
}

// researchTask is one research micro-task (spec 19.5.1): the executor model
// in research mode, stateless, with read-only tools, no approval and no
// sandbox: web_search runs in the daemon.
type researchTask struct {
	id, scope, instructions string
	complete                llm.Completer
	format                  *llm.ResponseFormat
	// tools are offered to the model; execs run them, by name: only
	// tools of researchAllowlist are in either.
	tools []llm.Tool
	execs map[string]executor.Executor
	audit func(event string, data map[string]any)
}

// run runs the micro-task until the executor answers with its
// ExecutorAgentOutput, fails, or ctx ends (expired at its deadline).
func (t *researchTask) run(ctx context.Context) pipeline.ResearchOutcome {
	out := pipeline.ResearchOutcome{ID: t.id}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: ResearchInstructions}, {Role: llm.RoleUser, Content: t.instructions}}
	calls := 0
	for {
		req := &llm.Request{Messages: msgs, Tools: t.tools, Format: t.format}
		if calls >= maxResearchToolCalls && len(t.tools) > 0 {
			req.ToolChoice = llm.ToolChoiceNone
		}
		run, err := llm.RunStructured(ctx, t.complete, req, decodeExecutorOutput)
		if run != nil {
			addResearchUsage(&out.Usage, run)
		}
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			out.Status = pipeline.ResearchTimedOut
			return out
		case err != nil:
			out.Status, out.Error = pipeline.ResearchFailed, err.Error()
			return out
		}
		resp := run.Response
		if len(resp.ToolCalls) == 0 || req.ToolChoice == llm.ToolChoiceNone {
			var o messages.ExecutorAgentOutput
			_ = json.Unmarshal([]byte(resp.Content), &o) // decodeExecutorOutput checked it
			out.Status, out.Summary, out.NextSteps = pipeline.ResearchDone, o.Summary, o.NextSteps
			return out
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		for _, tc := range resp.ToolCalls {
			calls++
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: t.call(ctx, tc, calls, &out)})
		}
	}
}

// call runs one tool call of the micro-task if its tool is on the
// allowlist and registered, and returns what the model sees of it.
func (t *researchTask) call(ctx context.Context, tc llm.ToolCall, n int, out *pipeline.ResearchOutcome) string {
	env := &messages.ExecutionEnvelope{
		ExecutionID: uuid.NewString(), StepIndex: n, TaskDescription: "planner research", Action: tc.Name,
		InputArtifacts: map[string]string{}, CredentialRefs: map[string]string{},
		TimeoutSeconds: messages.DefaultTimeoutSeconds, MaxOutputBytes: messages.DefaultMaxOutputBytes,
	}
	ex, ok := t.execs[tc.Name]
	if !ok {
		t.audit("research_tool_rejected", map[string]any{"tool": tc.Name})
		return modelView(failedResult(env, fmt.Sprintf("%q is not available: research is read-only, so nothing that runs code or changes anything can be called, and the call did not run; your tools: %s",
			tc.Name, toolList(t.tools))))
	}
	if n > maxResearchToolCalls {
		return modelView(failedResult(env, fmt.Sprintf("not run: at most %d tool calls per research; answer now with what you found", maxResearchToolCalls)))
	}
	args := map[string]any{}
	if err := json.Unmarshal([]byte(tc.Arguments), &args); err == nil {
		env.Args = args
	}
	if err := checkToolArgs(t.tools, tc.Name, env.Args); err != nil {
		return modelView(failedResult(env, err.Error()+"; the call did not run"))
	}
	t.audit("tool_call", map[string]any{"agent": "research", "tool": tc.Name})
	out.ToolCalls++
	res, err := ex.Execute(executor.WithScope(ctx, t.scope), env, nil)
	if res == nil {
		msg := "the tool failed"
		if err != nil {
			msg = err.Error()
		}
		res = failedResult(env, msg)
	}
	if res.Taint != messages.TaintOwner {
		// What the web said (or a provider's error about it) is now in
		// the micro-task's context, and so in its answer.
		out.External = true
	}
	return modelView(res)
}

func toolList(tools []llm.Tool) string {
	if len(tools) == 0 {
		return "none; answer from what you know"
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return fmt.Sprint(names)
}

// addResearchUsage charges what run's calls consumed to u.
func addResearchUsage(u *pipeline.Usage, run *llm.Result) {
	u.Calls += run.Calls
	u.PromptTokens += run.Usage.PromptTokens
	u.CompletionTokens += run.Usage.CompletionTokens
	u.CostUSD += run.Usage.CostUSD
	for _, m := range run.Models {
		if !slices.Contains(u.Models, m) {
			u.Models = append(u.Models, m)
		}
	}
	u.Fallbacks = append(u.Fallbacks, run.Fallbacks...)
}
