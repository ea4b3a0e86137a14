package actors

import (
	"strings"
	"testing"

	"github.com/silas-ai/silas/runtime/llm"
)

// TestRefusedModelKeyBlocksAtOnce: an executor whose provider refuses the
// API key ends the work item blocked after one attempt, with the fix, and
// does not climb the ladder (no retries, no planner consult).
func TestRefusedModelKeyBlocksAtOnce(t *testing.T) {
	h := newExecHarness(t)
	var pl plannerLog
	h.planner = pl.answer("try again")
	h.execErr = &llm.APIError{Status: 401, Body: `{"error":"invalid key"}`}
	evs := h.run(t, h.approved(t))
	last := evs[len(evs)-1]
	if last.Status != "blocked" || !strings.Contains(last.Detail, "refused the API key") || last.Attempt != 1 {
		t.Fatalf("final %+v, want blocked after attempt 1 naming the API key", last)
	}
	if n := h.execCalls.Load(); n != 1 {
		t.Fatalf("%d executor calls, want 1 (no retry)", n)
	}
	if n := len(pl.calls()); n != 0 {
		t.Fatalf("%d planner calls: a configuration error climbed the ladder", n)
	}
}

func TestUnrunnable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&llm.APIError{Status: 401}, true},
		{&llm.APIError{Status: 403}, true},
		{&llm.APIError{Status: 404}, true},
		{&llm.APIError{Status: 429, Retryable: true}, false},
		{&llm.APIError{Status: 500, Retryable: true}, false},
		{llm.ErrMissingAPIKey, true},
		{errSkillUnusable, true},
		{errBudgetExhausted, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := classifyAttempt(tt.err).final; got != tt.want {
			t.Errorf("classifyAttempt(%v).final = %v, want %v", tt.err, got, tt.want)
		}
	}
}
