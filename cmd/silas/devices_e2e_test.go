package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/keys"
)

// pwaCall sends an HTTP request to the daemon and returns the status and
// body; token "" sends no Authorization header.
func pwaCall(t *testing.T, addr, method, path, token, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return resp.StatusCode, b
}

// pwaJSON is pwaCall that expects status want and decodes the body into v.
func pwaJSON(t *testing.T, addr, method, path, token, body string, want int, v any) {
	t.Helper()
	status, b := pwaCall(t, addr, method, path, token, body)
	if status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, status, b, want)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// pwaCustomer opens a chatbot session and returns its session token.
func pwaCustomer(t *testing.T, addr string) string {
	t.Helper()
	return mustDial(t, addr, "/chat").next("session").str("session_token")
}

// pwaAudit returns the audit entries named event, oldest first.
func pwaAudit(t *testing.T, d *testDaemon, event string) []persistence.AuditEntry {
	t.Helper()
	all, err := d.in.db.Audit().Range(context.Background(), 1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var out []persistence.AuditEntry
	for _, e := range all {
		if e.Event == event {
			out = append(out, e)
		}
	}
	return out
}

// pwaTurnTaint waits for the turn_completed audit entry of message id and
// returns its taint.
func pwaTurnTaint(t *testing.T, d *testDaemon, id string) string {
	t.Helper()
	var taint string
	checkFor(t, waitLimit, func() bool {
		for _, e := range pwaAudit(t, d, "turn_completed") {
			var data struct {
				MessageID string `json:"message_id"`
				Taint     string `json:"taint"`
			}
			if json.Unmarshal(e.Data, &data) == nil && data.MessageID == id {
				taint = data.Taint
				return true
			}
		}
		return false
	}, "turn_completed of "+id)
	return taint
}

// saySigned sends a chat message signed with priv over the spec 3.1
// canonical bytes, as the PWA does, and returns its message_id.
func (c *client) saySigned(priv ed25519.PrivateKey, text string) string {
	c.t.Helper()
	id := fmt.Sprintf("signed-%d", time.Now().UnixNano())
	nonce := "nonce-" + id
	ts := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	msg, err := keys.MessageBytes(text, ts, nonce)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(map[string]any{
		"type": "message", "text": text, "message_id": id, "nonce": nonce, "timestamp": ts,
		"signature": base64.StdEncoding.EncodeToString(ed25519.Sign(priv, msg)),
	})
	return id
}

var enrolCodeRe = regexp.MustCompile(`[0-9A-Z]{5}-[0-9A-Z]{5}`)

func TestDeviceEnrolSignRevoke(t *testing.T) {
	mock := newMock(t)
	ov := overrides(t, mock, t.TempDir())
	cfgPath := writeConfig(t, ov)
	d := startTest(t, loadConfig(t, ov))
	addr := d.Addr()
	url := "http://" + addr

	// The owner asks the CLI for a code; the browser enrols its key with it.
	out, err := runCLI(t, "devices", "add", "--name", "test phone", "--config", cfgPath, "--url", url)
	code := enrolCodeRe.FindString(out)
	if err != nil || code == "" {
		t.Fatalf("devices add: %v\n%s", err, out)
	}
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	enrol := fmt.Sprintf(`{"code":%q,"public_key":%q}`, strings.ToLower(code), base64.StdEncoding.EncodeToString(pub))
	var enrolled struct {
		Device ownerapi.Device `json:"device"`
	}
	pwaJSON(t, addr, "POST", "/devices/enroll", "owner-secret-token", enrol, http.StatusCreated, &enrolled)
	if enrolled.Device.ID != keys.KeyID(pub) || enrolled.Device.Name != "test phone" || enrolled.Device.Revoked {
		t.Fatalf("enrolled %+v", enrolled.Device)
	}
	// A code works once.
	pub2, _, _ := ed25519.GenerateKey(rand.Reader)
	again := fmt.Sprintf(`{"code":%q,"public_key":%q}`, code, base64.StdEncoding.EncodeToString(pub2))
	if status, b := pwaCall(t, addr, "POST", "/devices/enroll", "owner-secret-token", again); status != http.StatusForbidden {
		t.Fatalf("second use of a code: %d %s", status, b)
	}

	c := owner(t, addr)
	signed := c.saySigned(priv, "signed by my phone")
	c.answerTo(signed)
	if got := pwaTurnTaint(t, d, signed); got != "owner" {
		t.Fatalf("message signed by an enrolled device has taint %q, want owner", got)
	}
	unsigned := c.say("not signed")
	c.answerTo(unsigned)
	if got := pwaTurnTaint(t, d, unsigned); got != "auth" {
		t.Fatalf("unsigned owner message has taint %q, want auth", got)
	}

	out, err = runCLI(t, "devices", "revoke", enrolled.Device.ID, "--config", cfgPath, "--url", url)
	if err != nil || !strings.Contains(out, "Revoked "+enrolled.Device.ID) {
		t.Fatalf("devices revoke: %v\n%s", err, out)
	}
	// The running daemon stops trusting the key at once.
	after := c.saySigned(priv, "signed after revocation")
	c.answerTo(after)
	if got := pwaTurnTaint(t, d, after); got != "auth" {
		t.Fatalf("message signed by a revoked device has taint %q, want auth", got)
	}
	if len(pwaAudit(t, d, "signature_invalid")) == 0 {
		t.Fatal("no signature_invalid audit entry for the revoked key's message")
	}

	out, err = runCLI(t, "devices", "list", "--config", cfgPath, "--url", url)
	if err != nil || !strings.Contains(out, enrolled.Device.ID) || !strings.Contains(out, "revoked") {
		t.Fatalf("devices list: %v\n%s", err, out)
	}
	for _, ev := range []string{"device_code_created", "device_enrolled", "device_revoked"} {
		if len(pwaAudit(t, d, ev)) != 1 {
			t.Errorf("want one %s audit entry", ev)
		}
	}
	for _, e := range pwaAudit(t, d, "device_code_created") {
		if strings.Contains(string(e.Data), code) {
			t.Fatalf("the enrolment code reached the audit log: %s", e.Data)
		}
	}
	// Revoked keys stay revoked: enrolling the same key again is a conflict.
	out, err = runCLI(t, "devices", "add", "--config", cfgPath, "--url", url)
	code = enrolCodeRe.FindString(out)
	if err != nil || code == "" {
		t.Fatalf("devices add: %v\n%s", err, out)
	}
	reenrol := fmt.Sprintf(`{"code":%q,"public_key":%q}`, code, base64.StdEncoding.EncodeToString(pub))
	if status, b := pwaCall(t, addr, "POST", "/devices/enroll", "owner-secret-token", reenrol); status != http.StatusConflict {
		t.Fatalf("re-enrolling a revoked key: %d %s", status, b)
	}
}

func TestDeviceEndpointsAreOwnerOnly(t *testing.T) {
	mock := newMock(t)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	addr := d.Addr()
	cust := pwaCustomer(t, addr)
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/devices/codes", `{}`},
		{"POST", "/devices/enroll", `{"code":"x","public_key":"y"}`},
		{"GET", "/devices", ""},
		{"POST", "/devices/0123456789abcdef/revoke", ""},
	} {
		if status, b := pwaCall(t, addr, r.method, r.path, "", r.body); status != http.StatusUnauthorized {
			t.Errorf("%s %s without a token: %d %s", r.method, r.path, status, b)
		}
		if status, b := pwaCall(t, addr, r.method, r.path, "wrong", r.body); status != http.StatusUnauthorized {
			t.Errorf("%s %s with a wrong token: %d %s", r.method, r.path, status, b)
		}
		if status, b := pwaCall(t, addr, r.method, r.path, cust, r.body); status != http.StatusForbidden {
			t.Errorf("%s %s as a customer: %d %s", r.method, r.path, status, b)
		}
	}
	var list ownerapi.DevicesResponse
	pwaJSON(t, addr, "GET", "/devices", "owner-secret-token", "", http.StatusOK, &list)
	if len(list.Devices) != 0 {
		t.Fatalf("devices after refused calls: %+v", list.Devices)
	}
	if status, _ := pwaCall(t, addr, "POST", "/devices/0123456789abcdef/revoke", "owner-secret-token", ""); status != http.StatusNotFound {
		t.Fatalf("revoke unknown device: %d", status)
	}
}

func TestDevicesCLINeedsRunningDaemon(t *testing.T) {
	mock := newMock(t)
	ov := overrides(t, mock, t.TempDir())
	cfgPath := writeConfig(t, ov)
	d := startTest(t, loadConfig(t, ov))
	url := "http://" + d.Addr()
	out, err := runCLI(t, "devices", "list", "--config", cfgPath, "--url", url)
	if err != nil || !strings.Contains(out, "No devices enrolled") {
		t.Fatalf("devices list with the daemon running: %v\n%s", err, out)
	}
	d.stop()
	out, err = runCLI(t, "devices", "list", "--config", cfgPath, "--url", url)
	if err == nil || !strings.Contains(out+err.Error(), "silas serve") {
		t.Fatalf("devices list without a daemon: %v\n%s", err, out)
	}
}
