package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// followUpProjectPlan: task-b follows up task-a and imports its a.txt (spec
// 5.2.1 step 0.5); task-b's check needs b.txt, a copy of a.txt.
const followUpProjectPlan = `---
id: project-fu
type: project
title: Write a, then build b on it
tasks: [task-a, task-b]
---

# Overview
Task B builds on the file task A wrote.

` + "```plan" + `
---
id: task-a
type: task
title: Write a
verify:
  - name: a_exists
    run: "test -f a.txt"
    expect: { exit_code: 0 }
---

WRITE a.txt
` + "```" + `

` + "```plan" + `
---
id: task-b
type: task
title: Copy a to b
depends_on: [task-a]
follow_up_of: task-a
input_artifacts_from: [a.txt]
verify:
  - name: b_is_a_copy
    run: "grep -q x b.txt"
    expect: { exit_code: 0 }
---

COPY a.txt to b.txt
` + "```" + `
`

func TestFollowUpTaskImportsTheArtifactsOfItsPredecessor(t *testing.T) {
	mock := newMock(t)
	scriptWork(mock, followUpProjectPlan, func(r *mockllm.RecordedRequest) mockllm.Reply {
		if n := len(r.Messages); r.Messages[n-1].Role != "tool" && strings.Contains(r.Messages[1].Content, "COPY a.txt") {
			return mockllm.Reply{ToolCalls: []mockllm.ToolCall{{ID: "call-1", Name: "shell_exec", Arguments: `{"command":"cp a.txt b.txt"}`}}}
		}
		return writeNamedFile(r)
	})
	dir := t.TempDir()
	d := startTest(t, loadConfig(t, overrides(t, mock, dir)))
	c := owner(t, d.Addr())

	c.say("please write a, then b from it")
	evs := c.approveAndFinish("project-fu")
	// task-b's check passes only if a.txt was in its work dir to copy.
	if last := evs[len(evs)-1]; last.str("status") != "done" {
		t.Fatalf("project final status %v, want done", last)
	}
	var briefing string
	for _, r := range executorCalls(mock) {
		if strings.Contains(r.Messages[1].Content, "COPY a.txt") {
			briefing = r.Messages[1].Content
		}
	}
	if !strings.Contains(briefing, "These files produced by task-a are in your work dir: a.txt") {
		t.Fatalf("task-b's briefing %q does not name its input artifacts", briefing)
	}
	d.stop()
	in := auditNamed(auditEntries(t, filepath.Join(dir, "db")), "follow_up_artifacts")
	if len(in) != 1 || in[0].Data["work_item_id"] != "task-b" || strings.Join(strList(in[0].Data["artifacts"]), ",") != "a.txt" {
		t.Fatalf("follow_up_artifacts entries %+v, want task-b importing a.txt", in)
	}
}
