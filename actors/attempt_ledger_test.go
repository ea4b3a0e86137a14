package actors

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/runtime/gates/predicate"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/plan"
	"github.com/silas-ai/silas/sandbox/executor"
)

// approvedPlan parses markdown and attaches a verified token.
func (h *execHarness) approvedPlan(t *testing.T, markdown string) *messages.WorkItem {
	t.Helper()
	w, err := plan.Parse(markdown)
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

// audited flushes the audit log and returns the data of its event entries.
func (h *execHarness) audited(t *testing.T, event string) []map[string]any {
	t.Helper()
	if _, err := h.d.sys.Root.RequestFuture(h.d.audit, &messages.Flush{}, 10*time.Second).Result(); err != nil {
		t.Fatalf("flush audit: %v", err)
	}
	entries, err := h.d.DB.Audit().Range(context.Background(), 0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, e := range entries {
		if e.Event == event {
			var data map[string]any
			if err := json.Unmarshal(e.Data, &data); err != nil {
				t.Fatal(err)
			}
			out = append(out, data)
		}
	}
	return out
}

// scriptedExec answers the executor with calls, one tool call a model
// call, then with final; it records the requests it got.
type scriptedExec struct {
	mu    sync.Mutex
	calls []llm.ToolCall
	final string
	reqs  []*llm.Request
}

func (s *scriptedExec) answer(req *llm.Request) *llm.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	done := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			done++
		}
	}
	if done < len(s.calls) {
		return &llm.Response{ToolCalls: []llm.ToolCall{s.calls[done]}}
	}
	return &llm.Response{Content: s.final}
}

