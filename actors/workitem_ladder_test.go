package actors

import (
	"strings"
	"sync"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
)

// plannerLog records the planner calls of an execHarness and answers
// consult_planner with guidance.
type plannerLog struct {
	mu    sync.Mutex
	users []string // the last user message of each planner call
}

func (p *plannerLog) answer(guidance string) func(req *llm.Request) (*llm.Response, error) {
	return func(req *llm.Request) (*llm.Response, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.users = append(p.users, req.Messages[len(req.Messages)-1].Content)
		if req.Format != nil && req.Format.Name == SchemaPlannerGuidance {
			return &llm.Response{Content: `{"guidance":"` + guidance + `"}`}, nil
		}
		return &llm.Response{Content: `{"message":"no alternative","memory_queries":[],"memory_ops":[],"plan_action":null,"needs_approval":false}`}, nil
	}
}

func (p *plannerLog) calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.users...)
}

func TestWorkItemResumedWhileConsultingConsultsAgain(t *testing.T) {
	h := newExecHarness(t)
	var pl plannerLog
	h.planner = pl.answer("look at the check first")
	var briefing string
	h.onExec = func() {}
	w := h.approved(t)
	w.Status, w.Attempts = messages.StatusRunning, 3
	w.BudgetUsed = messages.BudgetUsed{Attempts: 3, PlannerCalls: 1}
	w.Ladder = messages.LadderState{Stage: messages.LadderConsulting, LastFailure: "verification failed: exists: exit code 1"}
	stored := h.stored(t, w)
	if stored.Ladder != w.Ladder {
		t.Fatalf("the store lost the ladder state: %+v, want %+v", stored.Ladder, w.Ladder)
	}
	h.onExec = func() {
		all, err := h.d.DB.WorkItems().List(t.Context(), "owner")
		if err == nil && len(all) == 1 && briefing == "" {
			briefing = all[0].Ladder.Guidance
		}
	}
	evs := h.run(t, stored)
	if got := statuses(evs); got != "running,done" || evs[1].Attempt != 4 {
		t.Fatalf("statuses %s (%+v), want running,done at attempt 4", got, evs)
	}
	calls := pl.calls()
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "consult_planner") || !strings.Contains(calls[0], "exit code 1") {
		t.Fatalf("planner calls %q, want one consult_planner showing the failure", calls)
	}
	if briefing != "look at the check first" {
		t.Fatalf("guidance journaled with attempt 4: %q, want the planner's", briefing)
	}
}

func TestWorkItemResumedWhileReplanningEscalates(t *testing.T) {
	h := newExecHarness(t)
	var pl plannerLog
	h.planner = pl.answer("")
	w := h.approved(t)
	w.Status, w.Attempts = messages.StatusRunning, w.Budget.MaxAttempts
	w.BudgetUsed = messages.BudgetUsed{Attempts: w.Budget.MaxAttempts}
	w.Ladder = messages.LadderState{Stage: messages.LadderReplanning, LastFailure: "verification failed: exists: exit code 1"}
	evs := h.run(t, h.stored(t, w))
	if got := statuses(evs); got != "stuck" || !strings.Contains(evs[0].Detail, "no alternative") {
		t.Fatalf("statuses %s (%+v), want stuck: the planner found no alternative", got, evs)
	}
	if calls := pl.calls(); len(calls) != 1 || !strings.HasPrefix(calls[0], "replan_request (re-plan 1 of 2)") {
		t.Fatalf("planner calls %q, want one replan_request", calls)
	}
	if n := h.execCalls.Load(); n != 0 {
		t.Fatalf("%d executor calls, want none: no attempts were left", n)
	}
}

func TestWorkItemAtReplanDepthEscalatesWithoutPlanner(t *testing.T) {
	h := newExecHarness(t)
	var pl plannerLog
	h.planner = pl.answer("")
	w := h.approved(t)
	w.Status, w.Attempts = messages.StatusRunning, w.Budget.MaxAttempts
	w.BudgetUsed = messages.BudgetUsed{Attempts: w.Budget.MaxAttempts}
	w.Ladder = messages.LadderState{ReplanDepth: maxReplanDepth}
	evs := h.run(t, h.stored(t, w))
	if got := statuses(evs); got != "stuck" || !strings.Contains(evs[0].Detail, "re-plans allowed were tried") {
		t.Fatalf("statuses %s (%+v), want stuck after the last re-plan", got, evs)
	}
	if calls := pl.calls(); len(calls) != 0 {
		t.Fatalf("planner calls %q, want none past the re-plan depth", calls)
	}
}

func TestAttemptBriefing(t *testing.T) {
	w := &messages.WorkItem{Title: "T", Body: "do it"}
	if got := attemptBriefing(w, 1, "", ""); got != "# T\n\ndo it" {
		t.Fatalf("first briefing %q", got)
	}
	got := attemptBriefing(w, 4, "verification failed: x", "try y")
	if want := "# T\n\ndo it\n\n# Previous attempt 3 failed\nverification failed: x\n\n# Planner guidance\ntry y"; got != want {
		t.Fatalf("briefing %q, want %q", got, want)
	}
}
