package web

import (
	"context"
	"encoding/json"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
)

// readyTimeout bounds one /ready answer.
const readyTimeout = 5 * time.Second

// ReadyCheck is one readiness condition as /ready shows it.
type ReadyCheck struct {
	// Name is a stable identifier: "database", "actors", "disk", "model".
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Detail says what is wrong, or what was measured, without paths,
	// URLs or error bodies: /ready answers callers without a token.
	Detail string `json:"detail,omitempty"`
}

// ReadyReporter is a capability a Gateway may have: the session side
// knows whether the daemon can take messages (its store writable, its
// actors answering, disk above the watermark, a model reachable). The
// server finds it by type assertion; a Gateway without it makes /ready
// answer ready whenever the server answers at all.
type ReadyReporter interface {
	// Ready runs (or reads cached results of) every check; it must return
	// within ctx's deadline. The daemon is ready when every check is OK.
	Ready(ctx context.Context) []ReadyCheck
}

// readyBody is the JSON of /ready.
type readyBody struct {
	Status string       `json:"status"` // "ready" or "not_ready"
	Checks []ReadyCheck `json:"checks"`
}

// serveReady answers GET /ready: 200 {"status":"ready",...} when every
// check passes, else 503 {"status":"not_ready",...}, for load balancers
// and Kubernetes readiness probes. /health stays liveness: it says only
// that the process serves HTTP.
func (s *Server) serveReady(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeHTTPError(ctx, fasthttp.StatusMethodNotAllowed, messages.CodeMethodNotAllowed)
		return
	}
	body := readyBody{Status: "ready", Checks: []ReadyCheck{}}
	if r, ok := s.opts.Gateway.(ReadyReporter); ok {
		c, cancel := context.WithTimeout(context.Background(), readyTimeout)
		body.Checks = r.Ready(c)
		cancel()
	}
	status := fasthttp.StatusOK
	for _, c := range body.Checks {
		if !c.OK {
			body.Status, status = "not_ready", fasthttp.StatusServiceUnavailable
		}
	}
	b, err := json.Marshal(body)
	if err != nil { // cannot happen: strings and bools
		writeHTTPError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal)
		return
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
