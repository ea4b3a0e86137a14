package ownerapi

import (
	"crypto/subtle"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/session"
)

// gate lets only the owner through: the owner token as a bearer token.
// A chatbot customer's session token is recognised and refused with 403,
// anything else gets 401.
type gate struct {
	token    string
	sessions *session.Minter
}

func (g gate) wrap(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		// Owner responses describe private state: never cache them.
		ctx.Response.Header.Set("Cache-Control", "no-store")
		tok, found := strings.CutPrefix(string(ctx.Request.Header.Peek("Authorization")), "Bearer ")
		switch {
		case found && tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(g.token)) == 1:
			h(ctx)
		case found && tok != "" && g.sessions != nil && g.sessionValid(tok):
			WriteError(ctx, fasthttp.StatusForbidden, messages.CodeForbidden, "only the owner may use this endpoint")
		default:
			WriteError(ctx, fasthttp.StatusUnauthorized, messages.CodeUnauthorized, "send Authorization: Bearer <owner token> (see `silas token`)")
		}
	}
}

func (g gate) sessionValid(tok string) bool {
	_, err := g.sessions.Verify(tok, time.Now())
	return err == nil
}
