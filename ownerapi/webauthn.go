package ownerapi

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/devices"
	"github.com/silas-ai/silas/runtime/review"
)

// The owner's security keys (spec 0.5.2's irreversible rung): the app
// registers a WebAuthn credential here, and asks here for the challenge of
// the card it is about to approve with it. The relying party is the host
// the app was opened at (review.RelyingPartyFor); the ceremonies'
// server-side state is kept in Badger until answered or expired.

// maxWebAuthnBody bounds a ceremony's request body: a registration with
// an attestation certificate chain is a few KiB.
const maxWebAuthnBody = 64 << 10

// Request and response bodies of the WebAuthn endpoints
// (docs/owner-api.md).
type (
	// WebAuthnRegisterOptionsRequest is the body of POST
	// /webauthn/register/options (may be empty).
	WebAuthnRegisterOptionsRequest struct {
		Name string `json:"name"`
	}
	// WebAuthnOptions answers an options request: the options for
	// navigator.credentials.create or .get ({"publicKey": ...}, binary
	// fields base64url) and, for a registration, the ceremony to name
	// when it is finished.
	WebAuthnOptions struct {
		CeremonyID string          `json:"ceremony_id,omitempty"`
		Options    json.RawMessage `json:"options"`
		ExpiresAt  time.Time       `json:"expires_at"`
	}
	// WebAuthnRegisterRequest is the body of POST /webauthn/register: the
	// ceremony, the owner's label and the PublicKeyCredential the browser
	// made, as JSON.
	WebAuthnRegisterRequest struct {
		CeremonyID string          `json:"ceremony_id"`
		Name       string          `json:"name"`
		Credential json.RawMessage `json:"credential"`
	}
	// WebAuthnApproveOptionsRequest is the body of POST
	// /webauthn/approve/options: the approval request the assertion will
	// confirm. A new challenge for a card replaces the previous one.
	WebAuthnApproveOptionsRequest struct {
		RequestID string `json:"request_id"`
	}
	// WebAuthnCredential is a registered key as the API shows it.
	WebAuthnCredential struct {
		ID         string     `json:"id"` // base64url credential id
		Name       string     `json:"name"`
		RPID       string     `json:"rp_id"`
		AddedAt    time.Time  `json:"added_at"`
		LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	}
	// WebAuthnCredentialsResponse answers GET /webauthn/credentials.
	WebAuthnCredentialsResponse struct {
		Credentials []WebAuthnCredential `json:"credentials"`
	}
	// WebAuthnCredentialResponse answers a registration or a removal.
	WebAuthnCredentialResponse struct {
		Credential WebAuthnCredential `json:"credential"`
	}
)

func viewCredential(c persistence.WebAuthnCredential) WebAuthnCredential {
	return WebAuthnCredential{ID: base64.RawURLEncoding.EncodeToString(c.ID), Name: c.Name, RPID: c.RPID, AddedAt: c.AddedAt, LastUsedAt: c.LastUsedAt}
}

func (a *API) webauthnRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{
		"GET /webauthn/credentials": a.listCredentials,
		"POST /webauthn/":           a.webauthnPost,
	}
}

// webauthnPost serves the POST routes under /webauthn/.
func (a *API) webauthnPost(ctx *fasthttp.RequestCtx) {
	switch p := string(ctx.Path()); {
	case p == "/webauthn/register/options":
		a.registerOptions(ctx)
	case p == "/webauthn/register":
		a.register(ctx)
	case p == "/webauthn/approve/options":
		a.approveOptions(ctx)
	case strings.HasPrefix(p, "/webauthn/credentials/") && strings.HasSuffix(p, "/remove"):
		a.removeCredential(ctx)
	default:
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint; see docs/owner-api.md (WebAuthn)")
	}
}

// relyingParty derives the relying party from the request, answering the
// error itself when it cannot.
func relyingParty(ctx *fasthttp.RequestCtx) (review.RelyingParty, bool) {
	rp, err := review.RelyingPartyFor(string(ctx.Host()), string(ctx.Request.Header.Peek("Origin")))
	if err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return review.RelyingParty{}, false
	}
	return rp, true
}

func (a *API) credentials(ctx *fasthttp.RequestCtx) ([]persistence.WebAuthnCredential, bool) {
	c, cancel := reqContext()
	defer cancel()
	list, err := a.d.DB.WebAuthn().Credentials(c)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, "read the security keys: "+err.Error()+"; try again")
		return nil, false
	}
	return list, true
}

// reviewCredentials converts stored credentials for runtime/review.
func reviewCredentials(list []persistence.WebAuthnCredential) []review.Credential {
	out := make([]review.Credential, 0, len(list))
	for _, c := range list {
		out = append(out, review.Credential{ID: c.ID, RPID: c.RPID, Name: c.Name, AddedAt: c.AddedAt, Record: c.Record})
	}
	return out
}

func (a *API) listCredentials(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/webauthn/credentials" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	list, ok := a.credentials(ctx)
	if !ok {
		return
	}
	out := WebAuthnCredentialsResponse{Credentials: make([]WebAuthnCredential, 0, len(list))}
	for _, c := range list {
		out.Credentials = append(out.Credentials, viewCredential(c))
	}
	WriteJSON(ctx, fasthttp.StatusOK, out)
}

