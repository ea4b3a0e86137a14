package ownerapi

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

// Bodies of the secure-input endpoints; `silas connections` posts a
// SecretRequest.
type (
	// SecretRequest is the body of POST /secrets/{ref_id}.
	SecretRequest struct {
		Value string `json:"value"`
	}
	// PendingSecret is a secure-input request still waiting for a value.
	PendingSecret struct {
		RefID     string                          `json:"ref_id"`
		Label     string                          `json:"label"`
		InputHint string                          `json:"input_hint"`
		Guidance  persistence.SecureInputGuidance `json:"guidance"`
		CreatedAt time.Time                       `json:"created_at"`
	}
	// PendingSecrets answers GET /secrets/pending.
	PendingSecrets struct {
		Requests []PendingSecret `json:"requests"`
	}
)

func (a *API) secretRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"POST /secrets/":       a.storeSecret,
		"GET /secrets/pending": a.pendingSecrets,
	}
}

// storeSecret serves POST /secrets/{ref_id}. The answer is exactly
// {"stored":true} or an error that names no part of the value.
func (a *API) storeSecret(ctx *fasthttp.RequestCtx) {
	// The value must not outlive the request in the server's buffers.
	defer clear(ctx.Request.Body())
	ref := strings.TrimPrefix(string(ctx.Path()), "/secrets/")
	if persistence.CheckRefID(ref) != nil {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no pending secure input request with this ref_id")
		return
	}
	var req SecretRequest
	if err := decodeOwnerBody(ctx, &req, maxSecretBody, false); err != nil {
		// The decoder's message can quote the body: keep it out.
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, `the body must be {"value":"<secret>"}`)
		return
	}
	if req.Value == "" || len(req.Value) > maxSecretValue {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, fmt.Sprintf("the value must be 1 to %d bytes", maxSecretValue))
		return
	}
	value := []byte(req.Value)
	defer clear(value)
	c, cancel := reqContext()
	defer cancel()
	err := a.d.Vault.Fulfil(c, ref, value)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no pending secure input request with this ref_id")
		return
	case errors.Is(err, persistence.ErrFulfilled):
		WriteError(ctx, fasthttp.StatusConflict, codeConflict, "this secure input request was already answered")
		return
	case err != nil:
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, "could not store the secret: "+err.Error())
		return
	}
	if err := a.audit(c, "secret_stored", map[string]any{"ref_id": ref}); err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	a.d.Actors.SecretStored(ref)
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"stored":true}`)
}

func (a *API) pendingSecrets(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/secrets/pending" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	list, err := a.d.DB.SecureInputs().Pending(c)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	out := PendingSecrets{Requests: make([]PendingSecret, 0, len(list))}
	for _, r := range list {
		out.Requests = append(out.Requests, PendingSecret{RefID: r.RefID, Label: r.Label, InputHint: r.InputHint, Guidance: r.Guidance, CreatedAt: r.CreatedAt})
	}
	WriteJSON(ctx, fasthttp.StatusOK, out)
}
