package main

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/runtime/review/softkey"
	"github.com/silas-ai/silas/skills/connection/fakeoauth"
)

// The server's confirmation ladder (spec 0.5.2), attacked over /ws the way
// any client could: the risk comes from the server, and an approving
// answer that skips a rung is refused, audited, and runs nothing.

// slide is the confirmation a high card's approval carries.
var slide = map[string]any{"method": "slide"}

// withKey is the confirmation of an irreversible card's approval.
func withKey(assertion []byte) map[string]any {
	return map[string]any{"method": "webauthn", "assertion": json.RawMessage(assertion)}
}

// refusedAnswer sends an approving answer to request id with conf (none
// when nil) and returns the error it must get: confirmation_required
// naming the request, and saying nothing ran.
func refusedAnswer(t *testing.T, c *client, typ, id, verdict string, conf any, want string) {
	t.Helper()
	ans := map[string]any{"type": typ, "request_id": id, "verdict": verdict}
	if conf != nil {
		ans["confirmation"] = conf
	}
	c.send(ans)
	er := c.next("error")
	if er.str("code") != "confirmation_required" || !strings.Contains(er.str("message"), id) || !strings.Contains(er.str("message"), want) ||
		!strings.Contains(er.str("message"), "Nothing ran") || er.str("request_type") != typ {
		t.Fatalf("answer with %v: %v, want confirmation_required saying %q", conf, er, want)
	}
}

func TestHighApprovalNeedsTheSlide(t *testing.T) {
	mock := newMock(t)
	scriptPlan(mock, networkPlan)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())
	c.say("please write hello.txt")
	req := c.next("approval_request")
	id := req.str("request_id")
	card, _ := req["card"].(map[string]any)
	if req.str("risk_level") != "high" || card["risk_level"] != "high" || card["confirmation"] != "slide" || card["details_expanded"] != true {
		t.Fatalf("a plan whose check needs the network: risk %q, card %v; want high, slide, details expanded", req.str("risk_level"), card)
	}
	if ctas, _ := card["ctas"].([]any); len(ctas) != 2 || ctas[0].(map[string]any)["role"] != "recommended" || ctas[1].(map[string]any)["consequence_label"] != "Decline, run nothing" {
		t.Errorf("CTAs %v", card["ctas"])
	}

	refusedAnswer(t, c, "approval_response", id, "approved", nil, "slide")
	// A webauthn confirmation with nothing to verify is no slide either.
	refusedAnswer(t, c, "approval_response", id, "approved", withKey([]byte(`{"id":"x"}`)), "security key")
	for _, bad := range []any{map[string]any{"method": "tap"}, map[string]any{"method": "slide", "assertion": map[string]any{}}, map[string]any{"method": "slide", "extra": 1}, "slide"} {
		c.send(map[string]any{"type": "approval_response", "request_id": id, "verdict": "approved", "confirmation": bad})
		if er := c.next("error"); er.str("code") != "bad_request" {
			t.Fatalf("confirmation %v: %v, want bad_request", bad, er)
		}
	}
	if n := len(executorCalls(mock)); n != 0 {
		t.Fatalf("refused answers ran the executor %d times", n)
	}
	if _, ids := pendingApprovals(t, d.Addr(), pwaToken); len(ids) != 1 || ids[0] != id {
		t.Fatalf("after the refusals the pending approvals are %v, want the card still pending", ids)
	}
	checkFor(t, waitLimit, func() bool { return len(pwaAudit(t, d, "approval_refused")) == 2 }, "the two refusals audited")
	refusals := pwaAudit(t, d, "approval_refused")
	if len(refusals) != 2 || !strings.Contains(string(refusals[0].Data), `"risk_level":"high"`) || !strings.Contains(string(refusals[0].Data), `"confirmation":"tap"`) {
		t.Fatalf("approval_refused entries %v, want the two refusals with their risk and rung", refusals)
	}

	c.send(map[string]any{"type": "approval_response", "request_id": id, "verdict": "approved", "confirmation": slide})
	waitFinal(t, c, "task-hello-file", "done")
	granted := pwaAudit(t, d, "approval_granted")
	if len(granted) != 1 || !strings.Contains(string(granted[0].Data), `"confirmation":"slide"`) {
		t.Fatalf("approval_granted %v, want one with the slide", granted)
	}
}

