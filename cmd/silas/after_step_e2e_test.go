package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// noLeakPattern matches a text that does not contain "LEAK" (RE2 has no
// negative lookahead, so it spells out the automaton of the word, whose
// letters are all different): a regex gate continues on a match and blocks
// every output that contains the marker.
const noLeakPattern = `^(?:[^L]|L(?:L|EL|EAL)*(?:[^LE]|E[^LA]|EA[^LK]))*(?:L(?:L|EL|EAL)*(?:EA|E)?)?$`

// leakGuardedPlan has after_step gates on the first two steps (tool calls)
// of an attempt that stop the work item when the step's output contains
// LEAK.
const leakGuardedPlan = `---
id: task-leak-guarded
type: task
title: Report the numbers
gates:
  - name: no_leak_first
    on: after_step
    after_step: 1
    type: regex
    extract: output
    config: { pattern: '` + noLeakPattern + `' }
  - name: no_leak_second
    on: after_step
    after_step: 2
    type: regex
    extract: output
    config: { pattern: '` + noLeakPattern + `' }
verify:
  - name: always
    run: "true"
    expect: { exit_code: 0 }
---

# What to do
Print the numbers, never anything marked LEAK.
`

func TestAfterStepGateBlocksTheWorkItem(t *testing.T) {
	mock := newMock(t)
	scriptWork(mock, leakGuardedPlan, executorScript(`{"summary":"printed","artifact_refs":[],"next_steps":[]}`,
		mockllm.ToolCall{ID: "call-1", Name: "shell_exec", Arguments: `{"command":"echo 1 2 3"}`},
		mockllm.ToolCall{ID: "call-2", Name: "shell_exec", Arguments: `{"command":"echo LEAK-42"}`},
		mockllm.ToolCall{ID: "call-3", Name: "shell_exec", Arguments: `{"command":"echo never"}`}))
	dir := t.TempDir()
	d := startTest(t, loadConfig(t, overrides(t, mock, dir)))
	c := owner(t, d.Addr())

	c.say("please print the numbers")
	evs := c.approveAndFinish("task-leak-guarded")
	last := evs[len(evs)-1]
	if last.str("status") != "blocked" || last["attempt"] != float64(1) || !strings.Contains(last.str("detail"), "no_leak_second") {
		t.Fatalf("final status %v, want blocked by no_leak_second at attempt 1", last)
	}
	// The first call's output passed its gate; the second's stopped the
	// work item: the executor never saw it, nor was asked again.
	calls := executorCalls(mock)
	if len(calls) != 2 {
		t.Fatalf("%d executor calls, want 2: one per tool call up to the blocked one", len(calls))
	}
	for _, r := range calls {
		if strings.Contains(requestText(&r), "LEAK-42") {
			t.Fatal("the blocked output reached the executor model")
		}
	}
	d.stop()

	entries := auditEntries(t, filepath.Join(dir, "db"))
	blocks := auditNamed(entries, "gate_block")
	if len(blocks) != 1 || blocks[0].Data["gate"] != "no_leak_second" || blocks[0].Data["trigger"] != "after_step" ||
		blocks[0].Data["work_item_id"] != "task-leak-guarded" {
		t.Fatalf("gate_block entries %+v, want one: no_leak_second after_step of task-leak-guarded", blocks)
	}
	if b := auditNamed(entries, "work_item_blocked"); len(b) != 1 || !strings.Contains(b[0].Data["reason"].(string), "no_leak_second") {
		t.Fatalf("work_item_blocked entries %+v, want one naming no_leak_second", b)
	}
	if len(auditNamed(entries, "work_item_done")) != 0 || len(auditNamed(entries, "verification_passed")) != 0 {
		t.Fatal("a blocked work item was verified or reported done")
	}
}
