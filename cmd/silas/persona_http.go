package main

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
	"github.com/silas-ai/silas/runtime/session"
)

// personaAPI serves the persona endpoints of spec 8.1. The owner (bearer:
// the owner token) is trusted and may move the baseline; a chatbot customer
// (bearer: its session token) reaches only its own scope and changes only
// transient, rate-limited session offsets.
type personaAPI struct {
	sys      *actors.System
	owner    string
	ownerID  string
	sessions *session.Minter
}

func (p *personaAPI) routes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"GET /persona/state":     p.handle("state"),
		"POST /persona/feedback": p.handle("feedback"),
		"POST /persona/preset":   p.handle("preset"),
		"POST /persona/tune":     p.handle("tune"),
	}
}

func (p *personaAPI) handle(kind string) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		scope, scopeKind, trusted, ok := p.caller(ctx)
		if !ok {
			writeJSONError(ctx, fasthttp.StatusUnauthorized, messages.CodeUnauthorized, "send Authorization: Bearer <owner token or session_token>")
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
			writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
			return
		}
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		view, err := p.sys.Persona(c, scope, scopeKind, op)
		switch {
		case errors.Is(err, personality.ErrRateLimited):
			writeJSONError(ctx, fasthttp.StatusTooManyRequests, messages.CodeRateLimited, err.Error())
		case errors.Is(err, personality.ErrUnknownFeedback), errors.Is(err, personality.ErrUnknownPreset):
			writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		case err != nil:
			writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		default:
			b, _ := json.Marshal(view)
			ctx.SetContentType("application/json")
			ctx.SetBody(b)
		}
	}
}

// caller identifies the scope a bearer token speaks for.
func (p *personaAPI) caller(ctx *fasthttp.RequestCtx) (scope string, kind messages.ScopeKind, trusted, ok bool) {
	tok, found := strings.CutPrefix(string(ctx.Request.Header.Peek("Authorization")), "Bearer ")
	if !found || tok == "" {
		return "", 0, false, false
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(p.owner)) == 1 {
		return p.ownerID, messages.ScopeOwner, true, true
	}
	if id, err := p.sessions.Verify(tok, time.Now()); err == nil {
		return id, messages.ScopeCustomer, false, true
	}
	return "", 0, false, false
}

// decodeBody decodes a JSON request body strictly and validates it.
func decodeBody(ctx *fasthttp.RequestCtx, v interface{ Validate() error }) error {
	dec := json.NewDecoder(strings.NewReader(string(ctx.PostBody())))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New("the body must be a JSON object of the documented fields: " + err.Error())
	}
	return v.Validate()
}

// writeJSONError answers with the web channel's error event, so HTTP and
// WebSocket clients read one error shape with one table of codes.
func writeJSONError(ctx *fasthttp.RequestCtx, status int, code messages.Code, msg string) {
	b, _ := json.Marshal(&messages.ErrorEvent{Type: "error", Code: code, Message: msg})
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
