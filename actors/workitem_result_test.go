package actors

import (
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox/executor"
)

func TestWorkItemResultTaintFollowsWhatItsToolsTouched(t *testing.T) {
	ran := func(tool string, network bool) messages.LedgerEntry {
		return messages.LedgerEntry{Tool: tool, Result: messages.ExecutionResult{Success: true, Metadata: map[string]any{"network_access": network}}}
	}
	blockedSearch := ran(executor.WebSearch, false)
	blockedSearch.Blocked = "no_web"
	for _, tc := range []struct {
		name   string
		ledger []messages.LedgerEntry
		want   messages.TaintLevel
	}{
		{"sandbox only", []messages.LedgerEntry{ran(executor.ShellExec, false)}, messages.TaintOwner},
		{"network", []messages.LedgerEntry{ran(executor.ShellExec, false), ran(executor.PythonExec, true)}, messages.TaintExternal},
		{"web search", []messages.LedgerEntry{ran(executor.WebSearch, false)}, messages.TaintExternal},
		{"blocked web search", []messages.LedgerEntry{blockedSearch}, messages.TaintOwner},
	} {
		a := &WorkItem{w: &messages.WorkItem{ID: "task-x"}, ledger: tc.ledger}
		if got := a.taint(); got != tc.want {
			t.Errorf("%s: taint %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestRenderedResultNamesLedgerArtifactsNotMetadata(t *testing.T) {
	last := "verification failed: exists: exit code 1"
	r := &messages.WorkItemResult{WorkItemID: "task-x", Status: messages.StatusFailed, Summary: "gave up",
		LastError: &last, Artifacts: map[string]string{"b.txt": "/w/b.txt", "a.txt": "/w/a.txt"}, NextSteps: []string{"retry"}}
	got := renderResult("Do x", r)
	for _, want := range []string{"task-x", "failed", "gave up", "Artifacts: a.txt, b.txt", last, "Next steps: retry"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered result %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "/w/") {
		t.Errorf("rendered result %q shows host paths", got)
	}
}
