package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// Secure input limits.
const (
	maxSecretValue = 16 << 10
	maxSecretBody  = maxSecretValue*6 + 64 // a value of \u escapes, plus the envelope
)

type (
	secretRequest struct {
		Value string `json:"value"`
	}
	pendingSecret struct {
		RefID     string                          `json:"ref_id"`
		Label     string                          `json:"label"`
		InputHint string                          `json:"input_hint"`
		Guidance  persistence.SecureInputGuidance `json:"guidance"`
		CreatedAt time.Time                       `json:"created_at"`
	}
	pendingSecrets struct {
		Requests []pendingSecret `json:"requests"`
	}
)

func (p *pwaAPI) secretRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"POST /secrets/":       p.storeSecret,
		"GET /secrets/pending": p.pendingSecrets,
	}
}

// storeSecret serves POST /secrets/{ref_id}. The answer is exactly
// {"stored":true} or an error that names no part of the value.
func (p *pwaAPI) storeSecret(ctx *fasthttp.RequestCtx) {
	// The value must not outlive the request in the server's buffers.
	defer clear(ctx.Request.Body())
	ref := strings.TrimPrefix(string(ctx.Path()), "/secrets/")
	if persistence.CheckRefID(ref) != nil {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no pending secure input request with this ref_id")
		return
	}
	var req secretRequest
	if err := decodeOwnerBody(ctx, &req, maxSecretBody, false); err != nil {
		// The decoder's message can quote the body: keep it out.
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, `the body must be {"value":"<secret>"}`)
		return
	}
	if req.Value == "" || len(req.Value) > maxSecretValue {
		writeJSONError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, fmt.Sprintf("the value must be 1 to %d bytes", maxSecretValue))
		return
	}
	value := []byte(req.Value)
	defer clear(value)
	c, cancel := reqContext()
	defer cancel()
	err := p.secrets.Fulfil(c, ref, value)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no pending secure input request with this ref_id")
		return
	case errors.Is(err, persistence.ErrFulfilled):
		writeJSONError(ctx, fasthttp.StatusConflict, codeConflict, "this secure input request was already answered")
		return
	case err != nil:
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, "could not store the secret: "+err.Error())
		return
	}
	if err := p.audit(c, "secret_stored", map[string]any{"ref_id": ref}); err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	if p.stored != nil {
		p.stored(ref)
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"stored":true}`)
}

func (p *pwaAPI) pendingSecrets(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/secrets/pending" {
		writeJSONError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	list, err := p.db.SecureInputs().Pending(c)
	if err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	out := pendingSecrets{Requests: make([]pendingSecret, 0, len(list))}
	for _, r := range list {
		out.Requests = append(out.Requests, pendingSecret{RefID: r.RefID, Label: r.Label, InputHint: r.InputHint, Guidance: r.Guidance, CreatedAt: r.CreatedAt})
	}
	writeJSON(ctx, fasthttp.StatusOK, out)
}
