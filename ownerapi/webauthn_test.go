package ownerapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/review/softkey"
)

// The harness sends every request to http://silas.test; the app's page
// there is this origin.
const appOrigin = "http://silas.test"

func (h *harness) webauthn(path, body, origin string) reply {
	h.t.Helper()
	return h.doHeader("POST", path, body, map[string]string{"Authorization": bearer(testOwnerToken), "Origin": origin})
}

// registerKey registers key through the endpoints and returns its view.
func (h *harness) registerKey(key *softkey.Key, name string) WebAuthnCredential {
	h.t.Helper()
	var opts WebAuthnOptions
	decode(h.t, h.webauthn("/webauthn/register/options", "", appOrigin), fasthttp.StatusOK, &opts)
	if opts.CeremonyID == "" || !strings.Contains(string(opts.Options), `"rp":{"name":"Silas","id":"silas.test"}`) {
		h.t.Fatalf("registration options %+v", opts)
	}
	cred, err := key.Create(opts.Options, appOrigin)
	if err != nil {
		h.t.Fatal(err)
	}
	body, _ := json.Marshal(WebAuthnRegisterRequest{CeremonyID: opts.CeremonyID, Name: name, Credential: cred})
	var out WebAuthnCredentialResponse
	decode(h.t, h.webauthn("/webauthn/register", string(body), appOrigin), fasthttp.StatusCreated, &out)
	return out.Credential
}

func TestWebAuthnRegisterListRemove(t *testing.T) {
	h := newHarness(t)
	key, err := softkey.New()
	if err != nil {
		t.Fatal(err)
	}
	got := h.registerKey(key, "yubikey")
	if got.Name != "yubikey" || got.RPID != "silas.test" || got.ID == "" {
		t.Fatalf("registered %+v", got)
	}
	var list WebAuthnCredentialsResponse
	decode(t, h.owner("GET", "/webauthn/credentials", ""), fasthttp.StatusOK, &list)
	if len(list.Credentials) != 1 || list.Credentials[0] != got {
		t.Fatalf("list %+v", list)
	}

	// The same authenticator again: excluded by the options, refused here.
	var opts WebAuthnOptions
	decode(t, h.webauthn("/webauthn/register/options", `{"name":"again"}`, appOrigin), fasthttp.StatusOK, &opts)
	if !strings.Contains(string(opts.Options), "excludeCredentials") {
		t.Errorf("the options do not exclude the registered key: %s", opts.Options)
	}
	cred, _ := key.Create(opts.Options, appOrigin)
	body, _ := json.Marshal(WebAuthnRegisterRequest{CeremonyID: opts.CeremonyID, Credential: cred})
	wantError(t, h.webauthn("/webauthn/register", string(body), appOrigin), fasthttp.StatusConflict, codeConflict, "this security key is already registered; use it as it is")

	// An assertion challenge for a card, once a key exists.
	var assert WebAuthnOptions
	decode(t, h.webauthn("/webauthn/approve/options", `{"request_id":"req-1"}`, appOrigin), fasthttp.StatusOK, &assert)
	if !strings.Contains(string(assert.Options), `"rpId":"silas.test"`) || !strings.Contains(string(assert.Options), `"allowCredentials"`) {
		t.Errorf("assertion options %s", assert.Options)
	}

	var removed WebAuthnCredentialResponse
	decode(t, h.webauthn("/webauthn/credentials/"+got.ID+"/remove", "", appOrigin), fasthttp.StatusOK, &removed)
	wantErrorContains(t, h.webauthn("/webauthn/credentials/"+got.ID+"/remove", "", appOrigin), fasthttp.StatusNotFound, messages.CodeNotFound, "no security key")
	decode(t, h.owner("GET", "/webauthn/credentials", ""), fasthttp.StatusOK, &list)
	if len(list.Credentials) != 0 {
		t.Errorf("after the removal: %+v", list)
	}
	var events []string
	for _, e := range h.auditEvents() {
		events = append(events, e.Event)
	}
	if strings.Join(events, ",") != "webauthn_registered,webauthn_removed" {
		t.Errorf("audit %v", events)
	}
}

