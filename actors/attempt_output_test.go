package actors

import (
	"strings"
	"sync"
	"testing"

	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/sandbox/executor"
)

// brokenExecutor answers the executor's calls: a tool call first, then a
// final answer that is not ExecutorAgentOutput; the repair request gets
// repaired as its answer. It records the repair messages it was sent.
type brokenExecutor struct {
	repaired string
	mu       sync.Mutex
	repairs  []string
}

func (b *brokenExecutor) answer(req *llm.Request) *llm.Response {
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == llm.RoleUser && strings.HasPrefix(last.Content, llm.SchemaErrorMarker):
		b.mu.Lock()
		b.repairs = append(b.repairs, last.Content)
		b.mu.Unlock()
		return &llm.Response{Content: b.repaired}
	case last.Role == llm.RoleTool:
		return &llm.Response{Content: "All done, wrote hello.txt!"}
	}
	return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: executor.ShellExec, Arguments: `{"command":"echo hi > hello.txt"}`}}}
}

func (b *brokenExecutor) sent() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.repairs...)
}

// TestExecutorOutputRepairedOnce: a final answer that breaks the schema is
// sent back once with the error, and a valid repair finishes the attempt.
func TestExecutorOutputRepairedOnce(t *testing.T) {
	h := newExecHarness(t)
	b := &brokenExecutor{repaired: `{"summary":"wrote hello.txt","artifact_refs":[],"next_steps":[]}`}
	h.exec = b.answer
	evs := h.run(t, h.approved(t))
	if got := statuses(evs); got != "running,done" {
		t.Fatalf("statuses %s (%+v), want the repaired answer to finish the first attempt", got, evs)
	}
	if r := b.sent(); len(r) != 1 || !strings.Contains(r[0], "not an ExecutorAgentOutput JSON object") {
		t.Fatalf("repair messages %q, want one naming the schema error", r)
	}
}

// TestExecutorOutputBrokenTwiceFailsTheAttempt: a repair that breaks the
// schema again fails the attempt with a message naming the schema error,
// instead of passing the text off as the attempt's summary.
func TestExecutorOutputBrokenTwiceFailsTheAttempt(t *testing.T) {
	h := newExecHarness(t)
	b := &brokenExecutor{repaired: `{"summary":""}`}
	h.exec = b.answer
	evs := h.run(t, h.approved(t))
	if len(evs) < 2 || evs[0].Status != "running" || evs[len(evs)-1].Status == "done" {
		t.Fatalf("statuses %s (%+v), want the attempts to fail", statuses(evs), evs)
	}
	if d := evs[1].Detail; !strings.Contains(d, "broke the ExecutorAgentOutput schema") || !strings.Contains(d, "ExecutorAgentOutput:") {
		t.Fatalf("detail %q, want the schema error named", d)
	}
	if r := b.sent(); len(r) == 0 || len(r) != int(h.execCalls.Load())/3 {
		t.Fatalf("%d repair messages over %d executor calls, want one per attempt (tool call, answer, repair)", len(r), h.execCalls.Load())
	}
}
