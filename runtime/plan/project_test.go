package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

func TestProjectTasksInDependencyOrder(t *testing.T) {
	p, err := Parse(readPlan(t, "project.md"))
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := Tasks(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || tasks[0].ID != "task-pages" || tasks[1].ID != "task-index" {
		t.Fatalf("tasks %v, want task-pages before task-index, which depends on it", ids(tasks))
	}
	index := tasks[1]
	if index.Parent == nil || *index.Parent != "project-site" || index.Type != messages.WorkTask {
		t.Fatalf("task-index parent %v type %s, want the project and task", index.Parent, index.Type)
	}
	if strings.Join(index.Skills, ",") != "coding" || len(tasks[0].Skills) != 0 {
		t.Fatalf("skills %v and %v, want the project's inherited and the explicit empty list kept", index.Skills, tasks[0].Skills)
	}
	if !strings.Contains(index.Body, "```html") {
		t.Fatalf("task-index body %q lost its inner code block", index.Body)
	}
}

func ids(ws []*messages.WorkItem) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.ID)
	}
	return out
}

func TestProjectPlanHashCoversItsTasks(t *testing.T) {
	md := readPlan(t, "project.md")
	a, err := Parse(md)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(strings.Replace(md, "Write a.html and b.html.", "Write a.html, b.html and run rm -rf /.", 1))
	if err != nil {
		t.Fatal(err)
	}
	ha, _ := messages.WorkItemPlanHash(a)
	hb, _ := messages.WorkItemPlanHash(b)
	if ha == hb {
		t.Fatal("changing a task's briefing kept the project's plan hash: approving the project would not bind its tasks")
	}
}

func TestProjectPlanErrors(t *testing.T) {
	md := readPlan(t, "project.md")
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"task not listed", "tasks: [task-pages, task-index]", "tasks: [task-pages]", "not listed in tasks"},
		{"listed without a plan", "tasks: [task-pages, task-index]", "tasks: [task-pages, task-index, task-extra]", "task-extra is listed in tasks but has no plan block"},
		{"unknown dependency", "depends_on: [task-pages]", "depends_on: [task-nowhere]", "not a task of this project"},
		{"follow-up that may run first", "depends_on: [task-pages]", "follow_up_of: task-pages\ninput_artifacts_from: [a.html]", "follows up task-pages but does not depend on it"},
		{"cycle", "skills: []\n---", "skills: []\ndepends_on: [task-index]\n---", "form a cycle"},
		{"child is no task", "id: task-pages\ntype: task", "id: task-pages\ntype: goal", "a project's children are tasks"},
		{"invalid child", "title: Write the pages", "title: Write the pages\nbogus: 1", "bogus"},
		{"a block that is no plan", "````plan", "````text", "task-index is listed in tasks but has no plan block"},
		{"unclosed block", "Write a.html and b.html.\n```", "Write a.html and b.html.\n", "not closed"},
	} {
		_, err := Parse(strings.Replace(md, tc.old, tc.new, 1))
		if err == nil || !errors.Is(err, ErrInvalidPlan) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want an invalid plan naming %q", tc.name, err, tc.want)
		}
	}
}

func TestProjectFollowUpTask(t *testing.T) {
	md := strings.Replace(readPlan(t, "project.md"), "depends_on: [task-pages]",
		"depends_on: [task-pages]\nfollow_up_of: task-pages\ninput_artifacts_from: ['*']", 1)
	p, err := Parse(md)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := Tasks(p)
	if err != nil {
		t.Fatal(err)
	}
	if f := tasks[1].FollowUpOf; f == nil || *f != "task-pages" || strings.Join(tasks[1].InputArtifactsFrom, ",") != "*" {
		t.Fatalf("task-index follow_up_of %v imports %v, want task-pages and *", f, tasks[1].InputArtifactsFrom)
	}
}
