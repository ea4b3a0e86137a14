package main

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/channels/web"
	"github.com/silas-ai/silas/messages"
)

// approvalsAPI serves GET /approvals/pending: the approval_request events
// the owner's scope still waits on. The PWA asks after every (re)connect so
// that a card restored from its storage whose request ended while the app
// was away (answered elsewhere, timed out, or lost with a restart) shows
// expired at once instead of failing when answered.
type approvalsAPI struct {
	sys     *actors.System
	ownerID string
}

// pendingApproval is one entry of the answer: the event as the WebSocket
// sends it, plus when the server declines it.
type pendingApproval struct {
	messages.ApprovalRequestEvent
	ExpiresAt time.Time `json:"expires_at"`
}

func (a *approvalsAPI) routes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{"GET /approvals/pending": a.pending}
}

func (a *approvalsAPI) pending(ctx *fasthttp.RequestCtx) {
	c, cancel := reqContext()
	defer cancel()
	list, err := a.sys.PendingApprovals(c, a.ownerID)
	if err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, web.CodeInternal, "read the pending approvals: "+err.Error()+"; try again")
		return
	}
	out := make([]pendingApproval, 0, len(list))
	for _, p := range list {
		out = append(out, pendingApproval{ApprovalRequestEvent: p.Event, ExpiresAt: p.ExpiresAt.UTC()})
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"requests": out})
}
