package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/executor"
)

// ledgerTextMax bounds each text kept in a ledger entry: the ledger is
// journaled with the work item after every tool step, and the full output
// already went to the executor model.
const ledgerTextMax = 4 << 10

// toolStep runs one model turn's tool calls in an attempt's sandbox, off
// the attempt's mailbox: the check of each call against its tool's
// declared parameters and the work item's on_tool_call gates before it,
// the call itself, its after_step gates after it (spec 5.2.1 steps c1, c2
// and d). It holds only values and thread-safe handles, so that
// its goroutine shares nothing with the actor.
type toolStep struct {
	execs    *executor.Registry
	tools    []llm.Tool // what the executor was offered: calls are checked against it
	inst     sandbox.Instance
	skills   *attemptSkills // nil or empty: the work item has none
	conns    *connScripts   // runs connection skills' scripts
	db       *persistence.DB
	runner   *gates.Runner // nil: no gate runs
	set      *gates.ActiveSet
	maxEvals int
	attempt  int
	scope    string
	workID   string
	audit    func(messages.AuditEvent)
	now      func() time.Time
}

// attemptTools carries the results of one tool step. Sender: an Attempt's
// IO goroutine. Receiver: the Attempt.
type attemptTools struct {
	results []llm.Message          // what the executor model sees, one per call
	ledger  []messages.LedgerEntry // what actually ran, one per call
	// blocked names the after_step policy gate that stopped the work item
	// and why; empty when none did.
	blocked string
	// skillChanged says which skill may no longer run and why: its files
	// changed since they were approved. The work item stops.
	skillChanged string
}

// run performs calls, whose envelopes are envs, in order. After a blocking
// after_step gate the remaining calls do not run: the work item stops.
func (s *toolStep) run(ctx context.Context, calls []llm.ToolCall, envs []*messages.ExecutionEnvelope) *attemptTools {
	out := &attemptTools{}
	// Per-scope executor limits (web_search calls per minute) count
	// against the work item's scope.
	ctx = executor.WithScope(ctx, s.scope)
	for i, tc := range calls {
		env := envs[i]
		if out.blocked != "" || out.skillChanged != "" {
			out.add(tc, s.entry(tc.Name, failedResult(env, "not run: the work item stopped"), ""))
			continue
		}
		if err := checkToolArgs(s.tools, tc.Name, env.Args); err != nil {
			// Rejected before the sandbox: a deterministic error the executor
			// can correct (spec 5.2.1 c2).
			s.emit([]messages.AuditEvent{{Time: s.now(), Event: "tool_call_rejected", Scope: s.scope,
				Data: map[string]any{"tool": tc.Name, "error": err.Error()}}})
			out.add(tc, s.entry(tc.Name, failedResult(env, err.Error()+"; the call did not run"), ""))
			continue
		}
		if gate, why := s.beforeCall(ctx, tc.Name, env); gate != "" {
			msg := fmt.Sprintf("blocked by the policy gate %s (%s); the call did not run, so do the work another way or explain why it cannot be done", gate, why)
			out.add(tc, s.entry(tc.Name, failedResult(env, msg), gate))
			continue
		}
		run := env
		if tc.Name == SkillScript {
			call, why, err := s.skills.skillCall(ctx, s.db, env)
			if why != "" {
				out.skillChanged = why
				out.add(tc, s.entry(tc.Name, failedResult(env, "not run: "+why), ""))
				continue
			}
			if err != nil {
				s.emit([]messages.AuditEvent{{Time: s.now(), Event: "tool_call_rejected", Scope: s.scope,
					Data: map[string]any{"tool": tc.Name, "error": err.Error()}}})
				out.add(tc, s.entry(tc.Name, failedResult(env, err.Error()+"; the call did not run"), ""))
				continue
			}
			run = call.env
			if call.skill.skill.Connection != nil {
				res := s.conns.run(ctx, call.skill, call.inv, env)
				out.add(tc, s.entry(tc.Name, res, ""))
				if gate, why := s.afterStep(ctx, env.StepIndex, res); gate != "" {
					out.blocked = gate + ": " + why
				}
				continue
			}
		}
		res, err := s.execs.Execute(ctx, run, s.inst)
		if err != nil && res.Error == nil {
			msg := err.Error()
			res.Error, res.Success = &msg, false
		}
		out.add(tc, s.entry(tc.Name, res, ""))
		if gate, why := s.afterStep(ctx, env.StepIndex, res); gate != "" {
			out.blocked = gate + ": " + why
		}
	}
	return out
}

// add records one call: the model's view of its result and its ledger entry.
func (o *attemptTools) add(tc llm.ToolCall, e messages.LedgerEntry) {
	o.results = append(o.results, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: modelView(&e.Result)})
	o.ledger = append(o.ledger, e)
}

// modelView is what the executor model may see of a result: success, its
// taint (so that the model knows external text for data, not
// instructions), return_value, content and the error, scrubbed of
// injection markers (scrubbedView). Metadata never reaches a model.
func modelView(res *messages.ExecutionResult) string {
	mv, errText := scrubbedView(res)
	view := map[string]any{"success": res.Success, "taint": res.Taint, "return_value": mv.ReturnValue, "content": mv.Content}
	if errText != nil {
		view["error"] = *errText
	}
	b, _ := json.Marshal(view)
	return string(b)
}

