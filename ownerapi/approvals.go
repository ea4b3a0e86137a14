package ownerapi

import (
	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
)

// approvalRoutes serve GET /approvals/pending: the approval_request events
// the owner's scope still waits on (plans, and skill_install cards). The PWA asks after every (re)connect so
// that a card restored from its storage whose request ended while the app
// was away (answered elsewhere, timed out, or lost with a restart) shows
// expired at once instead of failing when answered.
func (a *API) approvalRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{"GET /approvals/pending": a.pendingApprovals}
}

func (a *API) pendingApprovals(ctx *fasthttp.RequestCtx) {
	c, cancel := reqContext()
	defer cancel()
	list, err := a.d.Actors.PendingApprovals(c, a.d.OwnerID)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, "read the pending approvals: "+err.Error()+"; try again")
		return
	}
	// Each entry is the event as the WebSocket sends it, expires_at included:
	// the plan the owner scope waits on, then the skill_install cards.
	requests := make([]any, 0, len(list))
	for _, r := range list {
		requests = append(requests, r)
	}
	requests = append(requests, pendingSkillCards(c, a.d.Actors)...)
	WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"requests": requests})
}
