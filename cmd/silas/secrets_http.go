package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/channels/web"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/keys"
)

// Secure input limits.
const (
	maxSecretValue = 16 << 10
	maxSecretBody  = maxSecretValue*6 + 64 // a value of \u escapes, plus the envelope
)

// secretVault is the secure-input store of spec 5.10.1: requests (ref ids)
// are journaled in Badger, values go to the keystore (one 0600 file per
// value under <data_dir>/keys), never to Badger, logs, audit or a socket.
//
// The runtime calls Request when a connection skill needs a secret and
// sends the channel a secure_input_request event; the owner's browser posts
// the value to POST /secrets/{ref_id}; the skill reads it with Value.
type secretVault struct {
	db *persistence.DB
	ks *keys.FileKeystore
	// mu serialises fulfilments, so that of two posts for one ref exactly
	// one writes the keystore.
	mu sync.Mutex
}

// secretKeyName maps a ref id (which may use upper case, longer than the
// keystore allows) to its keystore name.
func secretKeyName(ref string) string {
	sum := sha256.Sum256([]byte("silas-secure-input:" + ref))
	return "secret-" + hex.EncodeToString(sum[:20])
}

// Request records a pending secure-input request.
func (v *secretVault) Request(ctx context.Context, r persistence.SecureInputRequest) error {
	return v.db.SecureInputs().Create(ctx, r)
}

// Fulfil stores value for the pending request ref: persistence.ErrNotFound
// for an unknown ref, persistence.ErrFulfilled for one already answered.
func (v *secretVault) Fulfil(ctx context.Context, ref string, value []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.db.SecureInputs().Get(ctx, ref)
	if err != nil {
		return err
	}
	if r.FulfilledAt != nil {
		return fmt.Errorf("secure input %s: %w", ref, persistence.ErrFulfilled)
	}
	// The value is written before the request is marked fulfilled: a crash
	// in between leaves the request pending and the owner can post again,
	// which overwrites the file.
	if err := v.ks.Put(secretKeyName(ref), value); err != nil {
		return fmt.Errorf("store secret for %s: %w", ref, err)
	}
	return v.db.SecureInputs().MarkFulfilled(ctx, ref, time.Now())
}

// Value returns the stored secret of a fulfilled request.
func (v *secretVault) Value(ctx context.Context, ref string) ([]byte, error) {
	r, err := v.db.SecureInputs().Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	if r.FulfilledAt == nil {
		return nil, fmt.Errorf("secure input %s is not fulfilled yet: %w", ref, persistence.ErrNotFound)
	}
	return v.ks.Get(secretKeyName(ref))
}

// Cancel forgets request ref and removes its value if one was stored (the
// owner cancelled the setup, spec 5.10.1). Cancelling an unknown ref is no
// error.
func (v *secretVault) Cancel(ctx context.Context, ref string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := persistence.CheckRefID(ref); err != nil {
		return nil // no such request can exist
	}
	path := filepath.Join(v.ks.Dir(), secretKeyName(ref))
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove secret of %s: %w", ref, err)
	}
	return v.db.SecureInputs().Delete(ctx, ref)
}

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
		writeJSONError(ctx, fasthttp.StatusNotFound, web.CodeNotFound, "no pending secure input request with this ref_id")
		return
	}
	var req secretRequest
	if err := decodeOwnerBody(ctx, &req, maxSecretBody, false); err != nil {
		// The decoder's message can quote the body: keep it out.
		writeJSONError(ctx, fasthttp.StatusBadRequest, web.CodeBadRequest, `the body must be {"value":"<secret>"}`)
		return
	}
	if req.Value == "" || len(req.Value) > maxSecretValue {
		writeJSONError(ctx, fasthttp.StatusBadRequest, web.CodeBadRequest, fmt.Sprintf("the value must be 1 to %d bytes", maxSecretValue))
		return
	}
	value := []byte(req.Value)
	defer clear(value)
	c, cancel := reqContext()
	defer cancel()
	err := p.secrets.Fulfil(c, ref, value)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		writeJSONError(ctx, fasthttp.StatusNotFound, web.CodeNotFound, "no pending secure input request with this ref_id")
		return
	case errors.Is(err, persistence.ErrFulfilled):
		writeJSONError(ctx, fasthttp.StatusConflict, codeConflict, "this secure input request was already answered")
		return
	case err != nil:
		writeJSONError(ctx, fasthttp.StatusInternalServerError, web.CodeInternal, "could not store the secret: "+err.Error())
		return
	}
	if err := p.audit(c, "secret_stored", map[string]any{"ref_id": ref}); err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, web.CodeInternal, err.Error())
		return
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"stored":true}`)
}

func (p *pwaAPI) pendingSecrets(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/secrets/pending" {
		writeJSONError(ctx, fasthttp.StatusNotFound, web.CodeNotFound, "no such endpoint")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	list, err := p.db.SecureInputs().Pending(c)
	if err != nil {
		writeJSONError(ctx, fasthttp.StatusInternalServerError, web.CodeInternal, err.Error())
		return
	}
	out := pendingSecrets{Requests: make([]pendingSecret, 0, len(list))}
	for _, r := range list {
		out.Requests = append(out.Requests, pendingSecret{RefID: r.RefID, Label: r.Label, InputHint: r.InputHint, Guidance: r.Guidance, CreatedAt: r.CreatedAt})
	}
	writeJSON(ctx, fasthttp.StatusOK, out)
}
