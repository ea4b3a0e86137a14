package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// resultPlan is a task whose executor reports summary when it is done.
func resultPlan(n string) string {
	return fmt.Sprintf(`---
id: task-result-%s
type: task
title: Write %s.txt
verify:
  - name: exists
    run: "test -f %s.txt"
    expect: { exit_code: 0 }
---

Write %s.txt.
`, n, n, n, n)
}

func TestWorkResultsEnterTheContextAndOldOnesAreMasked(t *testing.T) {
	mock := newMock(t)
	names := []string{"one", "two", "three"}
	// which is the plan a request is about: the user's message for the
	// proxy and planner, the briefing for the executor.
	which := func(text string) string {
		for _, n := range names {
			if strings.Contains(text, "please write "+n) || strings.HasPrefix(text, "# Write "+n+".txt") {
				return n
			}
		}
		return ""
	}
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		switch r.Schema {
		case "RouteDecision":
			if strings.Contains(currentMessage(r), "what did the work produce") {
				return mockllm.Reply{Content: routeDecision("direct", "Here is what the work produced.")}, true
			}
			return mockllm.Reply{Content: routeDecision("planner", "")}, true
		case "AgentResponse":
			return mockllm.Reply{Content: planReply(resultPlan(which(currentMessage(r))))}, true
		case "ExecutorAgentOutput":
			n := which(r.Messages[1].Content)
			return executorScript(`{"summary":"RESULT-`+strings.ToUpper(n)+` is ready","artifact_refs":["`+n+`.txt"],"next_steps":[]}`,
				mockllm.ToolCall{ID: "call-1", Name: "shell_exec", Arguments: `{"command":"echo ` + n + ` > ` + n + `.txt"}`})(r), true
		}
		return mockllm.Reply{}, false
	})
	dir := t.TempDir()
	ov := overrides(t, mock, dir)
	ov["silas.context.total_tokens"] = 24000
	ov["silas.context.observation_mask_after_turns"] = 2
	d := startTest(t, loadConfig(t, ov))
	c := owner(t, d.Addr())

	for _, n := range names {
		c.say("please write " + n)
		evs := c.approveAndFinish("task-result-" + n)
		if last := evs[len(evs)-1]; last.str("status") != "done" {
			t.Fatalf("work item %s ended %v, want done", n, last)
		}
	}
	id := c.say("what did the work produce?")
	c.answerTo(id)

	var prompt string
	for _, r := range mock.Requests() {
		if r.Schema == "RouteDecision" && strings.Contains(currentMessage(&r), "what did the work produce") {
			prompt = r.LastUser()
		}
	}
	if prompt == "" {
		t.Fatal("no proxy request for the question")
	}
	// The newest result is shown in full, as a tool result, with its
	// artifacts from the ledger.
	if !strings.Contains(prompt, "RESULT-THREE is ready") || !strings.Contains(prompt, "Artifacts: three.txt") {
		t.Fatalf("the proxy's context lacks the newest result:\n%s", prompt)
	}
	// The oldest one is masked to its placeholder.
	if strings.Contains(prompt, "RESULT-ONE") {
		t.Fatalf("the oldest result is still in full in the proxy's context:\n%s", prompt)
	}
	if !strings.Contains(prompt, `[Result of work_item("task-result-one") (SUCCEEDED)`) {
		t.Fatalf("the proxy's context has no placeholder for the oldest result:\n%s", prompt)
	}
}
