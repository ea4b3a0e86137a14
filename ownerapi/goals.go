package ownerapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/messages"
)

// maxGoalIDLen bounds a goal id in a path; plan ids are far shorter.
const maxGoalIDLen = 256

// Goals is what the goal routes ask of the actor system: the Scheduler's
// goals, and their pause, resume and removal. *actors.System implements
// it; tests pass a fake.
type Goals interface {
	Goals(ctx context.Context) ([]actors.GoalView, error)
	PauseGoal(ctx context.Context, id string) (actors.GoalView, error)
	ResumeGoal(ctx context.Context, id string) (actors.GoalView, error)
	RemoveGoal(ctx context.Context, id string) (actors.GoalView, error)
}

var _ Goals = (*actors.System)(nil)

// GoalsResponse answers GET /goals; `silas goals list` decodes it.
type GoalsResponse struct {
	Goals []actors.GoalView `json:"goals"`
}

// goalRoutes serve the owner's goal endpoints (docs/owner-api.md
// "Goals"); `silas goals` and the app's goal list call them.
func (a *API) goalRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"GET /goals":     a.listGoals,
		"POST /goals/":   a.changeGoal,
		"DELETE /goals/": a.removeGoal,
	}
}

func (a *API) listGoals(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/goals" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint; GET /goals lists the goals")
		return
	}
	if a.d.Goals == nil {
		writeGoalError(ctx, actors.ErrGoalsUnavailable)
		return
	}
	c, cancel := reqContext()
	defer cancel()
	list, err := a.d.Goals.Goals(c)
	if err != nil {
		writeGoalError(ctx, err)
		return
	}
	if list == nil {
		list = []actors.GoalView{}
	}
	WriteJSON(ctx, fasthttp.StatusOK, GoalsResponse{Goals: list})
}

// changeGoal serves POST /goals/{id}/pause and POST /goals/{id}/resume.
func (a *API) changeGoal(ctx *fasthttp.RequestCtx) {
	rest := strings.TrimPrefix(string(ctx.Path()), "/goals/")
	id, verb, _ := strings.Cut(rest, "/")
	if verb != "pause" && verb != "resume" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint; POST /goals/{id}/pause or /goals/{id}/resume")
		return
	}
	if !a.goalID(ctx, id) {
		return
	}
	var none struct{}
	if err := decodeOwnerBody(ctx, &none, 1<<10, true); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error()+"; send no body or {}")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	change := a.d.Goals.PauseGoal
	if verb == "resume" {
		change = a.d.Goals.ResumeGoal
	}
	g, err := change(c, id)
	if err != nil {
		writeGoalError(ctx, err)
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, g)
}

// removeGoal serves DELETE /goals/{id}.
func (a *API) removeGoal(ctx *fasthttp.RequestCtx) {
	id := strings.TrimPrefix(string(ctx.Path()), "/goals/")
	if !a.goalID(ctx, id) {
		return
	}
	c, cancel := reqContext()
	defer cancel()
	g, err := a.d.Goals.RemoveGoal(c, id)
	if err != nil {
		writeGoalError(ctx, err)
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, g)
}

// goalID checks a goal id from a path, and that goals are available at
// all; it answers and returns false when not.
func (a *API) goalID(ctx *fasthttp.RequestCtx, id string) bool {
	switch {
	case id == "" || strings.Contains(id, "/"):
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint; name one goal: /goals/{id}; GET /goals lists the ids")
	case len(id) > maxGoalIDLen || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, fmt.Sprintf("goal id: at most %d printable characters; GET /goals lists the ids", maxGoalIDLen))
	case a.d.Goals == nil:
		writeGoalError(ctx, actors.ErrGoalsUnavailable)
	default:
		return true
	}
	return false
}

// writeGoalError answers a goal error with its status.
func writeGoalError(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case errors.Is(err, actors.ErrNoSuchGoal):
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, err.Error()+"; GET /goals lists the ids")
	case errors.Is(err, actors.ErrConfigGoal):
		WriteError(ctx, fasthttp.StatusConflict, codeConflict, err.Error())
	case errors.Is(err, actors.ErrGoalsUnavailable):
		WriteError(ctx, fasthttp.StatusServiceUnavailable, messages.CodeUnavailable, err.Error()+"; run goals through `silas serve`")
	default:
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
	}
}
