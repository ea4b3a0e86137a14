package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/silas-ai/silas/messages"
)

// FuzzParse checks that Parse never panics, and that whatever it accepts is
// valid, hashable, and hashes the same after a JSON round trip.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"task.md", "goal.md", "project.md"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(minimal + "---\n")
	f.Add(minimal + "verify:\n  - name: a\n    run: b\n    expect: { exit_code: 0, contains: ok }\n---\n")
	f.Add(minimal + "gates:\n  - name: g\n    on: on_tool_call\n    config: { a: [1, {b: c}] }\n---\n")
	f.Add("---\n&a [*a]\n---\n")
	f.Add("---\n")
	f.Fuzz(func(t *testing.T, markdown string) {
		w, err := Parse(markdown)
		if err != nil {
			return
		}
		if err := w.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid work item: %v", err)
		}
		h1, err := messages.WorkItemPlanHash(w)
		if err != nil {
			t.Fatalf("Parse accepted an unhashable work item: %v", err)
		}
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var back messages.WorkItem
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if h2, err := messages.WorkItemPlanHash(&back); err != nil || h2 != h1 {
			t.Fatalf("plan hash %s changed to %s (%v) after a JSON round trip", h1, h2, err)
		}
	})
}
