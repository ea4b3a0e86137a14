package ownerapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/skills/connection"
)

// maxConnectionBody bounds a proposal: settings are a few endpoints.
const maxConnectionBody = 16 << 10

// connectionRoutes serve the owner's connection endpoints
// (docs/owner-api.md "Connections"); `silas connections` calls them.
func (a *API) connectionRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"GET /connections":     a.listConnections,
		"GET /connections/":    a.showConnection,
		"POST /connections":    a.proposeConnection,
		"POST /connections/":   a.checkConnection,
		"DELETE /connections/": a.removeConnection,
	}
}

// Bodies of the connection endpoints; `silas connections` sends and
// decodes the same types.
type (
	// ConnectionBody is the body of POST /connections: a proposal.
	ConnectionBody struct {
		Skill        string                          `json:"skill"`
		Name         string                          `json:"name"`
		Domain       string                          `json:"domain"`
		Settings     map[string]any                  `json:"settings"`
		IdentityHint map[string]any                  `json:"identity_hint"`
		Permissions  []messages.ConnectionPermission `json:"permissions"`
	}
	// ConnectionsResponse answers GET /connections.
	ConnectionsResponse struct {
		Connections []messages.ConnectionSummary `json:"connections"`
	}
)

func (a *API) listConnections(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/connections" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	all, err := a.d.Actors.Connections(c)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, ConnectionsResponse{Connections: all})
}

func (a *API) showConnection(ctx *fasthttp.RequestCtx) {
	id := strings.TrimPrefix(string(ctx.Path()), "/connections/")
	c, cancel := reqContext()
	defer cancel()
	all, err := a.d.Actors.Connections(c)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	for _, s := range all {
		if s.ConnectionID == id {
			WriteJSON(ctx, fasthttp.StatusOK, s)
			return
		}
	}
	WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, fmt.Sprintf("no connection %q; `silas connections list` shows them", id))
}

func (a *API) proposeConnection(ctx *fasthttp.RequestCtx) {
	var body ConnectionBody
	if err := decodeOwnerBody(ctx, &body, maxConnectionBody, false); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	if strings.TrimSpace(body.Skill) == "" {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, `name the connection skill: {"skill":"oauth-device","settings":{...}}`)
		return
	}
	if k := secretSetting(body.Settings); k != "" {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, fmt.Sprintf(
			"settings.%s looks like a secret; settings are stored and shown in plain text. Leave it out: the setup asks for secrets through the secure form", k))
		return
	}
	for _, p := range body.Permissions {
		switch p {
		case messages.PermissionObserve, messages.PermissionDraft, messages.PermissionAct, messages.PermissionManage:
		default:
			WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, fmt.Sprintf("permission %q: use observe, draft, act or manage", p))
			return
		}
	}
	c, cancel := reqContext()
	defer cancel()
	sum, err := a.d.Actors.ProposeConnection(c, actors.ProposeConnection{Skill: body.Skill, Name: body.Name, Domain: body.Domain,
		Settings: body.Settings, IdentityHint: body.IdentityHint, Permissions: body.Permissions})
	if err != nil {
		status := fasthttp.StatusInternalServerError
		if errors.Is(err, actors.ErrNotConnectionSkill) || errors.Is(err, messages.ErrInvalidConnection) {
			status = fasthttp.StatusBadRequest
		}
		WriteError(ctx, status, codeFor(status), err.Error())
		return
	}
	WriteJSON(ctx, fasthttp.StatusAccepted, sum)
}

// checkConnection serves POST /connections/{id}/check.
func (a *API) checkConnection(ctx *fasthttp.RequestCtx) {
	id, ok := strings.CutSuffix(strings.TrimPrefix(string(ctx.Path()), "/connections/"), "/check")
	if !ok {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint; POST /connections/{id}/check runs a health check")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	a.answerConnection(ctx, func() (messages.ConnectionSummary, error) { return a.d.Actors.CheckConnection(c, id) })
}

func (a *API) removeConnection(ctx *fasthttp.RequestCtx) {
	id := strings.TrimPrefix(string(ctx.Path()), "/connections/")
	c, cancel := reqContext()
	defer cancel()
	a.answerConnection(ctx, func() (messages.ConnectionSummary, error) { return a.d.Actors.RemoveConnection(c, id) })
}

func (a *API) answerConnection(ctx *fasthttp.RequestCtx, call func() (messages.ConnectionSummary, error)) {
	sum, err := call()
	switch {
	case errors.Is(err, actors.ErrNoSuchConnection):
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, err.Error())
	case errors.Is(err, actors.ErrConnectionBusy):
		WriteError(ctx, fasthttp.StatusConflict, codeConflict, err.Error())
	case err != nil:
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
	default:
		WriteJSON(ctx, fasthttp.StatusOK, sum)
	}
}

// secretSetting returns the first settings key that names a secret.
func secretSetting(settings map[string]any) string {
	for k, v := range settings {
		if connection.SecretKey(k) {
			return k
		}
		if m, ok := v.(map[string]any); ok {
			if in := secretSetting(m); in != "" {
				return k + "." + in
			}
		}
	}
	return ""
}

func codeFor(status int) messages.Code {
	switch status {
	case http.StatusBadRequest:
		return messages.CodeBadRequest
	case http.StatusNotFound:
		return messages.CodeNotFound
	}
	return messages.CodeInternal
}
