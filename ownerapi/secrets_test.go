package ownerapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

const testSecret = "hunter2-very-secret-value"

func TestStoreSecretBadInput(t *testing.T) {
	h := newHarness(t)
	const noRef = "no pending secure input request with this ref_id"
	const shape = `the body must be {"value":"<secret>"}`
	for _, tc := range []struct {
		name, path, body string
		status           int
		code             messages.Code
		msg              string
	}{
		{"ref starts with a dot", "/secrets/.hidden", `{"value":"x"}`, 404, messages.CodeNotFound, noRef},
		{"ref with a slash", "/secrets/a/b", `{"value":"x"}`, 404, messages.CodeNotFound, noRef},
		{"empty ref", "/secrets/", `{"value":"x"}`, 404, messages.CodeNotFound, noRef},
		{"ref too long", "/secrets/" + strings.Repeat("r", 129), `{"value":"x"}`, 404, messages.CodeNotFound, noRef},
		{"not JSON", "/secrets/ref-1", testSecret, 400, messages.CodeBadRequest, shape},
		{"unknown field quoting the secret", "/secrets/ref-1", `{"` + testSecret + `":"x"}`, 400, messages.CodeBadRequest, shape},
		{"value of the wrong type", "/secrets/ref-1", `{"value":["` + testSecret + `"]}`, 400, messages.CodeBadRequest, shape},
		{"trailing data", "/secrets/ref-1", `{"value":"x"}"` + testSecret + `"`, 400, messages.CodeBadRequest, shape},
		{"empty body", "/secrets/ref-1", ``, 400, messages.CodeBadRequest, shape},
		{"empty value", "/secrets/ref-1", `{"value":""}`, 400, messages.CodeBadRequest, fmt.Sprintf("the value must be 1 to %d bytes", maxSecretValue)},
		{"value too long", "/secrets/ref-1", `{"value":"` + strings.Repeat("v", maxSecretValue+1) + `"}`, 400, messages.CodeBadRequest,
			fmt.Sprintf("the value must be 1 to %d bytes", maxSecretValue)},
		{"body too long", "/secrets/ref-1", `{"value":"` + strings.Repeat("v", maxSecretBody) + `"}`, 400, messages.CodeBadRequest, shape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.owner("POST", tc.path, tc.body)
			wantError(t, r, tc.status, tc.code, tc.msg)
			if bytes.Contains(r.body, []byte(testSecret)) {
				t.Fatalf("the answer quotes the value: %s", r.body)
			}
		})
	}
	if _, ok := h.vault.value("ref-1"); ok {
		t.Fatal("a refused value reached the vault")
	}
	if calls := h.actors.Calls(); len(calls) != 0 {
		t.Fatalf("refused values were announced: %v", calls)
	}
}

func TestStoreSecretVaultErrors(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		err    error
		status int
		code   messages.Code
		msg    string
	}{
		{fmt.Errorf("fulfil: %w", persistence.ErrNotFound), 404, messages.CodeNotFound, "no pending secure input request with this ref_id"},
		{fmt.Errorf("fulfil: %w", persistence.ErrFulfilled), 409, codeConflict, "this secure input request was already answered"},
		{errors.New("keystore locked"), 500, messages.CodeInternal, "could not store the secret: keystore locked"},
	} {
		t.Run(tc.msg, func(t *testing.T) {
			h.vault.mu.Lock()
			h.vault.err = tc.err
			h.vault.mu.Unlock()
			wantError(t, h.owner("POST", "/secrets/ref-1", `{"value":"`+testSecret+`"}`), tc.status, tc.code, tc.msg)
		})
	}
	if calls := h.actors.Calls(); len(calls) != 0 {
		t.Fatalf("unstored values were announced: %v", calls)
	}
	if ev := h.auditEvents(); len(ev) != 0 {
		t.Fatalf("unstored values were audited: %+v", ev)
	}
}

// A stored value is answered with exactly {"stored":true}, announced to
// the actors, audited by ref alone, and wiped from the request buffer.
func TestStoreSecret(t *testing.T) {
	h := newHarness(t)
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod("POST")
	ctx.Request.SetRequestURI("/secrets/ref-1")
	ctx.Request.Header.Set("Authorization", "Bearer "+testOwnerToken)
	ctx.Request.SetBodyString(`{"value":"` + testSecret + `"}`)
	route(h.api.Routes())(&ctx)
	if got := string(ctx.Response.Body()); ctx.Response.StatusCode() != 200 || got != `{"stored":true}` {
		t.Fatalf("answer %d %s", ctx.Response.StatusCode(), got)
	}
	if bytes.Contains(ctx.Request.Body(), []byte(testSecret)) {
		t.Error("the value outlived the request in its body buffer")
	}
	if v, ok := h.vault.value("ref-1"); !ok || v != testSecret {
		t.Fatalf("vault holds %q, %v", v, ok)
	}
	if calls := h.actors.Calls(); len(calls) != 1 || calls[0] != "SecretStored" || h.actors.stored[0] != "ref-1" {
		t.Fatalf("actors told %v %v", calls, h.actors.stored)
	}
	ev := h.auditEvents()
	if len(ev) != 1 || ev[0].Event != "secret_stored" || string(ev[0].Data) != `{"ref_id":"ref-1"}` {
		t.Fatalf("audit %+v", ev)
	}
}

func TestPendingSecrets(t *testing.T) {
	h := newHarness(t)
	var out PendingSecrets
	decode(t, h.owner("GET", "/secrets/pending", ""), 200, &out)
	if out.Requests == nil || len(out.Requests) != 0 {
		t.Fatalf("no requests must be an empty list, got %s", mustJSON(out))
	}
	ctx := context.Background()
	for _, ref := range []string{"ref-a", "ref-b"} {
		if err := h.db.SecureInputs().Create(ctx, persistence.SecureInputRequest{RefID: ref, Label: "token " + ref, InputHint: "paste it"}); err != nil {
			t.Fatal(err)
		}
	}
	decode(t, h.owner("GET", "/secrets/pending", ""), 200, &out)
	if len(out.Requests) != 2 || out.Requests[0].RefID != "ref-a" || out.Requests[1].Label != "token ref-b" || out.Requests[0].InputHint != "paste it" {
		t.Fatalf("pending %s", mustJSON(out))
	}
	// GET /secrets/{ref} is not a route: values are write-only.
	if _, ok := h.api.Routes()["GET /secrets/"]; ok {
		t.Fatal("secure-input values can be read back over HTTP")
	}
}
