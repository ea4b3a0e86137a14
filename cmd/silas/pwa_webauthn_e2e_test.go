package main

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/silas-ai/silas/bench/mockllm"
)

// addAuthenticator gives the page's browser a virtual platform
// authenticator (Chromium's WebAuthn domain) that verifies its user and
// confirms presence by itself, as a phone's fingerprint reader would.
func (p *pwa) addAuthenticator() {
	p.t.Helper()
	if _, err := chromedp.Call(p.ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		p.t.Fatalf("enable the WebAuthn domain: %v", err)
	}
	_, err := chromedp.Call(p.ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
		HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
	}})
	if err != nil {
		p.t.Fatalf("add a virtual authenticator: %v", err)
	}
}

// TestPWAIrreversibleApprovalWithASecurityKey: the app opened at
// localhost refuses to approve an irreversible card before a key is
// registered and says where to register one; the owner registers the
// virtual authenticator under Device > Security keys; then the tap, the
// slide and the authenticator approve the card, the server verifies the
// assertion, and the plan runs.
func TestPWAIrreversibleApprovalWithASecurityKey(t *testing.T) {
	e := startKeyEnv(t)
	post := mockllm.ToolCall{ID: "call-post", Name: "skill_script",
		Arguments: `{"skill":"oauth-device","script":"scripts/api_request.py","args":{"method":"POST","path":"/echo","body":"{\"n\":\"from-the-app\"}"}}`}
	scriptWork(e.mock, skillPlan("task-post", "[oauth-device]"), executorScript(`{"summary":"posted","artifact_refs":[],"next_steps":[]}`, post))

	p := openPWA(t, e.host, 375, 812)
	p.addAuthenticator()
	p.login()
	p.say("post to the service")
	p.tab("review")
	p.waitFor("the irreversible card", `document.querySelector('.review-root > .card.kind-plan')?.dataset.risk === 'irreversible'`)
	if !eval[bool](p, `document.querySelector('.review-root > .card details').open`) {
		t.Error("an irreversible card should have its details expanded")
	}

	// No key yet: the slide is not enough, and the card says what to do.
	p.do("tap Approve", chromedp.Click(chromedp.CSS(card("plan")+" .btn-primary")))
	p.passLadder("irreversible")
	p.waitFor("the refusal", hasText(card("plan")+" .refusal", "Security keys"))
	if n := len(executorCalls(e.mock)); n != 0 {
		t.Fatalf("the executor ran %d times without a security key", n)
	}

	p.do("open Device", chromedp.Click(chromedp.CSS("#device-open")))
	p.waitFor("the security keys section", `!!document.querySelector('#security-key-register') && !document.querySelector('#security-key-register').disabled`)
	p.do("name the key", chromedp.SendKeys(chromedp.CSS("#security-key-name"), "virtual key"))
	p.do("register a key", chromedp.Click(chromedp.CSS("#security-key-register")))
	p.waitFor("the key listed", hasText("#security-keys-list li", "virtual key (localhost)"))
	if msg := eval[string](p, `document.querySelector('#security-keys-error').textContent`); msg != "" {
		t.Fatalf("registration error %q", msg)
	}
	p.do("close Device", chromedp.Click(chromedp.CSS("#device-close")))
	// Closing gives the focus back to the Device button, after the click:
	// wait for it, or it could take the slider's focus away.
	p.waitFor("Device closed", `!document.querySelector('#device-dialog').open && document.activeElement?.id === 'device-open'`)

	p.do("tap Approve again", chromedp.Click(chromedp.CSS(card("plan")+" .btn-primary")))
	p.passLadder("irreversible")
	if last := e.c.statusesUntilFinal("task-post"); last[len(last)-1].str("status") != "done" {
		t.Fatalf("the approved work item ended %v", last[len(last)-1])
	}
	if res := toolResult(e.mock, "call-post"); !strings.Contains(res, "from-the-app") {
		t.Errorf("the approved call answered %q", res)
	}
	checkFor(t, waitLimit, func() bool { return len(pwaAudit(t, e.d, "approval_confirmed")) == 1 }, "the verified assertion audited")
	if n := len(pwaAudit(t, e.d, "webauthn_registered")); n != 1 {
		t.Errorf("%d webauthn_registered entries, want 1", n)
	}
	p.waitFor("the card gone from Review", `!document.querySelector('.review-root > .card.kind-plan')`)
}

// TestPWAHighRiskSendsTheSlide: the app's slide reaches the server as the
// answer's confirmation, which the server requires of a high card.
func TestPWAHighRiskSendsTheSlide(t *testing.T) {
	mock := newMock(t)
	scriptPWA(mock, networkPlan)
	d := startPWADaemon(t, mock, t.TempDir(), 0)
	p := openPWA(t, d.Addr(), 1440, 900)
	p.login()
	sent := p.wsSent()
	p.say("please write hello.txt")
	p.waitFor("the high-risk plan card", `document.querySelector('.review-root > .card.kind-plan')?.dataset.risk === 'high'`)
	p.do("tap Approve", chromedp.Click(chromedp.CSS(card("plan")+" .btn-primary")))
	p.passLadder("high")
	frames := sent(`"approval_response"`)
	if answer := frames[len(frames)-1]; !strings.Contains(answer, `"confirmation":{"method":"slide"}`) {
		t.Errorf("the approval the app sent %q carries no slide", answer)
	}
	p.waitFor("the plan done", `!!document.querySelector('.status-row[data-status="done"]')`)
}