func (s *scriptedExec) toolResults() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	last := s.reqs[len(s.reqs)-1]
	for _, m := range last.Messages {
		if m.Role == llm.RoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

func shell(id, cmd string) llm.ToolCall {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return llm.ToolCall{ID: id, Name: executor.ShellExec, Arguments: string(b)}
}

func TestAttemptArtifactsComeFromTheLedger(t *testing.T) {
	h := newExecHarness(t)
	ex := &scriptedExec{calls: []llm.ToolCall{shell("c1", "echo hi > hello.txt")},
		final: `{"summary":"wrote two files","artifact_refs":["hello.txt","ghost.txt"],"next_steps":[]}`}
	h.exec = ex.answer
	evs := h.run(t, h.approved(t))
	if got := statuses(evs); got != "running,done" {
		t.Fatalf("statuses %s (%+v), want running,done", got, evs)
	}
	done := evs[len(evs)-1].Detail
	if !strings.Contains(done, "Artifacts: hello.txt") || strings.Contains(done, "ghost.txt") {
		t.Fatalf("final detail %q, want hello.txt reported and the claimed ghost.txt not", done)
	}
	mm := h.audited(t, "artifact_ref_mismatch")
	if len(mm) != 1 || !strings.Contains(strings.Join(strs(mm[0]["claimed_not_produced"]), ","), "ghost.txt") {
		t.Fatalf("artifact_ref_mismatch entries %v, want one naming ghost.txt", mm)
	}
	fin := h.audited(t, "work_item_done")
	if len(fin) != 1 || strings.Join(strs(fin[0]["artifacts"]), ",") != "hello.txt" {
		t.Fatalf("work_item_done %v, want the artifacts [hello.txt]", fin)
	}
	// The model saw the result's return value and content, never its
	// metadata (the work dir, exit details).
	res := ex.toolResults()
	if len(res) != 1 || strings.Contains(res[0], "work_dir") || strings.Contains(res[0], "metadata") || !strings.Contains(res[0], `"success":true`) {
		t.Fatalf("tool results shown to the model %q, want a successful result without metadata", res)
	}
}

func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func TestWorkItemJournalsItsLedgerAndKeepsItOnResume(t *testing.T) {
	h := newExecHarness(t)
	w := h.approved(t)
	// A ledger from an attempt before a restart.
	earlier := messages.LedgerEntry{Attempt: 1, Tool: executor.ShellExec, Result: messages.ExecutionResult{
		ExecutionID: "e-1", StepIndex: 1, Success: true, Artifacts: map[string]string{"old.txt": "/gone/old.txt"},
		Metadata: map[string]any{"exit_code": 0}, Taint: messages.TaintExternal,
	}}
	w.Status, w.Attempts = messages.StatusRunning, 1
	w.BudgetUsed = messages.BudgetUsed{Attempts: 1}
	w.Ledger = []messages.LedgerEntry{earlier}
	ex := &scriptedExec{calls: []llm.ToolCall{shell("c1", "echo hi > hello.txt")}, final: `{"summary":"ok","artifact_refs":["hello.txt"],"next_steps":[]}`}
	seen := make(chan []messages.LedgerEntry, 1)
	h.exec = func(req *llm.Request) *llm.Response {
		if n := len(req.Messages); req.Messages[n-1].Role == llm.RoleTool {
			// The tool step is journaled before the model sees its result.
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				all, err := h.d.DB.WorkItems().List(context.Background(), "owner")
				if err == nil && len(all) == 1 && len(all[0].Ledger) == 2 {
					seen <- all[0].Ledger
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		return ex.answer(req)
	}
	evs := h.run(t, h.stored(t, w))
	if got := statuses(evs); got != "running,done" {
		t.Fatalf("statuses %s (%+v), want running,done", got, evs)
	}
	var ledger []messages.LedgerEntry
	select {
	case ledger = <-seen:
	default:
		t.Fatal("the tool step's ledger entry was not journaled with the earlier one")
	}
	if ledger[0].Result.ExecutionID != "e-1" {
		t.Fatalf("journaled ledger %+v lost the earlier attempt's entry", ledger)
	}
	got := ledger[1]
	if got.Attempt != 2 || got.Tool != executor.ShellExec || !got.Result.Success || got.Result.Artifacts["hello.txt"] == "" || got.Result.Metadata["exit_code"] == nil {
		t.Fatalf("journaled entry %+v, want attempt 2's shell_exec with hello.txt and its metadata", got)
	}
	// Artifacts are the passing attempt's own: not old.txt of attempt 1.
	if d := evs[len(evs)-1].Detail; !strings.Contains(d, "Artifacts: hello.txt") || strings.Contains(d, "old.txt") {
		t.Fatalf("final detail %q, want only the passing attempt's artifacts", d)
	}
}

// gatedHarness is an execHarness whose gate runner has the predicate
// provider, as serve configures it.
func gatedHarness(t *testing.T) *execHarness {
	t.Helper()
	pred, err := predicate.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := gates.NewRegistry(map[messages.GateProvider]gates.Provider{messages.ProviderPredicate: pred})
	if err != nil {
		t.Fatal(err)
	}
	return newExecHarness(t, func(d *Deps) { d.Gates = gates.NewRunner(reg) })
}

// noRmPattern matches a command without "rm " in it (RE2 has no negative
// lookahead): a regex gate continues on a match and blocks the rest.
const noRmPattern = `^(?:[^r]|r(?:r|mr)*(?:[^rm]|m[^ r]))*(?:r(?:r|mr)*m?)?$`

const gatedPlan = `---
id: task-gated
type: task
title: Tidy the work dir
gates:
  - name: no_rm
    on: on_tool_call
    type: regex
    extract: command
    config: { pattern: '` + noRmPattern + `' }
verify:
  - name: keep_exists
    run: "test -f keep.txt"
    expect: { exit_code: 0 }
---

Tidy up.
`

func TestToolCallGateBlocksTheCallAndTellsTheAgent(t *testing.T) {
	h := gatedHarness(t)
	ex := &scriptedExec{calls: []llm.ToolCall{shell("c1", "echo keep > keep.txt"), shell("c2", "rm -rf keep.txt")},
		final: `{"summary":"tidied","artifact_refs":[],"next_steps":[]}`}
	h.exec = ex.answer
	evs := h.run(t, h.approvedPlan(t, gatedPlan))
	// keep.txt survives, so the check passes: the rm never ran.
	if got := statuses(evs); got != "running,done" {
		t.Fatalf("statuses %s (%+v), want running,done with keep.txt kept", got, evs)
	}
	res := ex.toolResults()
	if len(res) != 2 || !strings.Contains(res[0], `"success":true`) || !strings.Contains(res[1], "blocked by the policy gate no_rm") {
		t.Fatalf("tool results %q, want the echo run and the rm blocked with the gate named", res)
	}
	blocks := h.audited(t, "gate_block")
	if len(blocks) != 1 || blocks[0]["gate"] != "no_rm" || blocks[0]["trigger"] != "on_tool_call" || blocks[0]["work_item_id"] != "task-gated" {
		t.Fatalf("gate_block entries %v, want one for no_rm on_tool_call", blocks)
	}
}

func TestAfterStepGateBlocksTheWorkItem(t *testing.T) {
	h := gatedHarness(t)
	md := strings.Replace(gatedPlan, `  - name: no_rm
    on: on_tool_call
    type: regex
    extract: command
    config: { pattern: '`+noRmPattern+`' }`, `  - name: no_secret_output
    on: after_step
    after_step: 1
    type: regex
    config: { pattern: '^[^S]*$' }`, 1)
	ex := &scriptedExec{calls: []llm.ToolCall{shell("c1", "echo keep > keep.txt; echo SECRET"), shell("c2", "touch second.txt")},
		final: `{"summary":"done","artifact_refs":[],"next_steps":[]}`}
	h.exec = ex.answer
	w := h.approvedPlan(t, md)
	evs := h.run(t, w)
	last := evs[len(evs)-1]
	if last.Status != string(messages.StatusBlocked) || !strings.Contains(last.Detail, "no_secret_output") {
		t.Fatalf("statuses %s (%+v), want blocked by no_secret_output", statuses(evs), evs)
	}
	if n := h.execCalls.Load(); n != 1 {
		t.Fatalf("%d executor calls, want 1: the block ends the work before the model sees the output", n)
	}
}
