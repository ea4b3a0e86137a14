package ownerapi

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/messages"
)

func TestConnectionsBadInput(t *testing.T) {
	h := newHarness(t)
	const secretHint = "looks like a secret; settings are stored and shown in plain text. Leave it out: the setup asks for secrets through the secure form"
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     messages.Code
		msg                      string
	}{
		{"propose: empty body", "POST", "/connections", ``, 400, messages.CodeBadRequest, "the body is empty; send a JSON object"},
		{"propose: body too large", "POST", "/connections", `{"skill":"` + strings.Repeat("s", maxConnectionBody) + `"}`, 400, messages.CodeBadRequest,
			fmt.Sprintf("the body is %d bytes; the limit is %d", maxConnectionBody+12, maxConnectionBody)},
		{"propose: unknown field", "POST", "/connections", `{"skill":"oauth-device","token":"t"}`, 400, messages.CodeBadRequest,
			`the body must be a JSON object of the documented fields: json: unknown field "token"`},
		{"propose: no skill", "POST", "/connections", `{"skill":" ","settings":{}}`, 400, messages.CodeBadRequest,
			`name the connection skill: {"skill":"oauth-device","settings":{...}}`},
		{"propose: secret setting", "POST", "/connections", `{"skill":"api-key","settings":{"api_key":"sk-123"}}`, 400, messages.CodeBadRequest,
			"settings.api_key " + secretHint},
		{"propose: nested secret setting", "POST", "/connections", `{"skill":"oauth-device","settings":{"auth":{"client_secret":"s"}}}`, 400, messages.CodeBadRequest,
			"settings.auth.client_secret " + secretHint},
		{"propose: bad permission", "POST", "/connections", `{"skill":"oauth-device","permissions":["observe","admin"]}`, 400, messages.CodeBadRequest,
			`permission "admin": use observe, draft, act or manage`},
		{"list: longer path", "GET", "/connectionsx", ``, 404, messages.CodeNotFound, "no such endpoint"},
		{"check: no suffix", "POST", "/connections/c-1", ``, 404, messages.CodeNotFound, "no such endpoint; POST /connections/{id}/check runs a health check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, h.owner(tc.method, tc.path, tc.body), tc.status, tc.code, tc.msg)
		})
	}
	if calls := h.actors.Calls(); len(calls) != 0 {
		t.Fatalf("bad input reached the actors: %v", calls)
	}
}

// Settings that name a URL, a type or a scope are not secrets even when
// they contain "token" or "key".
func TestSecretSetting(t *testing.T) {
	for _, tc := range []struct {
		settings map[string]any
		want     string
	}{
		{map[string]any{"token_url": "https://x", "scope": "read", "key_type": "rsa"}, ""},
		{map[string]any{"password": "p"}, "password"},
		{map[string]any{"oauth": map[string]any{"endpoint": "https://x", "refresh_token": "r"}}, "oauth.refresh_token"},
		{nil, ""},
	} {
		if got := secretSetting(tc.settings); got != tc.want {
			t.Errorf("secretSetting(%v) = %q, want %q", tc.settings, got, tc.want)
		}
	}
}

func TestConnectionErrors(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name       string
		proposeErr error
		status     int
		code       messages.Code
	}{
		{"not a connection skill", fmt.Errorf("coding: %w", actors.ErrNotConnectionSkill), 400, messages.CodeBadRequest},
		{"invalid connection", fmt.Errorf("domain: %w", messages.ErrInvalidConnection), 400, messages.CodeBadRequest},
		{"anything else", errors.New("actor stopped"), 500, messages.CodeInternal},
	} {
		t.Run("propose: "+tc.name, func(t *testing.T) {
			h.actors.set(func(f *fakeActors) { f.proposeErr = tc.proposeErr })
			wantError(t, h.owner("POST", "/connections", `{"skill":"oauth-device"}`), tc.status, tc.code, tc.proposeErr.Error())
		})
	}
	for _, tc := range []struct {
		err    error
		status int
		code   messages.Code
	}{
		{fmt.Errorf("c-1: %w", actors.ErrNoSuchConnection), 404, messages.CodeNotFound},
		{fmt.Errorf("c-1: %w", actors.ErrConnectionBusy), 409, codeConflict},
		{errors.New("actor stopped"), 500, messages.CodeInternal},
	} {
		t.Run("check and remove: "+tc.err.Error(), func(t *testing.T) {
			h.actors.set(func(f *fakeActors) { f.connErr = tc.err })
			wantError(t, h.owner("POST", "/connections/c-1/check", ""), tc.status, tc.code, tc.err.Error())
			wantError(t, h.owner("DELETE", "/connections/c-1", ""), tc.status, tc.code, tc.err.Error())
		})
	}
	h.actors.set(func(f *fakeActors) { f.connsErr = errors.New("actor stopped") })
	wantError(t, h.owner("GET", "/connections", ""), 500, messages.CodeInternal, "actor stopped")
	wantError(t, h.owner("GET", "/connections/c-1", ""), 500, messages.CodeInternal, "actor stopped")
}

func TestConnectionsAnswers(t *testing.T) {
	h := newHarness(t)
	h.actors.set(func(f *fakeActors) {
		f.conns = []messages.ConnectionSummary{{ConnectionID: "c-1", Name: "GitHub"}, {ConnectionID: "c-2", Name: "Notion"}}
		f.propose = messages.ConnectionSummary{ConnectionID: "c-3", Name: "New"}
	})
	var list ConnectionsResponse
	decode(t, h.owner("GET", "/connections", ""), 200, &list)
	if len(list.Connections) != 2 {
		t.Fatalf("list %+v", list)
	}
	var one messages.ConnectionSummary
	decode(t, h.owner("GET", "/connections/c-2", ""), 200, &one)
	if one.Name != "Notion" {
		t.Fatalf("show %+v", one)
	}
	wantError(t, h.owner("GET", "/connections/c-9", ""), 404, messages.CodeNotFound, `no connection "c-9"; `+"`silas connections list` shows them")
	decode(t, h.owner("POST", "/connections", `{"skill":"oauth-device","name":"New","settings":{"client_id":"abc"},"permissions":["draft"]}`), 202, &one)
	if one.ConnectionID != "c-3" {
		t.Fatalf("proposed %+v", one)
	}
	h.actors.mu.Lock()
	p := h.actors.proposals
	h.actors.mu.Unlock()
	if len(p) != 1 || p[0].Skill != "oauth-device" || p[0].Settings["client_id"] != "abc" || !slices.Equal(p[0].Permissions, []messages.ConnectionPermission{messages.PermissionDraft}) {
		t.Fatalf("proposal %+v", p)
	}
	decode(t, h.owner("POST", "/connections/c-1/check", ""), 200, &one)
	decode(t, h.owner("DELETE", "/connections/c-2", ""), 200, &one)
	calls := h.actors.Calls()
	if !slices.Contains(calls, "CheckConnection c-1") || !slices.Contains(calls, "RemoveConnection c-2") {
		t.Fatalf("calls %v", calls)
	}
}
