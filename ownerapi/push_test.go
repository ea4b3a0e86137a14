package ownerapi

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
)

func pushSubJSON(t *testing.T, endpoint string) string {
	t.Helper()
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	enc := base64.RawURLEncoding
	b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "expirationTime": nil,
		"keys": map[string]string{"p256dh": enc.EncodeToString(priv.PublicKey().Bytes()), "auth": enc.EncodeToString(auth)}})
	return string(b)
}

func TestPushRoutesOwnerOnly(t *testing.T) {
	h := newHarness(t)
	h.api.d.PushKey = "BPUBLIC"
	sub := pushSubJSON(t, "https://push.example/abc")
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/push/key", ""}, {"POST", "/push/subscribe", sub}, {"POST", "/push/unsubscribe", `{"endpoint":"https://push.example/abc"}`},
	} {
		if got := h.do(r.method, r.path, "", r.body); got.status != fasthttp.StatusUnauthorized {
			t.Errorf("%s %s without a token: %d, want 401", r.method, r.path, got.status)
		}
		if got := h.do(r.method, r.path, h.customer, r.body); got.status != fasthttp.StatusForbidden {
			t.Errorf("%s %s as a customer: %d, want 403", r.method, r.path, got.status)
		}
	}
	if n := pushCount(t, h); n != 0 {
		t.Fatalf("%d subscriptions stored by refused requests", n)
	}
}

func TestPushSubscribeAndUnsubscribe(t *testing.T) {
	h := newHarness(t)
	if r := h.owner("GET", "/push/key", ""); r.status != fasthttp.StatusServiceUnavailable {
		t.Fatalf("GET /push/key without a key: %d, want 503", r.status)
	}
	h.api.d.PushKey = "BPUBLIC"
	if r := h.owner("GET", "/push/key", ""); r.status != 200 || !strings.Contains(string(r.body), `"public_key":"BPUBLIC"`) {
		t.Fatalf("GET /push/key: %d %s", r.status, r.body)
	}
	sub := pushSubJSON(t, "https://push.example/abc")
	if r := h.owner("POST", "/push/subscribe", sub); r.status != fasthttp.StatusCreated {
		t.Fatalf("subscribe: %d %s", r.status, r.body)
	}
	if r := h.owner("POST", "/push/subscribe", sub); r.status != fasthttp.StatusOK {
		t.Fatalf("subscribe again: %d %s, want 200 (replaced)", r.status, r.body)
	}
	if n := pushCount(t, h); n != 1 {
		t.Fatalf("%d subscriptions, want 1", n)
	}
	r := h.owner("POST", "/push/unsubscribe", `{"endpoint":"https://push.example/abc"}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"changed":true`) {
		t.Fatalf("unsubscribe: %d %s", r.status, r.body)
	}
	if n := pushCount(t, h); n != 0 {
		t.Fatalf("%d subscriptions after unsubscribe", n)
	}
	entries, err := h.db.Audit().Range(context.Background(), 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(string(e.Data), "/abc") {
			t.Errorf("audit %s names the endpoint's path: %s", e.Event, e.Data)
		}
	}
}

func TestPushSubscribeBadInput(t *testing.T) {
	h := newHarness(t)
	h.api.d.PushKey = "BPUBLIC"
	good := pushSubJSON(t, "https://push.example/abc")
	var g map[string]any
	_ = json.Unmarshal([]byte(good), &g)
	keys := g["keys"].(map[string]any)
	with := func(mut func(m map[string]any)) string {
		m := map[string]any{"endpoint": g["endpoint"], "keys": map[string]any{"p256dh": keys["p256dh"], "auth": keys["auth"]}}
		mut(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	cases := map[string]string{
		"empty body":    "",
		"unknown field": with(func(m map[string]any) { m["extra"] = 1 }),
		"no endpoint":   with(func(m map[string]any) { delete(m, "endpoint") }),
		"http remote":   with(func(m map[string]any) { m["endpoint"] = "http://push.example/abc" }),
		"file scheme":   with(func(m map[string]any) { m["endpoint"] = "file:///etc/passwd" }),
		"credentials":   with(func(m map[string]any) { m["endpoint"] = "https://u:p@push.example/abc" }),
		"long endpoint": with(func(m map[string]any) { m["endpoint"] = "https://push.example/" + strings.Repeat("a", 2100) }),
		"p256dh not point": with(func(m map[string]any) {
			m["keys"].(map[string]any)["p256dh"] = base64.RawURLEncoding.EncodeToString(make([]byte, 65))
		}),
		"auth too short":  with(func(m map[string]any) { m["keys"].(map[string]any)["auth"] = "AAAA" }),
		"auth not base64": with(func(m map[string]any) { m["keys"].(map[string]any)["auth"] = "!!!!" }),
		"huge body":       `{"endpoint":"` + strings.Repeat("a", 5000) + `"}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			wantError(t, h.owner("POST", "/push/subscribe", body), fasthttp.StatusBadRequest, messages.CodeBadRequest, "")
		})
	}
	wantError(t, h.owner("POST", "/push/unsubscribe", `{"endpoint":""}`), fasthttp.StatusBadRequest, messages.CodeBadRequest, "")
	if n := pushCount(t, h); n != 0 {
		t.Fatalf("%d subscriptions stored from bad input", n)
	}
}

func pushCount(t *testing.T, h *harness) int {
	t.Helper()
	subs, err := h.db.PushSubscriptions().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(subs)
}
