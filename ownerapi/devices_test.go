package ownerapi

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
)

func TestDeviceBadInput(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     messages.Code
		msg                      string // exact, or "" to check only the code
	}{
		{"code: body too large", "POST", "/devices/codes", `{"name":"` + strings.Repeat("a", maxDeviceBody) + `"}`, 400, messages.CodeBadRequest,
			fmt.Sprintf("the body is %d bytes; the limit is %d", maxDeviceBody+11, maxDeviceBody)},
		{"code: unknown field", "POST", "/devices/codes", `{"nmae":"phone"}`, 400, messages.CodeBadRequest,
			`the body must be a JSON object of the documented fields: json: unknown field "nmae"`},
		{"code: two objects", "POST", "/devices/codes", `{}{}`, 400, messages.CodeBadRequest, "the body must hold one JSON object"},
		{"code: ttl too short", "POST", "/devices/codes", `{"ttl_seconds":59}`, 400, messages.CodeBadRequest, "ttl_seconds must be between 60 and 86400"},
		{"code: ttl too long", "POST", "/devices/codes", `{"ttl_seconds":86401}`, 400, messages.CodeBadRequest, "ttl_seconds must be between 60 and 86400"},
		{"code: negative ttl", "POST", "/devices/codes", `{"ttl_seconds":-600}`, 400, messages.CodeBadRequest, "ttl_seconds must be between 60 and 86400"},
		{"code: control character in name", "POST", "/devices/codes", `{"name":"ph\u0007one"}`, 400, messages.CodeBadRequest, ""},
		{"code: name too long", "POST", "/devices/codes", `{"name":"` + strings.Repeat("x", 65) + `"}`, 400, messages.CodeBadRequest, ""},
		{"code: wrong path", "POST", "/devices/codes/extra", `{}`, 404, messages.CodeNotFound, "no such endpoint"},
		{"enroll: empty body", "POST", "/devices/enroll", ``, 400, messages.CodeBadRequest, "the body is empty; send a JSON object"},
		{"enroll: bad key", "POST", "/devices/enroll", `{"code":"ABCDE-FGHJK","public_key":"c2hvcnQ="}`, 400, messages.CodeBadRequest,
			"devices: public key must be base64 of a raw 32-byte Ed25519 key"},
		{"enroll: malformed code", "POST", "/devices/enroll", `{"code":"nope","public_key":"` + newKey(t) + `"}`, 403, messages.CodeForbidden,
			"the enrolment code is unknown, used or expired: run `silas devices add` for a new one"},
		{"enroll: unknown code", "POST", "/devices/enroll", `{"code":"ABCDE-FGHJK","public_key":"` + newKey(t) + `"}`, 403, messages.CodeForbidden,
			"the enrolment code is unknown, used or expired: run `silas devices add` for a new one"},
		{"list: wrong path", "GET", "/devicesx", ``, 404, messages.CodeNotFound, "no such endpoint"},
		{"revoke: no id", "POST", "/devices//revoke", ``, 404, messages.CodeNotFound, "no such endpoint; revoke with POST /devices/{id}/revoke"},
		{"revoke: nested id", "POST", "/devices/a/b/revoke", ``, 404, messages.CodeNotFound, "no such endpoint; revoke with POST /devices/{id}/revoke"},
		{"revoke: no suffix", "POST", "/devices/abc", ``, 404, messages.CodeNotFound, "no such endpoint; revoke with POST /devices/{id}/revoke"},
		{"revoke: unknown", "POST", "/devices/abc/revoke", ``, 404, messages.CodeNotFound, `no device "abc": list them with ` + "`silas devices list`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, h.owner(tc.method, tc.path, tc.body), tc.status, tc.code, tc.msg)
		})
	}
	if ev := h.auditEvents(); len(ev) != 0 {
		t.Fatalf("refused requests were audited: %+v", ev)
	}
}

func newKey(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pub)
}

// The whole device life: a code, an enrolment that makes the key's
// signatures count, a second use of the code refused, a revocation that
// stops them at once, and an audit trail that never holds the code.
func TestDeviceLifecycle(t *testing.T) {
	h := newHarness(t)
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var code CodeResponse
	decode(t, h.owner("POST", "/devices/codes", `{"name":"phone","ttl_seconds":600}`), fasthttp.StatusOK, &code)
	if code.Code == "" || code.Name != "phone" || time.Until(code.ExpiresAt) > 10*time.Minute || time.Until(code.ExpiresAt) < 9*time.Minute {
		t.Fatalf("code %+v", code)
	}
	msg := []byte("hello")
	if _, ok := h.api.d.Devices.Verify(msg, ed25519.Sign(priv, msg)); ok {
		t.Fatal("a key verified before it was enrolled")
	}
	enrol := fmt.Sprintf(`{"code":%q,"public_key":%q}`, strings.ToLower(code.Code), base64.RawURLEncoding.EncodeToString(pub))
	// The name given with the code labels the device.
	var got DeviceResponse
	decode(t, h.owner("POST", "/devices/enroll", enrol), fasthttp.StatusCreated, &got)
	if got.Device.Name != "phone" || got.Device.Revoked || got.Device.PublicKey != base64.StdEncoding.EncodeToString(pub) {
		t.Fatalf("enrolled %+v", got.Device)
	}
	id, ok := h.api.d.Devices.Verify(msg, ed25519.Sign(priv, msg))
	if !ok || id != got.Device.ID {
		t.Fatalf("enrolled key does not verify: %q %v", id, ok)
	}
	wantError(t, h.owner("POST", "/devices/enroll", enrol), fasthttp.StatusForbidden, messages.CodeForbidden, "")

	var second CodeResponse
	decode(t, h.owner("POST", "/devices/codes", ``), fasthttp.StatusOK, &second)
	again := fmt.Sprintf(`{"code":%q,"name":"laptop","public_key":%q}`, second.Code, base64.StdEncoding.EncodeToString(pub))
	wantError(t, h.owner("POST", "/devices/enroll", again), fasthttp.StatusConflict, codeConflict,
		"this key is already enrolled or was revoked: generate a new key pair on the device and enrol that")

	var list DevicesResponse
	decode(t, h.owner("GET", "/devices", ""), fasthttp.StatusOK, &list)
	if len(list.Devices) != 1 || list.Devices[0].ID != got.Device.ID {
		t.Fatalf("list %+v", list)
	}
	decode(t, h.owner("POST", "/devices/"+got.Device.ID+"/revoke", ""), fasthttp.StatusOK, &got)
	if !got.Device.Revoked || got.Device.RevokedAt == nil {
		t.Fatalf("revoked %+v", got.Device)
	}
	if _, ok := h.api.d.Devices.Verify(msg, ed25519.Sign(priv, msg)); ok {
		t.Fatal("a revoked key still verifies")
	}

	var events []string
	for _, e := range h.auditEvents() {
		events = append(events, e.Event)
		if e.Scope != testOwnerID {
			t.Errorf("%s audited in scope %q", e.Event, e.Scope)
		}
		for _, c := range []string{code.Code, second.Code} {
			if strings.Contains(string(e.Data), c) {
				t.Errorf("%s audit entry holds the enrolment code: %s", e.Event, e.Data)
			}
		}
	}
	want := []string{"device_code_created", "device_enrolled", "device_code_created", "device_revoked"}
	if b, _ := json.Marshal(events); string(b) != mustJSON(want) {
		t.Fatalf("audit events %v, want %v", events, want)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