// entry is the ledger entry of a result, its texts clipped for storage.
func (s *toolStep) entry(tool string, res *messages.ExecutionResult, blocked string) messages.LedgerEntry {
	r := *res
	r.ReturnValue = clipText(r.ReturnValue)
	r.Content = make([]map[string]any, len(res.Content))
	for i, block := range res.Content {
		b := maps.Clone(block)
		if t, ok := b["text"].(string); ok {
			b["text"] = clipText(t)
		}
		r.Content[i] = b
	}
	return messages.LedgerEntry{Attempt: s.attempt, Tool: tool, Blocked: blocked, Result: r}
}

func clipText(s string) string {
	if len(s) <= ledgerTextMax {
		return s
	}
	return s[:ledgerTextMax] + "…"
}

// failedResult is the result of a call that did not run.
func failedResult(env *messages.ExecutionEnvelope, msg string) *messages.ExecutionResult {
	return &messages.ExecutionResult{
		ExecutionID: env.ExecutionID, StepIndex: env.StepIndex, Content: []map[string]any{},
		Metadata: map[string]any{}, Artifacts: map[string]string{}, Taint: messages.TaintExternal, Error: &msg,
	}
}

// beforeCall runs the on_tool_call gates (spec 5.2.1 c2). A policy block,
// or a gate asking for an approval no one can give in the middle of an
// attempt, keeps the call from running: it returns the gate and its
// reason. Allowed rewrites of tool_args are applied to env.
func (s *toolStep) beforeCall(ctx context.Context, tool string, env *messages.ExecutionEnvelope) (gate, why string) {
	if s.runner == nil || s.set == nil || s.set.Len() == 0 {
		return "", ""
	}
	trigger := messages.TriggerOnToolCall
	d := s.runner.Policy(ctx, gates.Check{Gates: s.set, Trigger: trigger,
		Context: gates.ToolCallContext(tool, env.Args, ""), Budget: gates.NewEvalBudget(s.maxEvals)})
	s.emit(d.AuditEvents(s.scope, trigger, "", s.now()))
	if gate, why, stop := stopsAttempt(d); stop {
		return gate, why
	}
	if args, ok := d.Context[gates.KeyToolArgs].(map[string]any); ok {
		env.Args = args
	}
	q := s.runner.Quality(ctx, gates.Check{Gates: s.set, Trigger: trigger, Context: d.Context, Budget: d.Budget})
	s.emit(q.AuditEvents(s.scope, trigger, s.now()))
	return "", ""
}

// afterStep runs the after_step gates on a call's output (spec 5.2.1 d).
// A policy block (or a required approval) stops the work item: it returns
// the gate and its reason.
func (s *toolStep) afterStep(ctx context.Context, step int, res *messages.ExecutionResult) (gate, why string) {
	if s.runner == nil || s.set == nil || s.set.Len() == 0 {
		return "", ""
	}
	trigger := messages.TriggerAfterStep
	d := s.runner.Policy(ctx, gates.Check{Gates: s.set, Trigger: trigger, Step: step,
		Context: gates.StepContext(step, res.ModelView().ReturnValue, ""), Budget: gates.NewEvalBudget(s.maxEvals)})
	s.emit(d.AuditEvents(s.scope, trigger, "", s.now()))
	if gate, why, stop := stopsAttempt(d); stop {
		return gate, why
	}
	q := s.runner.Quality(ctx, gates.Check{Gates: s.set, Trigger: trigger, Step: step, Context: d.Context, Budget: d.Budget})
	s.emit(q.AuditEvents(s.scope, trigger, s.now()))
	return "", ""
}

// stopsAttempt names the gate of a policy decision that stops a tool call
// or step, and why: a block, or a required approval, which cannot be asked
// for during an attempt. stop is false when the decision lets the work go on.
func stopsAttempt(d gates.PolicyDecision) (gate, why string, stop bool) {
	switch d.Action {
	case messages.GateBlock:
		ev, _ := d.BlockedBy()
		return ev.Gate, ev.Result.Reason, true
	case messages.GateRequireApproval:
		ev := d.Evaluations[d.Approvals[0]]
		return ev.Gate, "it needs an approval, which cannot be asked for during an attempt", true
	}
	return "", "", false
}

func (s *toolStep) emit(evs []messages.AuditEvent) {
	for _, ev := range evs {
		ev.Data["work_item_id"] = s.workID
		ev.Data["attempt"] = s.attempt
		s.audit(ev)
	}
}

// ledgerArtifacts merges the artifacts of the successful calls of ledger in
// call order (spec 5.2.1 c3): the files the sandbox actually wrote, by path
// relative to the work dir. They are the attempt's artifacts, whatever the
// executor claims.
func ledgerArtifacts(ledger []messages.LedgerEntry) map[string]string {
	out := map[string]string{}
	for _, e := range ledger {
		if e.Result.Success {
			maps.Copy(out, e.Result.Artifacts)
		}
	}
	return out
}

// artifactMismatch compares the executor's artifact_refs with the artifacts
// of the ledger: the files it claimed but never wrote, and those it wrote
// but did not name.
func artifactMismatch(claimed []string, actual map[string]string) (unproduced, unclaimed []string) {
	named := map[string]bool{}
	for _, c := range claimed {
		ref := strings.TrimPrefix(strings.TrimSpace(c), "./")
		named[ref] = true
		if _, ok := actual[ref]; !ok {
			unproduced = append(unproduced, ref)
		}
	}
	for rel := range actual {
		if !named[rel] {
			unclaimed = append(unclaimed, rel)
		}
	}
	slices.Sort(unproduced)
	slices.Sort(unclaimed)
	return unproduced, unclaimed
}