// TestDeclineNeedsNoRung: declining a high card runs nothing and needs no
// confirmation.
func TestDeclineNeedsNoRung(t *testing.T) {
	mock := newMock(t)
	scriptPlan(mock, networkPlan)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())
	c.say("please write hello.txt")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "declined"})
	if m := c.next("message"); !strings.Contains(m.str("text"), "declined") {
		t.Fatalf("answer %v", m)
	}
	if n := len(pwaAudit(t, d, "approval_refused")); n != 0 {
		t.Errorf("a decline was refused %d times", n)
	}
}

// keyEnv is a daemon with a connection that may act, reached through the
// host name localhost (browsers refuse security keys on an IP address).
type keyEnv struct {
	*connEnv
	host, origin string
}

func (e *keyEnv) call(t *testing.T, path string, body any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, "http://"+e.d.Addr()+path, strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = e.host
	req.Header.Set("Origin", e.origin)
	req.Header.Set("Authorization", "Bearer "+pwaToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	var out json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// challenge asks for the assertion options of card id.
func (e *keyEnv) challenge(t *testing.T, id string) []byte {
	t.Helper()
	status, b := e.call(t, "/webauthn/approve/options", map[string]any{"request_id": id})
	var o ownerapi.WebAuthnOptions
	if status != http.StatusOK || json.Unmarshal(b, &o) != nil {
		t.Fatalf("challenge for %s: %d %s", id, status, b)
	}
	return o.Options
}

// register registers key as the owner's security key.
func (e *keyEnv) register(t *testing.T, key *softkey.Key) {
	t.Helper()
	status, b := e.call(t, "/webauthn/register/options", map[string]any{"name": "test key"})
	var o ownerapi.WebAuthnOptions
	if status != http.StatusOK || json.Unmarshal(b, &o) != nil {
		t.Fatalf("registration options: %d %s", status, b)
	}
	cred, err := key.Create(o.Options, e.origin)
	if err != nil {
		t.Fatal(err)
	}
	if status, b := e.call(t, "/webauthn/register", map[string]any{"ceremony_id": o.CeremonyID, "name": "test key", "credential": json.RawMessage(cred)}); status != http.StatusCreated {
		t.Fatalf("register: %d %s", status, b)
	}
}

// startKeyEnv connects the oauth-device skill with permission to act; the
// connect card is high, so it is approved with the slide.
func startKeyEnv(t *testing.T) *keyEnv {
	t.Helper()
	e := &keyEnv{connEnv: startConnEnv(t, fakeoauth.Options{Interval: 1})}
	_, port, err := net.SplitHostPort(e.d.Addr())
	if err != nil {
		t.Fatal(err)
	}
	e.host, e.origin = "localhost:"+port, "http://localhost:"+port
	e.fake.ApproveAfter(0)
	e.c.send(map[string]any{"type": "message", "text": connectDeviceText(e.fake, "name=Example permission=observe permission=act")})
	connectAnswer(t, e.c)
	card := e.c.next("approval_request")
	if card.str("risk_level") != "high" {
		t.Fatalf("a connection that may act: risk %q, want high", card.str("risk_level"))
	}
	refusedAnswer(t, e.c, "approval_response", card.str("request_id"), "approved", nil, "slide")
	e.c.send(map[string]any{"type": "approval_response", "request_id": card.str("request_id"), "verdict": "approved", "confirmation": slide})
	e.status(t, "active")
	return e
}

// TestIrreversibleApprovalNeedsASecurityKey: a plan that acts on a
// connected service through a connection allowed to send, change and
// delete is irreversible. Approving it needs an assertion, by a key the
// owner registered, over the challenge issued for that very card; nothing
// else gets through, and nothing runs until it does.
func TestIrreversibleApprovalNeedsASecurityKey(t *testing.T) {
	e := startKeyEnv(t)
	post := mockllm.ToolCall{ID: "call-post", Name: "skill_script",
		Arguments: `{"skill":"oauth-device","script":"scripts/api_request.py","args":{"method":"POST","path":"/echo","body":"{\"n\":\"signed\"}"}}`}
	scriptWork(e.mock, skillPlan("task-post", "[oauth-device]"), executorScript(`{"summary":"posted","artifact_refs":[],"next_steps":[]}`, post))
	e.c.say("post to the service")
	req := e.c.next("approval_request")
	id := req.str("request_id")
	card, _ := req["card"].(map[string]any)
	if req.str("risk_level") != "irreversible" || card["confirmation"] != "webauthn" || card["details_expanded"] != true {
		t.Fatalf("the plan acting on the service: risk %q, card %v; want irreversible, webauthn", req.str("risk_level"), card)
	}
	const ar = "approval_response"
	refusedAnswer(t, e.c, ar, id, "approved", nil, "register one in the Silas app under Device > Security keys")
	refusedAnswer(t, e.c, ar, id, "approved", slide, "security key")

	// No key yet: no challenge either, and the answer says how to get one.
	status, b := e.call(t, "/webauthn/approve/options", map[string]any{"request_id": id})
	var noKey struct{ Message string }
	if _ = json.Unmarshal(b, &noKey); status != http.StatusConflict || !strings.Contains(noKey.Message, "Device > Security keys") {
		t.Fatalf("a challenge without a registered key: %d %s", status, b)
	}
	key, err := softkey.New()
	if err != nil {
		t.Fatal(err)
	}
	// An assertion without any challenge issued for the card.
	bogus, _ := key.Get([]byte(`{"publicKey":{"challenge":"AAAAAAAAAAAAAAAAAAAAAA","rpId":"localhost"}}`), e.origin)
	refusedAnswer(t, e.c, ar, id, "approved", withKey(bogus), "no security key challenge is pending")

	e.register(t, key)
	// Signed by someone who knows the key's id but not its private key.
	impostor, err := key.Impostor()
	if err != nil {
		t.Fatal(err)
	}
	opts := e.challenge(t, id)
	forged, _ := impostor.Get(opts, e.origin)
	refusedAnswer(t, e.c, ar, id, "approved", withKey(forged), "security key check failed")
	// The forged answer spent that challenge: the real key's answer to it
	// no longer counts.
	late, _ := key.Get(opts, e.origin)
	refusedAnswer(t, e.c, ar, id, "approved", withKey(late), "no security key challenge is pending")
	// A newer challenge for the card replaces the older one.
	older := e.challenge(t, id)
	e.challenge(t, id)
	stale, _ := key.Get(older, e.origin)
	refusedAnswer(t, e.c, ar, id, "approved", withKey(stale), "security key check failed")
	// An assertion over another card's challenge.
	e.challenge(t, id)
	other, _ := key.Get(e.challenge(t, "another-card"), e.origin)
	refusedAnswer(t, e.c, ar, id, "approved", withKey(other), "security key check failed")
	// The card's own challenge, signed on another site's page.
	phished, _ := key.Get(e.challenge(t, id), "http://evil.example")
	refusedAnswer(t, e.c, ar, id, "approved", withKey(phished), "security key check failed")

	if n := len(executorCalls(e.mock)); n != 0 {
		t.Fatalf("refused answers ran the executor %d times", n)
	}
	if _, ids := pendingApprovals(t, e.d.Addr(), pwaToken); len(ids) != 1 || ids[0] != id {
		t.Fatalf("after the refusals the pending approvals are %v, want the card", ids)
	}

	signed, _ := key.Get(e.challenge(t, id), e.origin)
	e.c.send(map[string]any{"type": ar, "request_id": id, "verdict": "approved", "confirmation": withKey(signed)})
	if last := e.c.statusesUntilFinal("task-post"); last[len(last)-1].str("status") != "done" {
		t.Fatalf("the approved work item ended %v", last[len(last)-1])
	}
	if res := toolResult(e.mock, "call-post"); !strings.Contains(res, "signed") || !strings.Contains(res, "POST") {
		t.Errorf("the approved call answered %q", res)
	}
	// The same answer again: its challenge is spent.
	refusedAnswer(t, e.c, ar, id, "approved", withKey(signed), "no security key challenge is pending")

	// The connect card's tap, then eight refusals of the plan's card, and
	// the replay: the audit actor writes them in the background.
	checkFor(t, waitLimit, func() bool { return len(pwaAudit(t, e.d, "approval_refused")) == 10 }, "10 approval_refused entries")
	if n := len(pwaAudit(t, e.d, "approval_confirmed")); n != 1 {
		t.Errorf("%d approval_confirmed entries, want 1", n)
	}
	granted := pwaAudit(t, e.d, "approval_granted")
	if len(granted) != 1 || !strings.Contains(string(granted[0].Data), `"confirmation":"webauthn"`) || !strings.Contains(string(granted[0].Data), `"risk_level":"irreversible"`) {
		t.Errorf("approval_granted %v", granted)
	}
}