// TestWebAuthnRegistrationAttacks: registrations that did not come from
// the owner's authenticator on the app's own page store nothing.
func TestWebAuthnRegistrationAttacks(t *testing.T) {
	h := newHarness(t)
	key, _ := softkey.New()
	begin := func() WebAuthnOptions {
		var opts WebAuthnOptions
		decode(t, h.webauthn("/webauthn/register/options", "", appOrigin), fasthttp.StatusOK, &opts)
		return opts
	}
	finish := func(ceremony string, cred []byte) reply {
		body, _ := json.Marshal(WebAuthnRegisterRequest{CeremonyID: ceremony, Credential: cred})
		return h.webauthn("/webauthn/register", string(body), appOrigin)
	}
	opts := begin()
	evil, _ := key.Create(opts.Options, "http://evil.example")
	wantErrorContains(t, finish(opts.CeremonyID, evil), fasthttp.StatusForbidden, messages.CodeForbidden, "start the registration again")
	// The ceremony is spent: its challenge answers nothing more.
	good, _ := key.Create(opts.Options, appOrigin)
	wantErrorContains(t, finish(opts.CeremonyID, good), fasthttp.StatusForbidden, messages.CodeForbidden, "unknown, finished or expired")
	wantErrorContains(t, finish("made-up", good), fasthttp.StatusForbidden, messages.CodeForbidden, "unknown, finished or expired")

	// One ceremony's answer under another ceremony's id.
	a, b := begin(), begin()
	forA, _ := key.Create(a.Options, appOrigin)
	wantErrorContains(t, finish(b.CeremonyID, forA), fasthttp.StatusForbidden, messages.CodeForbidden, "start the registration again")

	var list WebAuthnCredentialsResponse
	decode(t, h.owner("GET", "/webauthn/credentials", ""), fasthttp.StatusOK, &list)
	if len(list.Credentials) != 0 {
		t.Fatalf("a refused registration stored %+v", list)
	}
}

func TestWebAuthnBadInput(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, path, body, origin string
		status                   int
		code                     messages.Code
		part                     string
	}{
		{"no Origin", "/webauthn/register/options", "", "", 400, messages.CodeBadRequest, "no Origin header"},
		{"another site's page", "/webauthn/register/options", "", "http://evil.example", 400, messages.CodeBadRequest, "is not this server's host"},
		{"unknown field", "/webauthn/register/options", `{"nmae":"x"}`, appOrigin, 400, messages.CodeBadRequest, "unknown field"},
		{"register without a ceremony", "/webauthn/register", `{"credential":{}}`, appOrigin, 400, messages.CodeBadRequest, "ceremony_id"},
		{"register with a bad name", "/webauthn/register", `{"ceremony_id":"x","name":"a\u0007b","credential":{}}`, appOrigin, 400, messages.CodeBadRequest, ""},
		{"approve without a request", "/webauthn/approve/options", `{}`, appOrigin, 400, messages.CodeBadRequest, "request_id"},
		{"approve with a bad request id", "/webauthn/approve/options", `{"request_id":"a/b"}`, appOrigin, 400, messages.CodeBadRequest, "request_id"},
		{"approve with no key registered", "/webauthn/approve/options", `{"request_id":"req-1"}`, appOrigin, 409, codeConflict, "Device > Security keys"},
		{"unknown path", "/webauthn/nope", ``, appOrigin, 404, messages.CodeNotFound, "no such endpoint"},
		{"remove a key nobody has", "/webauthn/credentials/AAAA/remove", ``, appOrigin, 404, messages.CodeNotFound, "no security key"},
		{"remove a key id that is not base64url", "/webauthn/credentials/!!/remove", ``, appOrigin, 404, messages.CodeNotFound, "no such security key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.webauthn(tc.path, tc.body, tc.origin)
			if tc.part == "" {
				wantError(t, r, tc.status, tc.code, "")
				return
			}
			wantErrorContains(t, r, tc.status, tc.code, tc.part)
		})
	}
	// A customer's session token never reaches the key endpoints.
	r := h.doHeader("POST", "/webauthn/register/options", "", map[string]string{"Authorization": bearer(h.customer), "Origin": appOrigin})
	if r.status != fasthttp.StatusForbidden {
		t.Errorf("a customer got %d", r.status)
	}
	if r := h.doHeader("GET", "/webauthn/credentials", "", nil); r.status != fasthttp.StatusUnauthorized {
		t.Errorf("no token got %d", r.status)
	}
}