func (a *API) registerOptions(ctx *fasthttp.RequestCtx) {
	var req WebAuthnRegisterOptionsRequest
	if err := decodeOwnerBody(ctx, &req, maxWebAuthnBody, true); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	rp, ok := relyingParty(ctx)
	if !ok {
		return
	}
	list, ok := a.credentials(ctx)
	if !ok {
		return
	}
	opts, sess, err := review.BeginRegistration(rp, a.d.OwnerID, reviewCredentials(list))
	if err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	id := base64.RawURLEncoding.EncodeToString(raw[:])
	if !a.putCeremony(ctx, persistence.CeremonyRegister, id, sess) {
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, WebAuthnOptions{CeremonyID: id, Options: opts, ExpiresAt: time.Now().Add(review.CeremonyTimeout).UTC()})
}

func (a *API) putCeremony(ctx *fasthttp.RequestCtx, purpose, ref string, sess review.Session) bool {
	c, cancel := reqContext()
	defer cancel()
	now := time.Now()
	err := a.d.DB.WebAuthn().PutCeremony(c, purpose, ref, persistence.WebAuthnCeremony{Session: sess, ExpiresAt: now.Add(review.CeremonyTimeout)}, now)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, "record the challenge: "+err.Error()+"; try again")
		return false
	}
	return true
}

func (a *API) register(ctx *fasthttp.RequestCtx) {
	var req WebAuthnRegisterRequest
	if err := decodeOwnerBody(ctx, &req, maxWebAuthnBody, false); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = "security key"
	}
	if err := devices.CheckName(name); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	if req.CeremonyID == "" || len(req.Credential) == 0 {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, "send ceremony_id from POST /webauthn/register/options and the credential navigator.credentials.create made")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	now := time.Now()
	cer, err := a.d.DB.WebAuthn().TakeCeremony(c, persistence.CeremonyRegister, req.CeremonyID, now)
	switch {
	case errors.Is(err, persistence.ErrNotFound), errors.Is(err, persistence.ErrInvalid):
		WriteError(ctx, fasthttp.StatusForbidden, messages.CodeForbidden, "this registration is unknown, finished or expired: start again from Device > Security keys")
		return
	case err != nil:
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	cred, err := review.FinishRegistration(cer.Session, a.d.OwnerID, name, req.Credential, now)
	if err != nil {
		_ = a.audit(c, "webauthn_registration_refused", map[string]any{"error": err.Error()})
		WriteError(ctx, fasthttp.StatusForbidden, messages.CodeForbidden, err.Error()+"; start the registration again")
		return
	}
	stored := persistence.WebAuthnCredential{ID: cred.ID, RPID: cred.RPID, Name: cred.Name, AddedAt: cred.AddedAt, Record: cred.Record}
	switch err := a.d.DB.WebAuthn().AddCredential(c, stored); {
	case errors.Is(err, persistence.ErrCredentialExists):
		WriteError(ctx, fasthttp.StatusConflict, codeConflict, "this security key is already registered; use it as it is")
		return
	case err != nil:
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	view := viewCredential(stored)
	if err := a.audit(c, "webauthn_registered", map[string]any{"credential_id": view.ID, "name": view.Name, "rp_id": view.RPID}); err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	WriteJSON(ctx, fasthttp.StatusCreated, WebAuthnCredentialResponse{Credential: view})
}

func (a *API) approveOptions(ctx *fasthttp.RequestCtx) {
	var req WebAuthnApproveOptionsRequest
	if err := decodeOwnerBody(ctx, &req, maxWebAuthnBody, false); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	if !validRequestID(req.RequestID) {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, "request_id must be the request_id of the card to approve")
		return
	}
	rp, ok := relyingParty(ctx)
	if !ok {
		return
	}
	list, ok := a.credentials(ctx)
	if !ok {
		return
	}
	opts, sess, err := review.BeginAssertion(rp, a.d.OwnerID, reviewCredentials(list))
	switch {
	case errors.Is(err, review.ErrNoCredential):
		// 409: the owner's state, not the request, is what must change.
		WriteError(ctx, fasthttp.StatusConflict, codeConflict, err.Error())
		return
	case err != nil:
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	if !a.putCeremony(ctx, persistence.CeremonyApprove, req.RequestID, sess) {
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, WebAuthnOptions{Options: opts, ExpiresAt: time.Now().Add(review.CeremonyTimeout).UTC()})
}

// validRequestID accepts what the web channel accepts as a request_id.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// removeCredential serves POST /webauthn/credentials/{id}/remove.
func (a *API) removeCredential(ctx *fasthttp.RequestCtx) {
	enc := strings.TrimSuffix(strings.TrimPrefix(string(ctx.Path()), "/webauthn/credentials/"), "/remove")
	id, err := base64.RawURLEncoding.DecodeString(enc)
	if enc == "" || err != nil {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such security key; list them with GET /webauthn/credentials")
		return
	}
	c, cancel := reqContext()
	defer cancel()
	got, err := a.d.DB.WebAuthn().RemoveCredential(c, id)
	switch {
	case errors.Is(err, persistence.ErrNotFound), errors.Is(err, persistence.ErrInvalid):
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, fmt.Sprintf("no security key %q; list them with GET /webauthn/credentials", enc))
		return
	case err != nil:
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	view := viewCredential(got)
	if err := a.audit(c, "webauthn_removed", map[string]any{"credential_id": view.ID, "name": view.Name, "rp_id": view.RPID}); err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, WebAuthnCredentialResponse{Credential: view})
}
