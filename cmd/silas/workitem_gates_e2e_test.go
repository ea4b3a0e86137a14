package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// noRmPattern matches a command with no "rm " in it (RE2 has no negative
// lookahead): a regex gate continues on a match and blocks everything else.
const noRmPattern = `^(?:[^r]|r(?:r|mr)*(?:[^rm]|m[^ r]))*(?:r(?:r|mr)*m?)?$`

// guardedPlan writes marker.txt, and its on_tool_call gate refuses any
// command that contains "rm ". Its check passes only while marker.txt
// exists.
const guardedPlan = `---
id: task-guarded
type: task
title: Clean up carefully
gates:
  - name: no_rm
    on: on_tool_call
    type: regex
    extract: command
    config: { pattern: '` + noRmPattern + `' }
verify:
  - name: marker_survives
    run: "cat marker.txt"
    expect: { contains: "keep me" }
---

# What to do
Write marker.txt, then clean up the rest of the work dir.
`

func TestWorkItemGateBlocksAToolCall(t *testing.T) {
	mock := newMock(t)
	scriptWork(mock, guardedPlan, executorScript(`{"summary":"cleaned up","artifact_refs":["marker.txt"],"next_steps":[]}`,
		mockllm.ToolCall{ID: "call-1", Name: "shell_exec", Arguments: `{"command":"mkdir x && echo 'keep me' > marker.txt"}`},
		mockllm.ToolCall{ID: "call-2", Name: "shell_exec", Arguments: `{"command":"rm -rf x marker.txt"}`}))
	dir := t.TempDir()
	d := startTest(t, loadConfig(t, overrides(t, mock, dir)))
	c := owner(t, d.Addr())

	c.say("please clean up")
	evs := c.approveAndFinish("task-guarded")
	// The check reads marker.txt: done means the rm never ran.
	if last := evs[len(evs)-1]; last.str("status") != "done" || last["attempt"] != float64(1) {
		t.Fatalf("final status %v, want done at attempt 1 with marker.txt kept", last)
	}
	var blocked string
	for _, r := range executorCalls(mock) {
		for _, m := range r.Messages {
			if m.Role == "tool" && m.ToolCallID == "call-2" {
				blocked = m.Content
			}
		}
	}
	if !strings.Contains(blocked, "blocked by the policy gate no_rm") || !strings.Contains(blocked, `"success":false`) {
		t.Fatalf("the executor was told %q about its rm call, want the block and the gate", blocked)
	}
	d.stop()

	blocks := auditNamed(auditEntries(t, filepath.Join(dir, "db")), "gate_block")
	if len(blocks) != 1 || blocks[0].Data["gate"] != "no_rm" || blocks[0].Data["trigger"] != "on_tool_call" || blocks[0].Data["work_item_id"] != "task-guarded" {
		t.Fatalf("gate_block entries %+v, want one: no_rm on_tool_call of task-guarded", blocks)
	}
}
