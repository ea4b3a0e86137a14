package main

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/keys"
	"github.com/silas-ai/silas/runtime/session"
)

// codeConflict answers 409: the web channel's code table has no conflict
// code, and the error shape is the same.
const codeConflict messages.Code = "conflict"

// httpTimeout bounds the storage work of one owner HTTP request.
const httpTimeout = 10 * time.Second

// ownerGate lets only the owner through: the owner token as a bearer token.
// A chatbot customer's session token is recognised and refused with 403,
// anything else gets 401.
type ownerGate struct {
	token    string
	sessions *session.Minter
}

func (g ownerGate) wrap(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		// Owner responses describe private state: never cache them.
		ctx.Response.Header.Set("Cache-Control", "no-store")
		tok, found := strings.CutPrefix(string(ctx.Request.Header.Peek("Authorization")), "Bearer ")
		switch {
		case found && tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(g.token)) == 1:
			h(ctx)
		case found && tok != "" && g.sessions != nil && g.sessionValid(tok):
			writeJSONError(ctx, fasthttp.StatusForbidden, messages.CodeForbidden, "only the owner may use this endpoint")
		default:
			writeJSONError(ctx, fasthttp.StatusUnauthorized, messages.CodeUnauthorized, "send Authorization: Bearer <owner token> (see `silas token`)")
		}
	}
}

func (g ownerGate) sessionValid(tok string) bool {
	_, err := g.sessions.Verify(tok, time.Now())
	return err == nil
}

// pwaAPI bundles the owner endpoints the PWA uses besides the WebSocket:
// devices, secure input, the activity feed, UX metrics and pending approvals.
type pwaAPI struct {
	gate    ownerGate
	db      *persistence.DB
	ownerID string
	devices *deviceRegistry
	secrets *keys.Vault
	// stored tells the connection manager a secure input was stored.
	stored   func(ref string)
	conns    *connectionsAPI
	activity *activityAPI
	// approvals answers GET /approvals/pending.
	approvals *approvalsAPI
	// skills serves `silas skills` (list, show, install, import, remove).
	skills *skillsAPI
}

func (p *pwaAPI) routes() map[string]fasthttp.RequestHandler {
	routes := map[string]fasthttp.RequestHandler{}
	maps.Copy(routes, p.deviceRoutes())
	maps.Copy(routes, p.secretRoutes())
	maps.Copy(routes, p.activity.routes())
	maps.Copy(routes, p.uxRoutes())
	maps.Copy(routes, p.approvals.routes())
	maps.Copy(routes, p.skills.routes())
	maps.Copy(routes, p.conns.routes())
	maps.Copy(routes, p.backupRoutes())
	for k, h := range routes {
		routes[k] = p.gate.wrap(h)
	}
	return routes
}

// audit appends one entry to the audit chain. The chain's head is guarded
// by persistence, so writing next to the Audit actor keeps one chain; an
// HTTP answer is only given once its audit entry is durable.
func (p *pwaAPI) audit(ctx context.Context, event string, data map[string]any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode audit %s: %w", event, err)
	}
	if _, err := p.db.Audit().Append(ctx, persistence.AuditEntry{Event: event, Scope: p.ownerID, Data: b}); err != nil {
		return fmt.Errorf("audit %s: %w", event, err)
	}
	return nil
}

// decodeOwnerBody decodes a JSON object body of at most limit bytes into v,
// refusing unknown fields and trailing data. An empty body leaves v as is
// when emptyOK.
func decodeOwnerBody(ctx *fasthttp.RequestCtx, v any, limit int, emptyOK bool) error {
	body := ctx.PostBody()
	if len(body) > limit {
		return fmt.Errorf("the body is %d bytes; the limit is %d", len(body), limit)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if emptyOK {
			return nil
		}
		return errors.New("the body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the body must be a JSON object of the documented fields: %v", err)
	}
	if dec.More() {
		return errors.New("the body must hold one JSON object")
	}
	return nil
}

// writeJSON answers status with v as JSON.
func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, "encode the response: "+err.Error())
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

func reqContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), httpTimeout)
}

// routes are the web channel's extra HTTP routes: the persona endpoints
// (owner or customer) and the owner-only PWA endpoints.
func (d *daemon) routes(cfg *config.Config, sessions *session.Minter) map[string]fasthttp.RequestHandler {
	routes := (&personaAPI{sys: d.sys, owner: d.in.ownerToken, ownerID: cfg.OwnerID, sessions: sessions}).routes()
	pwa := &pwaAPI{
		gate: ownerGate{token: d.in.ownerToken, sessions: sessions},
		db:   d.in.db, ownerID: cfg.OwnerID, devices: d.devices, secrets: d.secrets,
		activity:  &activityAPI{db: d.in.db, ownerID: cfg.OwnerID},
		approvals: &approvalsAPI{sys: d.sys, ownerID: cfg.OwnerID},
		skills:    &skillsAPI{sys: d.sys, db: d.in.db, snaps: d.skills},
		conns:     &connectionsAPI{sys: d.sys},
		stored:    d.sys.SecretStored,
	}
	maps.Copy(routes, pwa.routes())
	return routes
}
