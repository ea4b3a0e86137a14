package ownerapi

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/messages"
)

// fakeGoals stands for the Scheduler: goals by id, "cfg" being the config
// goal, and the calls made.
type fakeGoals struct {
	mu    sync.Mutex
	goals map[string]actors.GoalView
	err   error // every call fails with it when set
	calls []string
}

func newFakeGoals() *fakeGoals {
	return &fakeGoals{goals: map[string]actors.GoalView{
		"g-1": {ID: "g-1", Title: "One", Schedule: "@every 1m", Source: "planner", Status: actors.GoalActive},
		"cfg": {ID: "cfg", Title: "Config", Schedule: "0 * * * *", Source: "config", Status: actors.GoalActive},
	}}
}

func (f *fakeGoals) call(name string) func() {
	f.mu.Lock()
	f.calls = append(f.calls, name)
	return f.mu.Unlock
}

func (f *fakeGoals) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeGoals) Goals(context.Context) ([]actors.GoalView, error) {
	defer f.call("Goals")()
	if f.err != nil {
		return nil, f.err
	}
	var out []actors.GoalView
	for _, g := range f.goals {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b actors.GoalView) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (f *fakeGoals) set(name, id, status string) (actors.GoalView, error) {
	defer f.call(name + " " + id)()
	if f.err != nil {
		return actors.GoalView{}, f.err
	}
	g, ok := f.goals[id]
	switch {
	case !ok:
		return actors.GoalView{}, fmt.Errorf("goal %q: %w", id, actors.ErrNoSuchGoal)
	case status == actors.GoalRemoved && g.Source == "config":
		return actors.GoalView{}, fmt.Errorf("goal %q: %w", id, actors.ErrConfigGoal)
	case status == actors.GoalRemoved:
		delete(f.goals, id)
	}
	g.Status = status
	if status != actors.GoalRemoved {
		f.goals[id] = g
	}
	return g, nil
}

func (f *fakeGoals) PauseGoal(_ context.Context, id string) (actors.GoalView, error) {
	return f.set("PauseGoal", id, actors.GoalPaused)
}

func (f *fakeGoals) ResumeGoal(_ context.Context, id string) (actors.GoalView, error) {
	return f.set("ResumeGoal", id, actors.GoalActive)
}

func (f *fakeGoals) RemoveGoal(_ context.Context, id string) (actors.GoalView, error) {
	return f.set("RemoveGoal", id, actors.GoalRemoved)
}

func goalHarness(t *testing.T) (*harness, *fakeGoals) {
	h := newHarness(t)
	g := newFakeGoals()
	h.api.d.Goals = g
	return h, g
}

func TestGoalsRoutes(t *testing.T) {
	h, g := goalHarness(t)
	var list GoalsResponse
	decode(t, h.owner("GET", "/goals", ""), 200, &list)
	if len(list.Goals) != 2 || list.Goals[0].ID != "cfg" || list.Goals[1].ID != "g-1" {
		t.Fatalf("GET /goals = %+v", list)
	}
	var v actors.GoalView
	decode(t, h.owner("POST", "/goals/g-1/pause", ""), 200, &v)
	if v.ID != "g-1" || v.Status != actors.GoalPaused {
		t.Fatalf("pause answered %+v", v)
	}
	decode(t, h.owner("POST", "/goals/g-1/resume", "{}"), 200, &v)
	if v.Status != actors.GoalActive {
		t.Fatalf("resume answered %+v", v)
	}
	decode(t, h.owner("DELETE", "/goals/g-1", ""), 200, &v)
	if v.ID != "g-1" || v.Status != actors.GoalRemoved {
		t.Fatalf("delete answered %+v", v)
	}
	wantError(t, h.owner("DELETE", "/goals/g-1", ""), 404, messages.CodeNotFound, `goal "g-1": no such goal; GET /goals lists the ids`)
	wantErrorContains(t, h.owner("DELETE", "/goals/cfg", ""), 409, codeConflict, "silas.active_goal")
	wantErrorContains(t, h.owner("POST", "/goals/nope/resume", ""), 404, messages.CodeNotFound, "no such goal")
	want := []string{"Goals", "PauseGoal g-1", "ResumeGoal g-1", "RemoveGoal g-1", "RemoveGoal g-1", "RemoveGoal cfg", "ResumeGoal nope"}
	if got := g.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
}

// Only the owner reaches the goal routes: no token is 401, a chatbot
// customer's session token 403, and neither reaches the Scheduler.
func TestGoalsOwnerOnly(t *testing.T) {
	h, g := goalHarness(t)
	for _, r := range []struct{ method, path string }{
		{"GET", "/goals"}, {"POST", "/goals/g-1/pause"}, {"POST", "/goals/g-1/resume"}, {"DELETE", "/goals/g-1"},
	} {
		wantError(t, h.do(r.method, r.path, "", ""), 401, messages.CodeUnauthorized, "")
		wantError(t, h.do(r.method, r.path, "not-the-token", ""), 401, messages.CodeUnauthorized, "")
		wantError(t, h.do(r.method, r.path, h.customer, ""), 403, messages.CodeForbidden, "only the owner may use this endpoint")
	}
	if calls := g.Calls(); len(calls) != 0 {
		t.Fatalf("refused requests reached the Scheduler: %v", calls)
	}
}

func TestGoalsBadInput(t *testing.T) {
	h, g := goalHarness(t)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     messages.Code
		msg                      string
	}{
		{"list: longer path", "GET", "/goalsx", "", 404, messages.CodeNotFound, ""},
		{"list: sub path", "GET", "/goals/g-1", "", 404, messages.CodeNotFound, ""},
		{"no verb", "POST", "/goals/g-1", "", 404, messages.CodeNotFound, "no such endpoint; POST /goals/{id}/pause or /goals/{id}/resume"},
		{"unknown verb", "POST", "/goals/g-1/run", "", 404, messages.CodeNotFound, ""},
		{"verb with a tail", "POST", "/goals/g-1/pause/x", "", 404, messages.CodeNotFound, ""},
		{"empty id", "POST", "/goals//pause", "", 404, messages.CodeNotFound, ""},
		{"delete: empty id", "DELETE", "/goals/", "", 404, messages.CodeNotFound, ""},
		{"delete: nested id", "DELETE", "/goals/a/b", "", 404, messages.CodeNotFound, ""},
		{"long id", "POST", "/goals/" + strings.Repeat("g", maxGoalIDLen+1) + "/pause", "", 400, messages.CodeBadRequest, ""},
		{"control character", "DELETE", "/goals/g%0a1", "", 400, messages.CodeBadRequest, ""},
		{"body with fields", "POST", "/goals/g-1/pause", `{"force":true}`, 400, messages.CodeBadRequest, ""},
		{"body not JSON", "POST", "/goals/g-1/pause", `pause`, 400, messages.CodeBadRequest, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, h.owner(tc.method, tc.path, tc.body), tc.status, tc.code, tc.msg)
		})
	}
	if calls := g.Calls(); len(calls) != 0 {
		t.Fatalf("bad input reached the Scheduler: %v", calls)
	}
}

func TestGoalsUnavailable(t *testing.T) {
	h := newHarness(t) // no Goals: a daemon that cannot execute plans
	for _, r := range []struct{ method, path string }{{"GET", "/goals"}, {"POST", "/goals/g-1/pause"}, {"DELETE", "/goals/g-1"}} {
		wantErrorContains(t, h.owner(r.method, r.path, ""), 503, messages.CodeUnavailable, "silas serve")
	}
	h2, g := goalHarness(t)
	g.err = fmt.Errorf("ask the goal scheduler: %w", actors.ErrGoalsUnavailable)
	wantErrorContains(t, h2.owner("GET", "/goals", ""), 503, messages.CodeUnavailable, "plan execution is not configured")
	g.err = fmt.Errorf("ask the goal scheduler: future: timeout")
	wantError(t, h2.owner("POST", "/goals/g-1/pause", ""), 500, messages.CodeInternal, "ask the goal scheduler: future: timeout")
}
