package ownerapi

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/session"
)

const (
	msgUnauthorized = "send Authorization: Bearer <owner token> (see `silas token`)"
	msgForbidden    = "only the owner may use this endpoint"
)

func TestNewRefusesIncompleteDeps(t *testing.T) {
	ctx := context.Background()
	db, err := persistence.Open(ctx, persistence.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	minter, err := session.NewMinter(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := NewDeviceRegistry(ctx, db, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	full := Deps{DB: db, OwnerToken: "t", OwnerID: "owner", Sessions: minter, Devices: reg, Vault: &fakeVault{}, Actors: &fakeActors{}}
	if _, err := New(full); err != nil {
		t.Fatalf("complete deps: %v", err)
	}
	noSkillsDir := full
	noSkillsDir.SkillsDir = ""
	if _, err := New(noSkillsDir); err != nil {
		t.Fatalf("SkillsDir is optional: %v", err)
	}
	for _, tc := range []struct {
		field string
		clear func(*Deps)
	}{
		{"DB", func(d *Deps) { d.DB = nil }},
		{"OwnerToken", func(d *Deps) { d.OwnerToken = "" }},
		{"OwnerID", func(d *Deps) { d.OwnerID = "" }},
		{"Sessions", func(d *Deps) { d.Sessions = nil }},
		{"Devices", func(d *Deps) { d.Devices = nil }},
		{"Vault", func(d *Deps) { d.Vault = nil }},
		{"Actors", func(d *Deps) { d.Actors = nil }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			d := full
			tc.clear(&d)
			api, err := New(d)
			if !errors.Is(err, ErrIncomplete) || api != nil {
				t.Fatalf("New = %v, %v; want ErrIncomplete", api, err)
			}
			if !strings.Contains(err.Error(), "Deps."+tc.field) {
				t.Errorf("error %q does not name Deps.%s", err, tc.field)
			}
		})
	}
}

// The gate, called directly on a RequestCtx: only the exact owner token
// passes; a customer's valid session token is told it is not the owner;
// everything else, forged or expired tokens included, is unauthenticated.
func TestOwnerGate(t *testing.T) {
	h := newHarness(t)
	other, err := session.NewMinter(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	expired := h.sessions.Mint("cust-1", time.Now().Add(-time.Minute))
	forged := other.Mint("cust-1", time.Now().Add(time.Hour))
	for _, tc := range []struct {
		name   string
		header string // Authorization; "" sends none
		status int
	}{
		{"owner token", "Bearer " + testOwnerToken, fasthttp.StatusOK},
		{"customer session", "Bearer " + h.customer, fasthttp.StatusForbidden},
		{"expired customer session", "Bearer " + expired, fasthttp.StatusUnauthorized},
		{"session of another secret", "Bearer " + forged, fasthttp.StatusUnauthorized},
		{"no header", "", fasthttp.StatusUnauthorized},
		{"empty bearer", "Bearer ", fasthttp.StatusUnauthorized},
		{"bare owner token", testOwnerToken, fasthttp.StatusUnauthorized},
		{"lowercase scheme", "bearer " + testOwnerToken, fasthttp.StatusUnauthorized},
		{"basic scheme", "Basic " + testOwnerToken, fasthttp.StatusUnauthorized},
		{"owner token prefix", "Bearer " + testOwnerToken[:len(testOwnerToken)-1], fasthttp.StatusUnauthorized},
		{"owner token and more", "Bearer " + testOwnerToken + "x", fasthttp.StatusUnauthorized},
		{"owner token and a space", "Bearer " + testOwnerToken + " ", fasthttp.StatusUnauthorized},
		{"two spaces", "Bearer  " + testOwnerToken, fasthttp.StatusUnauthorized},
		{"garbage", "Bearer \x00\xff not a token", fasthttp.StatusUnauthorized},
		{"session prefix only", "Bearer st1.", fasthttp.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			handler := h.api.OwnerOnly(func(ctx *fasthttp.RequestCtx) { ran = true; ctx.SetBodyString("secret state") })
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod("GET")
			ctx.Request.SetRequestURI("/devices")
			if tc.header != "" {
				ctx.Request.Header.Set("Authorization", tc.header)
			}
			handler(&ctx)
			if got := string(ctx.Response.Header.Peek("Cache-Control")); got != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", got)
			}
			r := reply{status: ctx.Response.StatusCode(), body: ctx.Response.Body(), contentType: string(ctx.Response.Header.ContentType())}
			switch tc.status {
			case fasthttp.StatusOK:
				if !ran || string(r.body) != "secret state" {
					t.Fatalf("owner refused: %d %s", r.status, r.body)
				}
			case fasthttp.StatusForbidden:
				wantError(t, r, tc.status, messages.CodeForbidden, msgForbidden)
			default:
				wantError(t, r, tc.status, messages.CodeUnauthorized, msgUnauthorized)
			}
			if tc.status != fasthttp.StatusOK && ran {
				t.Fatal("the handler ran for a caller that is not the owner")
			}
		})
	}
}

// Every owner route, over HTTP, refuses a customer and a stranger before it
// reads a body or touches anything, and answers the owner (whatever the
// answer) without a 401 or 403 from the gate.
func TestEveryOwnerRouteIsGated(t *testing.T) {
	h := newHarness(t)
	routes := h.api.Routes()
	keys := make([]string, 0, len(routes))
	for k := range routes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	owner := 0
	for _, k := range keys {
		method, prefix, _ := strings.Cut(k, " ")
		if strings.HasPrefix(prefix, "/persona/") {
			continue
		}
		owner++
		path := prefix
		if strings.HasSuffix(path, "/") {
			path += "x"
		}
		t.Run(k, func(t *testing.T) {
			wantError(t, h.do(method, path, "", `{}`), fasthttp.StatusUnauthorized, messages.CodeUnauthorized, msgUnauthorized)
			wantError(t, h.do(method, path, "wrong", `{}`), fasthttp.StatusUnauthorized, messages.CodeUnauthorized, msgUnauthorized)
			r := h.do(method, path, h.customer, `{}`)
			wantError(t, r, fasthttp.StatusForbidden, messages.CodeForbidden, msgForbidden)
			if r.cacheControl != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", r.cacheControl)
			}
			if calls := h.actors.Calls(); len(calls) != 0 {
				t.Errorf("refused callers reached the actors: %v", calls)
			}
			if n := len(h.auditEvents()); n != 0 {
				t.Errorf("refused callers wrote %d audit entries", n)
			}
		})
	}
	if owner < 20 {
		t.Fatalf("only %d owner routes: the route table lost some", owner)
	}
}

