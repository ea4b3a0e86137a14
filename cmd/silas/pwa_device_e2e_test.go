package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/runtime/keys"
)

// keyInPage describes the private key the page keeps in IndexedDB.
const keyInPage = `new Promise((resolve) => { const r = indexedDB.open('silas-device'); r.onsuccess = () => {
	const g = r.result.transaction('keys').objectStore('keys').get('owner');
	g.onsuccess = () => { const k = g.result?.privateKey; resolve(k instanceof CryptoKey ? k.type + ' ' + k.algorithm.name + ' ' + k.extractable + ' ' + k.usages : String(k)); }; }; })`

// sentMessage is a chat frame the page sent on its WebSocket.
type sentMessage struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	MessageID string `json:"message_id"`
	Nonce     string `json:"nonce"`
	Timestamp string `json:"timestamp"`
	Signature string `json:"signature"`
}

// sentChat waits for the page's message frame carrying text.
func sentChat(t *testing.T, sent func(string) []string, text string) sentMessage {
	t.Helper()
	frames := sent(`"text":` + js(text))
	var m sentMessage
	if err := json.Unmarshal([]byte(frames[len(frames)-1]), &m); err != nil || m.Type != "message" || m.MessageID == "" {
		t.Fatalf("frame %s: %v", frames[len(frames)-1], err)
	}
	return m
}

// evalAwait evaluates a JavaScript expression that yields a promise and
// returns what it resolves to.
func evalAwait[T any](p *pwa, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, pwaStep)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// enrolCode asks the daemon for a one-time code, as `silas devices add`
// does (devices_e2e_test.go covers the CLI itself).
func enrolCode(t *testing.T, addr, body string) string {
	t.Helper()
	var out struct {
		Code string `json:"code"`
	}
	pwaJSON(t, addr, "POST", "/devices/codes", pwaToken, body, http.StatusOK, &out)
	if !enrolCodeRe.MatchString(out.Code) {
		t.Fatalf("enrolment code %q", out.Code)
	}
	return out.Code
}

// enrolInPage pastes code in the Device screen, which must be open, and
// waits until the page says the device is enrolled.
func (p *pwa) enrolInPage(code string) {
	p.t.Helper()
	p.waitFor("the code field focused", `document.activeElement?.id === 'device-code'`)
	p.do("paste the code and submit", chromedp.SendKeys(chromedp.CSS("#device-code"), code), chromedp.KeyEvent(kb.Enter))
	p.waitFor("the device enrolled", `document.querySelector('#device-open').dataset.state === 'enrolled' && `+hasText("#device-status", "every message you send from it is signed"))
}

