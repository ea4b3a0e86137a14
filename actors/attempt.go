package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/verify"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/skills"
)

// attemptSpec is what one attempt is started with.
type attemptSpec struct {
	scope    string
	n        int
	before   messages.BudgetUsed // consumed so far, this attempt counted
	failure  string              // why the previous attempt failed
	guidance string              // the planner's guidance
	// keepDir, when set, receives a copy of the artifacts of an attempt
	// that passes (a project's task: its project checks them at the end).
	keepDir string
	// inputs are the artifacts kept in keepDir that the work item imports
	// as a follow-up (spec 5.2.1 step 0.5): they are placed in the fresh
	// work dir before the executor starts.
	inputs []string
	// gates are the work item's compiled gates: config gates.system and
	// its own, compiled once for all its attempts.
	gates *gates.ActiveSet
}

// Messages an Attempt's IO goroutines send back to it.
type (
	attemptSandbox struct {
		inst   sandbox.Instance
		skills *attemptSkills
		err    error
	}
	attemptModel struct {
		run *llm.Result // nil when no call was made
		err error
	}
	attemptVerified struct {
		report verify.Report
		staged []stagedSkill
		err    error
	}
	attemptInputs struct{ err error }
)

// Attempt is one attempt of a work item (spec 5.2.1 step 2), a child actor
// of its WorkItem: a fresh sandbox instance, the executor agent's tool
// loop, then verification of the instance's work dir in a sandbox of its
// own. Every model call, tool call and the verification run in tracked
// goroutines; their results come back as messages, so Receive never
// blocks. The attempt ends by sending attemptDone to its parent and
// stopping; its sandbox is destroyed however it stops.
//
// A panic in an attempt does not take its work item down: the WorkItem
// supervises its attempts by stopping the one that failed and counting it
// as a failed attempt (see WorkItem.HandleFailure).
type Attempt struct {
	d    *shared
	w    *messages.WorkItem // a copy: the attempt never changes it
	spec attemptSpec

	started time.Time
	// release tells the goroutine that owns the sandbox instance to
	// destroy it; nil once closed.
	release chan struct{}
	inst    sandbox.Instance
	cfg     messages.SandboxConfig
	msgs    []llm.Message
	calls   int
	out     *attemptDone
	ended   bool
	// ledger is what the attempt's tool calls actually did.
	ledger []messages.LedgerEntry
	// tools are the tools the executor is offered; its calls are checked
	// against their parameters before they run.
	tools []llm.Tool
	// skills are the work item's verified skills, mounted read-only.
	skills *attemptSkills
}

func newAttempt(d *shared, w *messages.WorkItem, spec attemptSpec) *Attempt {
	return &Attempt{d: d, w: w, spec: spec, out: &attemptDone{attempt: spec.n}}
}

// Receive drives the attempt from one IO result to the next.
func (a *Attempt) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		a.started = time.Now()
		a.tools = executorTools(a.d.Executors)
		a.createSandbox(c)
	case *attemptSandbox:
		a.onSandbox(c, m)
	case *attemptInputs:
		if m.err != nil {
			a.end(c, fmt.Errorf("place the input artifacts: %w", m.err))
			return
		}
		a.callModel(c)
	case *attemptModel:
		a.onModel(c, m)
	case *attemptTools:
		a.onTools(c, m)
	case *attemptVerified:
		if m.err != nil {
			a.end(c, fmt.Errorf("verification could not run: %w", m.err))
			return
		}
		a.out.report, a.out.staged = m.report, m.staged
		a.end(c, nil)
	case *actor.Stopped:
		a.destroy() // stopped by its supervisor or by shutdown
	}
}

// io runs fn in a tracked goroutine whose result fn sends to the attempt;
// a panic in fn or a refused start ends the attempt with an error.
func (a *Attempt) io(c actor.Context, name string, fn func(ctx context.Context) any, failed func(error) any) {
	self, root := c.Self(), a.d.sys.Root
	if !a.d.tasks.Go(name, func(ctx context.Context) { root.Send(self, fn(ctx)) },
		func(err error) { root.Send(self, failed(err)) }) {
		root.Send(self, failed(errShuttingDown))
	}
}

