package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

func TestParseOutputs(t *testing.T) {
	w, err := Parse(minimal + "outputs: [site/index.html, assets/, notes.md]\n---\nBuild it.\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"site/index.html", "assets/", "notes.md"}; !slices.Equal(w.Outputs, want) {
		t.Fatalf("outputs %v, want %v", w.Outputs, want)
	}
	none, err := Parse(minimal + "---\nBuild it.\n")
	if err != nil {
		t.Fatal(err)
	}
	if none.Outputs != nil {
		t.Fatalf("a plan without outputs has %v", none.Outputs)
	}
}

func TestOutputsErrors(t *testing.T) {
	for _, tc := range []struct{ name, outputs, want string }{
		{"absolute", "[/etc/passwd]", `plan line 5: outputs[0]: "/etc/passwd": name a path relative to the work dir`},
		{"home", "[~/x]", "name a path relative to the work dir"},
		{"escapes", "[a.txt, ../x]", `outputs[1]: "../x": name a path inside the work dir`},
		{"escapes after clean", "[a/../../x]", "name a path inside the work dir"},
		{"the work dir itself", "[.]", "name a path inside the work dir"},
		{"the work dir as ./", "[./]", "name a path inside the work dir"},
		{"not clean", "[./a.txt]", `"./a.txt": write it as "a.txt"`},
		{"double slash", "[a//b]", `write it as "a/b"`},
		{"inner dotdot", "[a/../b]", `write it as "b"`},
		{"empty", `[""]`, "outputs[0]: is empty"},
		{"wildcard", "['*.txt']", "without wildcards"},
		{"backslash", `['a\b']`, "without wildcards, backslashes"},
		{"control", `["a\tb"]`, "control characters"},
		{"listed twice", "[out/, out]", `outputs[1]: "out" is listed twice`},
		{"too long", "[" + strings.Repeat("a", maxOutputPathLen+1) + "]", "characters long"},
		{"too many", "[" + strings.TrimSuffix(strings.Repeat("x,", maxOutputs+1), ",") + "]", "at most 64"},
		{"not a list", "out.txt", "expected a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(minimal + "outputs: " + tc.outputs + "\n---\nBuild it.\n")
			if err == nil || !errors.Is(err, ErrInvalidPlan) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want an invalid plan containing %q", err, tc.want)
			}
		})
	}
}

func TestOutputsOnlyOnTasks(t *testing.T) {
	md := strings.Replace(readPlan(t, "project.md"), "tasks: [task-pages, task-index]", "tasks: [task-pages, task-index]\noutputs: [site/]", 1)
	if _, err := Parse(md); err == nil || !strings.Contains(err.Error(), "only a task declares outputs, this is a project") {
		t.Fatalf("a project with outputs: %v, want refused", err)
	}
}

// The outputs are approved with the plan: changing them changes the plan
// hash, of the task and of the project that holds it.
func TestOutputsArePartOfThePlanHash(t *testing.T) {
	hash := func(md string) string {
		t.Helper()
		w, err := Parse(md)
		if err != nil {
			t.Fatal(err)
		}
		h, err := messages.WorkItemPlanHash(w)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	none, a, b := hash(minimal+"---\nx\n"), hash(minimal+"outputs: [a.txt]\n---\nx\n"), hash(minimal+"outputs: [b.txt]\n---\nx\n")
	if none == a || a == b {
		t.Fatal("the outputs do not change the task's plan hash")
	}
	md := readPlan(t, "project.md")
	withOut := strings.Replace(md, "title: Write the pages\n", "title: Write the pages\noutputs: [a.html, b.html]\n", 1)
	if hash(md) == hash(withOut) {
		t.Fatal("a task's outputs do not change its project's plan hash")
	}
	p, err := Parse(withOut)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := Tasks(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := tasks[0].Outputs; tasks[0].ID != "task-pages" || !slices.Equal(got, []string{"a.html", "b.html"}) {
		t.Fatalf("task %s outputs %v, want task-pages with a.html and b.html", tasks[0].ID, got)
	}
}

func TestOutputsOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b    []string
		overlap bool
	}{
		{[]string{"a.txt"}, []string{"a.txt"}, true},
		{[]string{"out/"}, []string{"out/a.txt"}, true},
		{[]string{"out/a.txt"}, []string{"out"}, true},
		{[]string{"x", "out/deep/"}, []string{"out/deep/er/f"}, true},
		{[]string{"out"}, []string{"outer.txt"}, false},
		{[]string{"a.txt"}, []string{"a.txt.bak"}, false},
		{[]string{"a/b"}, []string{"a/c"}, false},
		{nil, []string{"a.txt"}, false},
		{nil, nil, false},
	} {
		if _, _, got := OutputsOverlap(tc.a, tc.b); got != tc.overlap {
			t.Errorf("OutputsOverlap(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.overlap)
		}
		if _, _, got := OutputsOverlap(tc.b, tc.a); got != tc.overlap {
			t.Errorf("OutputsOverlap(%v, %v) = %v, want %v (symmetric)", tc.b, tc.a, got, tc.overlap)
		}
	}
}

func TestCovers(t *testing.T) {
	outs := []string{"site/", "notes.md"}
	for rel, want := range map[string]bool{
		"site/index.html": true, "site": true, "notes.md": true,
		"sitemap.xml": false, "notes.md.bak": false, "other/site/x": false,
	} {
		if got := Covers(outs, rel); got != want {
			t.Errorf("Covers(%v, %q) = %v, want %v", outs, rel, got, want)
		}
	}
}
