package actors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox/executor"
)

// result is the WorkItemResult of the finished work item (spec 3.3): its
// artifacts are those of the ledger, never the executor's claims.
func (a *WorkItem) result(st messages.WorkItemStatus, detail string) *messages.WorkItemResult {
	r := &messages.WorkItemResult{
		WorkItemID: a.w.ID, Status: st, Summary: detail, VerificationResults: slices.Clone(a.results),
		BudgetUsed: a.used, Artifacts: map[string]string{}, NextSteps: slices.Clone(a.nextSteps),
	}
	if r.VerificationResults == nil {
		r.VerificationResults = []map[string]any{}
	}
	if r.NextSteps == nil {
		r.NextSteps = []string{}
	}
	for k, v := range a.artifacts {
		r.Artifacts[k] = v
	}
	if st != messages.StatusDone && a.w.Ladder.LastFailure != "" {
		last := a.w.Ladder.LastFailure
		r.LastError = &last
	}
	return r
}

// taint is the trust of what the work item's tool calls brought in: web
// search results and sandbox runs with network access are external;
// work that stayed in the sandbox, on the owner's approved plan, is not.
func (a *WorkItem) taint() messages.TaintLevel {
	for _, e := range a.ledger {
		if e.Blocked != "" {
			continue
		}
		if e.Tool == executor.WebSearch {
			return messages.TaintExternal
		}
		if net, _ := e.Result.Metadata["network_access"].(bool); net {
			return messages.TaintExternal
		}
	}
	return messages.TaintOwner
}

// renderResult is how a work item's result reads in the owner's context:
// what the proxy needs to answer follow-up questions about it. Ledger
// metadata is never part of it.
func renderResult(title string, r *messages.WorkItemResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Work item %s (%q) finished: %s.\n%s\n", r.WorkItemID, title, r.Status, r.Summary)
	if len(r.Artifacts) > 0 && !strings.Contains(r.Summary, "Artifacts: ") {
		b.WriteString("Artifacts: " + strings.Join(artifactNames(r.Artifacts), ", ") + "\n")
	}
	if r.LastError != nil && !strings.Contains(r.Summary, *r.LastError) {
		b.WriteString("Last error: " + *r.LastError + "\n")
	}
	if len(r.NextSteps) > 0 {
		b.WriteString("Next steps: " + strings.Join(r.NextSteps, "; ") + "\n")
	}
	fmt.Fprintf(&b, "Spent: %d attempts, %d tokens, $%.4f.", r.BudgetUsed.Attempts, r.BudgetUsed.Tokens, r.BudgetUsed.CostUSD)
	return b.String()
}