// The persona routes are the only ones a customer reaches, and only for
// its own scope, untrusted; the owner is trusted in the owner's scope.
func TestPersonaCallers(t *testing.T) {
	h := newHarness(t)
	wantError(t, h.do("GET", "/persona/state", "", ""), fasthttp.StatusUnauthorized, messages.CodeUnauthorized,
		"send Authorization: Bearer <owner token or session_token>")
	wantError(t, h.do("GET", "/persona/state", "st1.forged", ""), fasthttp.StatusUnauthorized, messages.CodeUnauthorized, "")

	var v messages.PersonaView
	decode(t, h.do("GET", "/persona/state", h.customer, ""), fasthttp.StatusOK, &v)
	if v.ScopeID != "cust-1" {
		t.Errorf("customer reached scope %q", v.ScopeID)
	}
	decode(t, h.owner("POST", "/persona/preset", `{"preset":"work"}`), fasthttp.StatusOK, &v)
	if v.ScopeID != testOwnerID {
		t.Errorf("owner reached scope %q", v.ScopeID)
	}
	h.actors.mu.Lock()
	calls := append([]personaCall(nil), h.actors.personaOp...)
	h.actors.mu.Unlock()
	want := []personaCall{
		{scope: "cust-1", kind: messages.ScopeCustomer, op: personaOpOf("state", false)},
		{scope: testOwnerID, kind: messages.ScopeOwner, op: personaOpOf("preset", true)},
	}
	want[1].op.Preset = "work"
	if len(calls) != len(want) {
		t.Fatalf("persona calls %+v", calls)
	}
	for i := range want {
		if calls[i].scope != want[i].scope || calls[i].kind != want[i].kind || calls[i].op.Kind != want[i].op.Kind ||
			calls[i].op.Trusted != want[i].op.Trusted || calls[i].op.Preset != want[i].op.Preset {
			t.Errorf("call %d = %+v, want %+v", i, calls[i], want[i])
		}
	}
}
