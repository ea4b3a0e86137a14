package actors

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/sandbox/executor"
)

func TestCheckToolArgs(t *testing.T) {
	tools := executorTools(newExecHarness(t).d.Executors)
	for _, tc := range []struct {
		name string
		tool string
		args string
		want string // "" for valid
	}{
		{"valid", executor.ShellExec, `{"command":"ls"}`, ""},
		{"unknown tool", "rm_everything", `{}`, `unknown tool "rm_everything"; the tools are shell_exec, python_exec`},
		{"not an object", executor.PythonExec, `"print(1)"`, "invalid arguments for python_exec: they are not a JSON object"},
		{"missing", executor.ShellExec, `{}`, `invalid arguments for shell_exec: missing required argument "command" (string); its arguments are command`},
		{"ill-typed", executor.ShellExec, `{"command":42}`, `invalid arguments for shell_exec: argument "command" must be a string, not number; its arguments are command`},
		{"null", executor.PythonExec, `{"code":null}`, `invalid arguments for python_exec: argument "code" must be a string, not null; its arguments are code`},
		{"unknown and missing", executor.ShellExec, `{"cmd":"ls","timeout":5}`,
			`invalid arguments for shell_exec: unknown argument "cmd"; unknown argument "timeout"; missing required argument "command" (string); its arguments are command`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
				args = nil
			}
			err := checkToolArgs(tools, tc.tool, args)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid call rejected: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCheckToolArgsTypes(t *testing.T) {
	tools := []llm.Tool{{Name: "t", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"},"b":{"type":"boolean"},"l":{"type":"array"}}}`)}}
	if err := checkToolArgs(tools, "t", map[string]any{"n": 3.0, "x": 2.5, "b": true, "l": []any{}, "extra": "allowed"}); err != nil {
		t.Fatalf("valid arguments rejected: %v", err)
	}
	err := checkToolArgs(tools, "t", map[string]any{"n": 3.5, "b": "yes"})
	if err == nil || !strings.Contains(err.Error(), `argument "b" must be a boolean, not string; argument "n" must be an integer, not number`) {
		t.Fatalf("error %v, want b and n named in order", err)
	}
}

// An invalid tool call never reaches the sandbox: the executor is told
// exactly what is wrong, the ledger records the call as failed, and the
// attempt carries on with the calls that are valid.
func TestInvalidToolCallsDoNotRun(t *testing.T) {
	h := newExecHarness(t)
	md := `---
id: task-args
type: task
title: Write hello
verify:
  - name: only_hello
    run: "test -f hello.txt && test ! -f bad1.txt && test ! -f bad2.txt"
    expect: { exit_code: 0 }
---

Create hello.txt.
`
	calls := []llm.ToolCall{
		{ID: "c1", Name: "delete_everything", Arguments: `{"path":"/"}`},
		{ID: "c2", Name: executor.ShellExec, Arguments: `{"cmd":"touch bad1.txt"}`},
		{ID: "c3", Name: executor.ShellExec, Arguments: `{"command":"touch bad2.txt","timeout":5}`},
		{ID: "c4", Name: executor.PythonExec, Arguments: `{"code":7}`},
		shell("c5", "echo hi > hello.txt"),
	}
	ex := &scriptedExec{calls: calls, final: `{"summary":"wrote hello.txt","artifact_refs":["hello.txt"],"next_steps":[]}`}
	ledger := make(chan []messages.LedgerEntry, 1)
	h.exec = func(req *llm.Request) *llm.Response {
		if n := len(req.Messages); req.Messages[n-1].Role == llm.RoleTool && req.Messages[n-1].ToolCallID == "c5" {
			// The work item journals every tool step's ledger entries; wait
			// for the last one while the attempt waits on this call.
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				all, err := h.d.DB.WorkItems().List(context.Background(), "owner")
				if err == nil && len(all) == 1 && len(all[0].Ledger) == len(calls) {
					ledger <- all[0].Ledger
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		return ex.answer(req)
	}
	evs := h.run(t, h.approvedPlan(t, md))
	if got := statuses(evs); got != "running,done" {
		t.Fatalf("statuses %s (%+v), want running,done: the invalid calls must not have run", got, evs)
	}
	res := ex.toolResults()
	want := []string{
		`unknown tool \"delete_everything\"; the tools are shell_exec, python_exec; the call did not run`,
		`invalid arguments for shell_exec: unknown argument \"cmd\"; missing required argument \"command\" (string); its arguments are command; the call did not run`,
		`invalid arguments for shell_exec: unknown argument \"timeout\"; its arguments are command; the call did not run`,
		`invalid arguments for python_exec: argument \"code\" must be a string, not number; its arguments are code; the call did not run`,
	}
	if len(res) != 5 {
		t.Fatalf("tool results %q, want 5", res)
	}
	for i, w := range want {
		if !strings.Contains(res[i], `"success":false`) || !strings.Contains(res[i], w) {
			t.Errorf("tool result %d is %s, want a failure saying %q", i+1, res[i], w)
		}
	}
	var got []messages.LedgerEntry
	select {
	case got = <-ledger:
	default:
		t.Fatal("the ledger of the five calls was not journaled")
	}
	if len(got) != 5 {
		t.Fatalf("journaled ledger has %d entries, want one per call", len(got))
	}
	for i, e := range got[:4] {
		if e.Result.Success || e.Result.Error == nil || !strings.Contains(*e.Result.Error, "the call did not run") || e.Tool != calls[i].Name {
			t.Errorf("ledger entry %d %+v, want %s recorded as failed", i+1, e, calls[i].Name)
		}
	}
	if !got[4].Result.Success {
		t.Errorf("ledger entry 5 %+v, want the valid call's success", got[4])
	}
	if rej := h.audited(t, "tool_call_rejected"); len(rej) != 4 || rej[0]["tool"] != "delete_everything" || rej[0]["work_item_id"] != "task-args" {
		t.Fatalf("tool_call_rejected entries %v, want one per invalid call", rej)
	}
}
