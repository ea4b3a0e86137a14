package ownerapi

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/personality"
)

// personaRoutes serve the persona endpoints of spec 8.1. The owner
// (bearer: the owner token) is trusted and may move the baseline; a chatbot
// customer (bearer: its session token) reaches only its own scope and
// changes only transient, rate-limited session offsets.
func (a *API) personaRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"GET /persona/state":     a.persona("state"),
		"POST /persona/feedback": a.persona("feedback"),
		"POST /persona/preset":   a.persona("preset"),
		"POST /persona/tune":     a.persona("tune"),
	}
}

func (a *API) persona(kind string) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		scope, scopeKind, trusted, ok := a.personaCaller(ctx)
		if !ok {
			WriteError(ctx, fasthttp.StatusUnauthorized, messages.CodeUnauthorized, "send Authorization: Bearer <owner token or session_token>")
			return
		}
		op := actors.PersonaOp{Kind: kind, Trusted: trusted}
		var err error
		switch kind {
		case "feedback":
			var r messages.PersonaFeedbackRequest
			if err = decodeBody(ctx, &r); err == nil {
				op.Feedback = r.Type
			}
		case "preset":
			var r messages.PersonaPresetRequest
			if err = decodeBody(ctx, &r); err == nil {
				op.Preset = r.Preset
			}
		case "tune":
			err = decodeBody(ctx, &op.Tune)
		}
		if err != nil {
			WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
			return
		}
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		view, err := a.d.Actors.Persona(c, scope, scopeKind, op)
		switch {
		case errors.Is(err, personality.ErrRateLimited):
			WriteError(ctx, fasthttp.StatusTooManyRequests, messages.CodeRateLimited, err.Error())
		case errors.Is(err, personality.ErrUnknownFeedback), errors.Is(err, personality.ErrUnknownPreset):
			WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		case err != nil:
			WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		default:
			b, _ := json.Marshal(view)
			ctx.SetContentType("application/json")
			ctx.SetBody(b)
		}
	}
}

// personaCaller identifies the scope a bearer token speaks for.
func (a *API) personaCaller(ctx *fasthttp.RequestCtx) (scope string, kind messages.ScopeKind, trusted, ok bool) {
	tok, found := strings.CutPrefix(string(ctx.Request.Header.Peek("Authorization")), "Bearer ")
	if !found || tok == "" {
		return "", 0, false, false
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(a.d.OwnerToken)) == 1 {
		return a.d.OwnerID, messages.ScopeOwner, true, true
	}
	if id, err := a.d.Sessions.Verify(tok, time.Now()); err == nil {
		return id, messages.ScopeCustomer, false, true
	}
	return "", 0, false, false
}
