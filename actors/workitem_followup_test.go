package actors

import (
	"errors"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
)

func TestFollowUpInputs(t *testing.T) {
	from := "task-a"
	prior := map[string][]string{"task-a": {"out/b.txt", "a.txt"}}
	for _, tc := range []struct {
		name    string
		follows *string
		imports []string
		prior   map[string][]string
		want    string // the inputs joined, or the error's text
	}{
		{"no follow-up", nil, nil, prior, ""},
		{"follow-up importing nothing", &from, nil, nil, ""},
		{"everything", &from, []string{"*"}, prior, "a.txt,out/b.txt"},
		{"named", &from, []string{"./out/b.txt"}, prior, "out/b.txt"},
		{"missing", &from, []string{"a.txt", "c.txt"}, prior, "task-a did not produce c.txt (it produced out/b.txt, a.txt)"},
		{"outside the work dir", &from, []string{"../a.txt"}, prior, "task-a did not produce ../a.txt"},
		{"not done in the project", &from, []string{"*"}, map[string][]string{}, "not a task of this project that finished done"},
		{"outside a project", &from, []string{"a.txt"}, nil, "outside a project keeps no files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &messages.WorkItem{ID: "task-b", FollowUpOf: tc.follows, InputArtifactsFrom: tc.imports}
			got, err := followUpInputs(w, tc.prior)
			if err != nil {
				if !errors.Is(err, errFollowUp) || tc.want == "" || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				return
			}
			if s := strings.Join(got, ","); s != tc.want {
				t.Fatalf("inputs %q, want %q", s, tc.want)
			}
		})
	}
}

// followUpProject: task-b follows up task-a and imports imports from it;
// it copies a.txt to b.txt, which its check needs.
func followUpProject(imports string) string {
	return "---\nid: project-ab\ntype: project\ntitle: A then B\ntasks: [task-a, task-b]\n---\n\nTwo tasks.\n\n" +
		"```plan\n---\nid: task-a\ntype: task\ntitle: Write a\nbudget: { max_attempts: 1 }\n" +
		"verify:\n  - name: a\n    run: \"test -f a.txt\"\n    expect: { exit_code: 0 }\n---\n\nWRITE a.txt\n```\n\n" +
		"```plan\n---\nid: task-b\ntype: task\ntitle: Copy a to b\ndepends_on: [task-a]\nfollow_up_of: task-a\ninput_artifacts_from: [" + imports + "]\n" +
		"budget: { max_attempts: 1 }\n" +
		"verify:\n  - name: b\n    run: \"grep -q x b.txt\"\n    expect: { exit_code: 0 }\n---\n\nCOPY a.txt\n```\n"
}

// writesOrCopies writes the file after "WRITE ", or copies a.txt to b.txt
// when its briefing says "COPY".
func writesOrCopies(req *llm.Request) *llm.Response {
	if n := len(req.Messages); req.Messages[n-1].Role != llm.RoleTool && strings.Contains(req.Messages[1].Content, "COPY a.txt") {
		return &llm.Response{ToolCalls: []llm.ToolCall{shell("c1", "cp a.txt b.txt")}}
	}
	return writesFromBriefing(req)
}

func TestFollowUpTaskGetsItsInputArtifacts(t *testing.T) {
	h := newExecHarness(t)
	h.exec = writesOrCopies
	evs := h.runProject(t, h.approvedPlan(t, followUpProject("a.txt")))
	want := "project-ab:running,task-a:running,task-a:done,task-b:running,task-b:done,project-ab:done"
	if got := of(evs); got != want {
		t.Fatalf("statuses %s (%+v), want %s: task-b copies the a.txt it imported", got, evs, want)
	}
	var briefed bool
	for _, b := range h.calls() {
		if strings.Contains(b, "COPY a.txt") {
			briefed = strings.Contains(b, "# Input artifacts\nThese files produced by task-a are in your work dir: a.txt")
		}
	}
	if !briefed {
		t.Fatalf("task-b's briefing does not name its input artifacts: %q", h.calls())
	}
	if in := h.audited(t, "follow_up_artifacts"); len(in) != 1 || in[0]["work_item_id"] != "task-b" || strings.Join(strs(in[0]["artifacts"]), ",") != "a.txt" {
		t.Fatalf("follow_up_artifacts entries %v, want task-b importing a.txt", in)
	}
}

func TestFollowUpWithMissingArtifactIsBlocked(t *testing.T) {
	h := newExecHarness(t)
	h.exec = writesOrCopies
	evs := h.runProject(t, h.approvedPlan(t, followUpProject("a.txt, report.pdf")))
	got := of(evs)
	if !strings.HasSuffix(got, "task-a:done,task-b:blocked,project-ab:failed") {
		t.Fatalf("statuses %s, want task-b blocked before it runs and the project failed", got)
	}
	if d := evs[len(evs)-2].Detail; !strings.Contains(d, "follow-up linkage: task-a did not produce report.pdf (it produced a.txt)") {
		t.Fatalf("task-b detail %q, want the missing artifact named", d)
	}
	for _, b := range h.calls() {
		if strings.Contains(b, "COPY a.txt") {
			t.Fatal("the executor ran task-b without its input artifacts")
		}
	}
}

func TestFollowUpOutsideAProjectIsBlocked(t *testing.T) {
	h := newExecHarness(t)
	md := "---\nid: task-deeper\ntype: task\ntitle: Go deeper\nfollow_up_of: task-hello\ninput_artifacts_from: ['*']\n" +
		"verify:\n  - name: exists\n    run: \"test -f hello.txt\"\n    expect: { exit_code: 0 }\n---\n\nBuild on hello.txt.\n"
	evs := h.run(t, h.approvedPlan(t, md))
	if got := statuses(evs); got != "blocked" || !strings.Contains(evs[0].Detail, "follow-up linkage") {
		t.Fatalf("statuses %s (%+v), want blocked with the linkage error", got, evs)
	}
	if n := h.execCalls.Load(); n != 0 {
		t.Fatalf("a blocked follow-up made %d executor calls", n)
	}
	if b := h.audited(t, "follow_up_blocked"); len(b) != 1 || b[0]["follow_up_of"] != "task-hello" {
		t.Fatalf("follow_up_blocked entries %v, want one for task-hello", b)
	}
}