func (a *Attempt) createSandbox(c actor.Context) {
	cfg := messages.DefaultSandboxConfig()
	if sc := a.d.Config.Sandbox; sc.DefaultMemoryMB > 0 {
		cfg.MaxMemoryMB = sc.DefaultMemoryMB
	}
	if sc := a.d.Config.Sandbox; sc.DefaultCPUSeconds > 0 {
		cfg.MaxCPUSeconds = sc.DefaultCPUSeconds
	}
	// One goroutine owns the instance for the attempt's life: it creates
	// it, and destroys it when the attempt releases it or Silas stops, so
	// that no instance outlives its attempt whatever way the attempt ends.
	mgr, log, id, self, root := a.d.Sandbox, a.d.Log, a.w.ID, c.Self(), a.d.sys.Root
	db, w, stage := a.d.DB, a.w, a.d.Config.DataPath("sandbox", "skill-copies")
	var snap *skills.Snapshot
	if a.d.Skills != nil {
		snap = a.d.Skills()
	}
	release := make(chan struct{})
	a.release = release
	if !a.d.tasks.Go("attempt sandbox", func(ctx context.Context) {
		sk, err := prepareSkills(ctx, db, snap, w, stage)
		if err != nil {
			root.Send(self, &attemptSandbox{err: err})
			return
		}
		defer sk.remove()
		cfg.FilesystemRead = append(cfg.FilesystemRead, sk.dirs()...)
		in, err := mgr.Create(ctx, cfg)
		root.Send(self, &attemptSandbox{inst: in, skills: sk, err: err})
		if err != nil || in == nil {
			return
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := in.Destroy(dctx); err != nil {
			log.Warn().Err(err).Str("work_item", id).Msg("destroy attempt sandbox")
		}
	}, func(err error) { root.Send(self, &attemptSandbox{err: err}) }) {
		root.Send(self, &attemptSandbox{err: errShuttingDown})
	}
}

func (a *Attempt) onSandbox(c actor.Context, m *attemptSandbox) {
	if m.err != nil {
		a.end(c, fmt.Errorf("create the attempt's sandbox: %w", m.err))
		return
	}
	a.inst, a.cfg, a.skills = m.inst, m.inst.Config(), m.skills
	if t, ok := a.skills.tool(); ok {
		a.tools = append(a.tools, t)
	}
	briefing := attemptBriefing(a.w, a.spec.n, a.spec.failure, a.spec.guidance) + a.skills.briefing()
	if len(a.spec.inputs) > 0 {
		briefing += inputsBriefing(*a.w.FollowUpOf, a.spec.inputs)
	}
	a.msgs = []llm.Message{
		{Role: llm.RoleSystem, Content: ExecutorInstructions},
		{Role: llm.RoleUser, Content: briefing},
	}
	if len(a.spec.inputs) == 0 {
		a.callModel(c)
		return
	}
	src, dst, inputs := a.spec.keepDir, a.inst.WorkDir(), a.spec.inputs
	a.io(c, "attempt inputs", func(context.Context) any {
		return &attemptInputs{err: placeInputs(src, dst, inputs)}
	}, func(err error) any { return &attemptInputs{err: err} })
}

// callModel checks the budget, then asks the executor model for its next
// step.
func (a *Attempt) callModel(c actor.Context) {
	// before counts this attempt among the attempts; the attempts
	// dimension was checked when the attempt started, so it counts only
	// the earlier ones here.
	spent := a.spec.before
	spent.Attempts--
	spent.Tokens += a.out.used.Tokens
	spent.CostUSD += a.out.used.CostUSD
	spent.WallTimeSeconds += time.Since(a.started).Seconds()
	if ex := attemptLimitsOf(spent, a.w.Budget); len(ex) > 0 {
		a.end(c, fmt.Errorf("%w before a model call (%s)", errBudgetExhausted, strings.Join(ex, ", ")))
		return
	}
	complete := a.d.Models.Completer(llm.RoleExecutor)
	req := &llm.Request{Messages: a.msgs, Tools: a.tools, Format: a.d.formats[llm.SchemaExecutorAgentOutput]}
	timeout := a.d.Config.LLM.Timeout() * time.Duration(a.d.Config.LLM.MaxRetries+1)
	a.io(c, "executor model call", func(ctx context.Context) any {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		// The executor's final answer is structured like every other
		// role's (spec 5.1.0): an answer that breaks its schema is sent
		// back once with the error, then fails the attempt.
		run, err := llm.RunStructured(cctx, complete, req, decodeExecutorOutput)
		if err != nil && ctx.Err() != nil {
			err = errShuttingDown
		}
		return &attemptModel{run: run, err: err}
	}, func(err error) any { return &attemptModel{err: err} })
}

func (a *Attempt) onModel(c actor.Context, m *attemptModel) {
	if m.run != nil {
		// Calls that were answered are spent, also when the answer then
		// failed its schema.
		a.spend(c, m.run)
	}
	switch {
	case errors.Is(m.err, llm.ErrStructuredOutputInvalid):
		a.end(c, fmt.Errorf("the executor's answer broke the ExecutorAgentOutput schema, also after one repair: %w", m.err))
		return
	case m.err != nil:
		if !errors.Is(m.err, errShuttingDown) {
			m.err = fmt.Errorf("executor model call: %w", m.err)
		}
		a.end(c, m.err)
		return
	}
	res := m.run.Response
	if len(res.ToolCalls) == 0 {
		out := executorOutput(res.Content)
		a.out.summary, a.out.nextSteps = out.Summary, out.NextSteps
		a.collectArtifacts(out.ArtifactRefs)
		a.verify(c)
		return
	}
	if a.calls >= maxToolCallsPerAttempt {
		a.audit("tool_call_cap_reached", map[string]any{"attempt": a.spec.n, "cap": maxToolCallsPerAttempt})
		a.out.summary = fmt.Sprintf("the executor stopped after %d tool calls", a.calls)
		a.collectArtifacts(nil)
		a.verify(c)
		return
	}
	a.msgs = append(a.msgs, llm.Message{Role: llm.RoleAssistant, Content: res.Content, ToolCalls: res.ToolCalls})
	calls := make([]*messages.ExecutionEnvelope, 0, len(res.ToolCalls))
	for _, tc := range res.ToolCalls {
		a.calls++
		a.out.used.ExecutorRuns++
		a.audit("tool_call", map[string]any{"attempt": a.spec.n, "tool": tc.Name})
		calls = append(calls, a.envelope(tc, a.calls))
	}
	tcs := res.ToolCalls
	root, auditPID := a.d.sys.Root, a.d.audit
	step := &toolStep{
		execs: a.d.Executors, tools: a.tools, inst: a.inst, skills: a.skills, conns: a.connScripts(), db: a.d.DB, runner: a.d.Gates, set: a.spec.gates,
		maxEvals: a.d.Config.Limits.MaxGateEvalsPerTurn, attempt: a.spec.n, scope: a.spec.scope, workID: a.w.ID,
		audit: func(ev messages.AuditEvent) { root.Send(auditPID, &ev) }, now: a.d.now,
	}
	a.io(c, "attempt tool calls", func(ctx context.Context) any {
		return step.run(ctx, tcs, calls)
	}, func(err error) any {
		// A tool that panicked answers every call of this step with the error.
		out := &attemptTools{}
		for i, tc := range tcs {
			out.add(tc, step.entry(tc.Name, failedResult(calls[i], err.Error()), ""))
		}
		return out
	})
}

// onTools hands the step's results to the executor model and its ledger
// to the WorkItem, which journals it; a blocking after_step gate ends the
// attempt, and the work item, as blocked.
func (a *Attempt) onTools(c actor.Context, m *attemptTools) {
	a.ledger = append(a.ledger, m.ledger...)
	c.Send(c.Parent(), &attemptLedger{attempt: a.spec.n, entries: m.ledger})
	if m.skillChanged != "" {
		a.audit("skill_unusable", map[string]any{"attempt": a.spec.n, "reason": m.skillChanged})
		a.end(c, fmt.Errorf("%w: %s", errSkillUnusable, m.skillChanged))
		return
	}
	if m.blocked != "" {
		a.audit("work_item_gate_blocked", map[string]any{"attempt": a.spec.n, "trigger": string(messages.TriggerAfterStep), "gate": m.blocked})
		a.out.blocked = "blocked by the policy gate " + m.blocked
		a.collectArtifacts(nil)
		a.end(c, nil)
		return
	}
	a.msgs = append(a.msgs, m.results...)
	a.callModel(c)
}

// collectArtifacts takes the attempt's artifacts from its ledger, never
// from the executor's claims, and audits where the claims differ (spec
// 5.2.1 c3).
func (a *Attempt) collectArtifacts(claimed []string) {
	a.out.artifacts = ledgerArtifacts(a.ledger)
	unproduced, unclaimed := artifactMismatch(claimed, a.out.artifacts)
	if len(unproduced) > 0 || len(unclaimed) > 0 {
		a.audit("artifact_ref_mismatch", map[string]any{"attempt": a.spec.n,
			"claimed_not_produced": orNone(unproduced), "produced_not_claimed": orNone(unclaimed)})
	}
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// envelope builds the execution envelope of one tool call; arguments that
// are not a JSON object leave Args nil, which checkToolArgs rejects.
func (a *Attempt) envelope(tc llm.ToolCall, step int) *messages.ExecutionEnvelope {
	env := &messages.ExecutionEnvelope{
		ExecutionID: uuid.NewString(), StepIndex: step, TaskDescription: a.w.Title, Action: tc.Name,
		InputArtifacts: map[string]string{}, CredentialRefs: map[string]string{},
		TimeoutSeconds: messages.DefaultTimeoutSeconds, MaxOutputBytes: messages.DefaultMaxOutputBytes,
		SandboxConfig: a.cfg,
	}
	args := map[string]any{}
	if err := json.Unmarshal([]byte(tc.Arguments), &args); err == nil {
		env.Args = args
	}
	return env
}

func (a *Attempt) verify(c actor.Context) {
	runner, checks, dir, keep, artifacts := a.d.Verifier, a.w.Verify, a.inst.WorkDir(), a.spec.keepDir, a.out.artifacts
	maker := slices.Contains(a.w.Skills, SkillMakerName)
	a.io(c, "attempt verification", func(ctx context.Context) any {
		rep, err := runner.Run(ctx, checks, dir)
		if err != nil && ctx.Err() != nil {
			err = errShuttingDown
		}
		if err == nil && rep.Passed && keep != "" {
			if err = keepArtifacts(dir, keep, artifacts); err != nil {
				err = fmt.Errorf("keep the artifacts for the project: %w", err)
			}
		}
		var staged []stagedSkill
		if err == nil && rep.Passed && maker {
			if staged, err = harvestStagedSkills(dir); err != nil {
				err = fmt.Errorf("take the skills skill-maker staged: %w", err)
			}
		}
		return &attemptVerified{report: rep, staged: staged, err: err}
	}, func(err error) any { return &attemptVerified{err: err} })
}

// end reports the attempt's outcome to the WorkItem and stops.
func (a *Attempt) end(c actor.Context, err error) {
	if a.ended {
		return
	}
	a.ended = true
	a.out.err = err
	a.out.used.WallTimeSeconds = time.Since(a.started).Seconds()
	c.Send(c.Parent(), a.out)
	a.destroy()
	c.Stop(c.Self())
}

// destroy releases the attempt's sandbox instance to the goroutine that
// owns it, which destroys it.
func (a *Attempt) destroy() {
	if a.release != nil {
		close(a.release)
		a.release = nil
	}
}

func (a *Attempt) audit(event string, data map[string]any) {
	data["work_item_id"] = a.w.ID
	a.d.sys.Root.Send(a.d.audit, &messages.AuditEvent{Time: a.d.now(), Event: event, Scope: a.spec.scope, Data: data})
}