// Spec 3.1, 5.8, 8.2: the browser makes its own Ed25519 key, enrols it with
// a code from `silas devices add`, and signs every message, which then
// carries owner taint; once the key is revoked its messages carry auth and
// the app says the key is no longer accepted and offers to enrol again.
func TestPWADeviceKeySignsUntilRevoked(t *testing.T) {
	mock := newMock(t)
	scriptPWA(mock, helloPlan)
	d := startPWADaemon(t, mock, t.TempDir(), 0)
	addr := d.Addr()
	p := openPWA(t, addr, 375, 812)
	sent := p.wsSent()
	p.login()

	// Not enrolled yet: messages go unsigned and arrive as auth.
	p.waitFor("no device key", `document.querySelector('#device-open').dataset.state === 'none'`)
	p.say("before enrolling")
	m := sentChat(t, sent, "before enrolling")
	if m.Signature != "" || m.Nonce != "" {
		t.Fatalf("a device without a key signed %+v", m)
	}
	if got := pwaTurnTaint(t, d, m.MessageID); got != "auth" {
		t.Fatalf("unsigned message from the page has taint %q, want auth", got)
	}

	code := enrolCode(t, addr, `{"name":"test browser"}`)
	p.do("open the Device screen by keyboard", chromedp.Focus(chromedp.CSS("#device-open")), chromedp.KeyEvent(kb.Enter))
	p.enrolInPage(strings.ToLower(code))
	var list ownerapi.DevicesResponse
	pwaJSON(t, addr, "GET", "/devices", pwaToken, "", http.StatusOK, &list)
	if len(list.Devices) != 1 || list.Devices[0].Name != "test browser" || list.Devices[0].Revoked {
		t.Fatalf("devices after enrolling in the page: %+v", list.Devices)
	}
	dev := list.Devices[0]
	if !eval[bool](p, hasText("#device-info code", dev.ID)) {
		t.Errorf("the Device screen does not show the key id %s", dev.ID)
	}
	p.screenshot("device-enrolled")

	// The private key is a non-extractable CryptoKey in IndexedDB, and no
	// key material is in localStorage.
	stored := evalAwait[string](p, keyInPage)
	if stored != "private Ed25519 false sign" {
		t.Errorf("stored private key: %s, want a non-extractable Ed25519 signing CryptoKey", stored)
	}
	if eval[bool](p, `Object.keys(localStorage).some((k) => /device|key|priv/i.test(k) || localStorage.getItem(k).includes(`+js(dev.PublicKey)+`))`) {
		t.Error("device key material is in localStorage")
	}
	p.do("close the Device screen with Escape", chromedp.KeyEvent(kb.Escape))
	p.waitFor("the screen closed and focus back on its button", `!document.querySelector('#device-dialog').open && document.activeElement?.id === 'device-open'`)

	// Signed: the Go verifier accepts the page's canonical bytes as they are.
	const text = `signed "hi" from the page: ü ✓`
	p.say(text)
	m = sentChat(t, sent, text)
	pub, _ := base64.StdEncoding.DecodeString(dev.PublicKey)
	sig, _ := base64.StdEncoding.DecodeString(m.Signature)
	msg, err := keys.MessageBytes(m.Text, m.Timestamp, m.Nonce)
	if err != nil || m.Text != text || !ed25519.Verify(pub, msg, sig) {
		t.Fatalf("frame %+v: the signature does not verify over %s (%v)", m, msg, err)
	}
	if got := pwaTurnTaint(t, d, m.MessageID); got != "owner" {
		t.Fatalf("message signed by the page has taint %q, want owner", got)
	}
	if eval[bool](p, `!document.querySelector('#device-banner').hidden`) {
		t.Error("the revoked-key banner shows for an accepted key")
	}

	pwaJSON(t, addr, "POST", "/devices/"+dev.ID+"/revoke", pwaToken, "", http.StatusOK, nil)
	p.say("after the revocation")
	m = sentChat(t, sent, "after the revocation")
	if got := pwaTurnTaint(t, d, m.MessageID); got != "auth" {
		t.Fatalf("message signed with the revoked key has taint %q, want auth", got)
	}
	p.waitFor("the app saying the key is no longer accepted", hasText("#device-banner", "no longer accepts this device’s key"))
	if got := eval[string](p, `document.querySelector('#device-open').dataset.state`); got != "revoked" {
		t.Errorf("device state %q after the revocation, want revoked", got)
	}
	p.screenshot("device-revoked")

	// Enrol again: a new key pair with a new code; messages are owner again.
	p.do("enrol again from the banner", chromedp.Click(chromedp.CSS("#device-banner-enrol")))
	if !eval[bool](p, hasText("#device-status", "no longer accepts")) {
		t.Error("the Device screen does not say the key was revoked")
	}
	p.enrolInPage(enrolCode(t, addr, `{}`))
	p.do("close the Device screen", chromedp.Click(chromedp.CSS("#device-close")))
	p.waitFor("the banner gone", `document.querySelector('#device-banner').hidden`)
	p.say("with the new key")
	m = sentChat(t, sent, "with the new key")
	if got := pwaTurnTaint(t, d, m.MessageID); got != "owner" {
		t.Fatalf("message signed with the new key has taint %q, want owner", got)
	}
	pwaJSON(t, addr, "GET", "/devices", pwaToken, "", http.StatusOK, &list)
	if len(list.Devices) != 2 || !list.Devices[0].Revoked || list.Devices[1].Revoked || list.Devices[1].PublicKey == dev.PublicKey {
		t.Fatalf("devices after enrolling again: %+v, want the old key revoked and a new one", list.Devices)
	}

	// Logging out of this browser revokes its key and deletes it here.
	p.do("log out", chromedp.Click(chromedp.CSS("#logout")))
	p.waitFor("the login screen", `!document.querySelector('#login').hidden`)
	checkFor(t, pwaStep, func() bool {
		pwaJSON(t, addr, "GET", "/devices", pwaToken, "", http.StatusOK, &list)
		return list.Devices[1].Revoked
	}, "the key revoked by the log out")
	if left := evalAwait[string](p, keyInPage); left != "undefined" {
		t.Errorf("key left in IndexedDB after logging out: %s", left)
	}
}

// A Silas that does not know the key (its data was reset) is shown like a
// revoked one: the app says so and offers to enrol again.
func TestPWADeviceKeyUnknownAfterReset(t *testing.T) {
	mock := newMock(t)
	scriptPWA(mock, helloPlan)
	d := startPWADaemon(t, mock, t.TempDir(), 0)
	_, portText, err := net.SplitHostPort(d.Addr())
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portText)
	p := openPWA(t, d.Addr(), 1440, 900)
	p.login()
	code := enrolCode(t, d.Addr(), `{}`)
	p.do("open the Device screen", chromedp.Click(chromedp.CSS("#device-open")))
	p.enrolInPage(code)
	p.do("close it", chromedp.Click(chromedp.CSS("#device-close")))

	d.stop()
	p.waitFor("the app offline", `document.querySelector('#conn').dataset.state !== 'online'`)
	startPWADaemon(t, mock, t.TempDir(), port)
	p.waitFor("the app saying Silas does not know the key", `document.querySelector('#device-open').dataset.state === 'unknown' && `+
		hasText("#device-banner", "does not know this device’s key"))
	p.do("enrol again from the banner", chromedp.Click(chromedp.CSS("#device-banner-enrol")))
	if !eval[bool](p, hasText("#device-status", "does not know")) || !eval[bool](p, `document.activeElement?.id === 'device-code'`) {
		t.Error("the Device screen does not offer to enrol again")
	}
}
