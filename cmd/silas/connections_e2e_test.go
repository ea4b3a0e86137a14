package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/skills/connection/fakeoauth"
)

// connEnv is a daemon with an owner connection, the mock model and the fake
// OAuth server.
type connEnv struct {
	mock *mockllm.Server
	fake *fakeoauth.Server
	d    *testDaemon
	log  *syncBuffer
	c    *client
	ov   map[string]any
}

func startConnEnv(t *testing.T, opts fakeoauth.Options) *connEnv {
	t.Helper()
	e := &connEnv{mock: newMock(t), fake: fakeoauth.Start(t, opts)}
	dataDir := t.TempDir()
	e.ov = overrides(t, e.mock, dataDir)
	e.ov["silas.skills_dir"] = filepath.Join(t.TempDir(), "skills")
	e.d, e.log = startLogged(t, e.ov)
	e.c = owner(t, e.d.Addr())
	return e
}

// status waits for the connection_status event with status want.
func (e *connEnv) status(t *testing.T, want string) event {
	t.Helper()
	for {
		ev := e.c.next("connection_status")
		if ev.str("status") == want {
			return ev
		}
		if want != "failed" && ev.str("status") == "failed" || want != "proposed" && ev.str("status") == "proposed" && ev.str("detail") != "" {
			t.Fatalf("connection_status %v while waiting for %s", ev, want)
		}
	}
}

// connectDeviceText is the owner's /connect command for the oauth-device
// skill against fake; extra adds words such as name=Example.
func connectDeviceText(fake *fakeoauth.Server, extra string) string {
	return strings.TrimSpace("/connect oauth-device "+extra) + " device_authorization_url=" + fake.DeviceAuthorizationURL() +
		" token_url=" + fake.TokenURL() + " api_base=" + fake.APIBase() + " client_id=" + fake.ClientID()
}

// connectAnswer waits for the answer to a /connect command (a proposed
// connection_status that asks for the card) and returns the connection id;
// status events of earlier connections are skipped.
func connectAnswer(t *testing.T, c *client) string {
	t.Helper()
	for {
		ev := c.next("connection_status")
		if ev.str("status") == "proposed" && strings.Contains(ev.str("detail"), "approve the") {
			id := ev.str("connection_id")
			if !strings.HasPrefix(id, "cn-") {
				t.Fatalf("the /connect answer %v", ev)
			}
			return id
		}
	}
}

// connections returns GET /connections.
func (e *connEnv) connections(t *testing.T) []map[string]any {
	t.Helper()
	var r struct {
		Connections []map[string]any `json:"connections"`
	}
	pwaJSON(t, e.d.Addr(), "GET", "/connections", "owner-secret-token", "", http.StatusOK, &r)
	return r.Connections
}

// scanForSecrets fails when any secret of the fake server appears in what
// the model was sent, the audit log, the log, a WebSocket frame, or any
// file of the data dir but the keystore.
func (e *connEnv) scanForSecrets(t *testing.T, dataDir string) {
	t.Helper()
	secrets := e.fake.Secrets()
	if len(secrets) == 0 {
		t.Fatal("the fake server handed out no secret: nothing was tested")
	}
	var places []struct {
		name string
		data []byte
	}
	add := func(name string, b []byte) {
		places = append(places, struct {
			name string
			data []byte
		}{name, b})
	}
	reqs, _ := json.Marshal(e.mock.Requests())
	add("model requests", reqs)
	audit, err := e.d.in.db.Audit().Range(context.Background(), 1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	ab, _ := json.Marshal(audit)
	add("audit log", ab)
	add("daemon log", []byte(e.log.String()))
	add("websocket frames", bytes.Join(e.c.received(), []byte("\n")))
	keys := filepath.Join(dataDir, "keys")
	err = filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && p == keys {
				return filepath.SkipDir // the keystore is where credentials belong
			}
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			add(p, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		for _, pl := range places {
			if bytes.Contains(pl.data, []byte(s)) {
				t.Errorf("a credential (%.6s...) is in %s", s, pl.name)
			}
		}
	}
}

// TestDeviceCodeConnectionFromChat (spec 5.10.1): /connect in chat, the
// discovery, the connection_manage card, the device code card, the fake
// server approving after a few polls, the probe, the active connection;
// then a work item calls the API through the connection's ref_id, and no
// credential is anywhere but the keystore.
func TestDeviceCodeConnectionFromChat(t *testing.T) {
	e := startConnEnv(t, fakeoauth.Options{Interval: 1})
	e.fake.ApproveAfter(2)
	dataDir := e.ov["silas.data_dir"].(string)

	e.c.send(map[string]any{"type": "message", "text": connectDeviceText(e.fake, "name=Example")})
	id := connectAnswer(t, e.c)
	card := e.c.next("approval_request")
	if card.str("scope") != "connection_manage" || card.str("risk_level") != "medium" {
		t.Fatalf("connection card %v, want connection_manage at medium risk (read only)", card)
	}
	e.c.send(map[string]any{"type": "approval_response", "request_id": card.str("request_id"), "verdict": "approved"})
	e.status(t, "connecting")
	step := e.c.next("connection_setup_step")
	if step.str("step_type") != "device_code" || step.str("user_code") == "" || !strings.HasPrefix(step.str("verification_url"), e.fake.URL()) {
		t.Fatalf("device code card %v", step)
	}
	active := e.status(t, "active")
	if !strings.Contains(active.str("detail"), e.fake.Login()) {
		t.Errorf("the active connection's summary %q does not name the account", active.str("detail"))
	}
	if e.fake.Polls() < 3 {
		t.Errorf("the script polled %d times; the fake approves on the third", e.fake.Polls())
	}
	list := e.connections(t)
	if len(list) != 1 || list[0]["connection_id"] != id || list[0]["status"] != "active" || list[0]["account"] != e.fake.Login() {
		t.Fatalf("GET /connections %v", list)
	}
	if len(pwaAudit(t, e.d, "connection_approved")) != 1 || len(pwaAudit(t, e.d, "connection_active")) != 1 {
		t.Fatal("the approval and the activation are not in the audit log")
	}

	// A work item uses the connection through its ref_id.
	call := mockllm.ToolCall{ID: "call-api", Name: "skill_script", Arguments: `{"skill":"oauth-device","script":"scripts/api_request.py","args":{"path":"/user"}}`}
	scriptWork(e.mock, skillPlan("task-api", "[oauth-device]"), executorScript(`{"summary":"read the user","artifact_refs":[],"next_steps":[]}`, call))
	e.c.say("who am I on the service?")
	if last := e.c.approveAndFinish("task-api"); last[len(last)-1].str("status") != "done" {
		t.Fatalf("the work item ended %v", last[len(last)-1])
	}
	if res := toolResult(e.mock, "call-api"); !strings.Contains(res, e.fake.Login()) {
		t.Fatalf("api_request.py answered %q, want the account", res)
	}
	seen := e.fake.SeenTokens()
	if len(seen) == 0 {
		t.Fatal("the service never saw a token")
	}
	e.scanForSecrets(t, dataDir)
}

// TestConnectionCancelLeavesNothing: cancelling on the device code card
// stops the setup; the connection is proposed again and no credential or
// pending secret is left.
func TestConnectionCancelLeavesNothing(t *testing.T) {
	e := startConnEnv(t, fakeoauth.Options{Interval: 1})
	e.fake.ApproveAfter(-1) // never approved: the owner cancels
	e.c.send(map[string]any{"type": "message", "text": connectDeviceText(e.fake, "")})
	connectAnswer(t, e.c)
	card := e.c.next("approval_request")
	e.c.send(map[string]any{"type": "approval_response", "request_id": card.str("request_id"), "verdict": "approved"})
	step := e.c.next("connection_setup_step")
	e.c.send(map[string]any{"type": "connection_setup_response", "request_id": step.str("request_id"), "step_type": "device_code", "action": "cancel"})
	ev := e.status(t, "proposed")
	if !strings.Contains(ev.str("detail"), "cancelled") {
		t.Fatalf("after cancel: %v", ev)
	}
	keys, _ := os.ReadDir(filepath.Join(e.ov["silas.data_dir"].(string), "keys"))
	for _, k := range keys {
		if strings.HasPrefix(k.Name(), "secret-") {
			t.Fatalf("a credential file %s is left after the cancel", k.Name())
		}
	}
	if n := len(pwaAudit(t, e.d, "connection_setup_cancelled")); n != 1 {
		t.Fatalf("%d connection_setup_cancelled audit entries", n)
	}
	// The card is gone: answering it again is refused.
	e.c.send(map[string]any{"type": "connection_setup_response", "request_id": step.str("request_id"), "step_type": "device_code", "action": "done"})
	if er := e.c.next("error"); !strings.Contains(er.str("message"), "no connection card is pending") {
		t.Fatalf("answering a closed card: %v", er)
	}
}

// TestSecureInputConnection (spec 5.10.1 secure input): the key goes to
// POST /secrets/{ref_id}, never over the WebSocket; the setup script checks
// it against the service; an unknown ref_id is refused.
func TestSecureInputConnection(t *testing.T) {
	const apiKey = "sk-test-0123456789abcdef"
	e := startConnEnv(t, fakeoauth.Options{APIKey: apiKey})
	e.c.send(map[string]any{"type": "message", "text": "/connect api-key name=KeyService api_base=" + e.fake.APIBase() + " check_path=/key-check"})
	connectAnswer(t, e.c)
	card := e.c.next("approval_request")
	e.c.send(map[string]any{"type": "approval_response", "request_id": card.str("request_id"), "verdict": "approved"})
	req := e.c.next("secure_input_request")
	ref := req.str("ref_id")
	if ref == "" || !strings.HasSuffix(ref, "-cred") {
		t.Fatalf("secure_input_request %v", req)
	}
	if status, _ := pwaCall(t, e.d.Addr(), "POST", "/secrets/not-a-pending-ref", "owner-secret-token", `{"value":"x"}`); status != http.StatusNotFound {
		t.Fatalf("POST /secrets for an unknown ref_id: %d, want 404", status)
	}
	status, body := pwaCall(t, e.d.Addr(), "POST", "/secrets/"+ref, "owner-secret-token", `{"value":"`+apiKey+`"}`)
	if status != http.StatusOK || string(body) != `{"stored":true}` {
		t.Fatalf("POST /secrets/%s: %d %s", ref, status, body)
	}
	e.status(t, "active")
	seen := e.fake.SeenTokens()
	if len(seen) == 0 || seen[len(seen)-1] != apiKey {
		t.Fatalf("the service saw %v, want the key checked by the setup and the probe", seen)
	}
	for _, f := range e.c.received() {
		if bytes.Contains(f, []byte(apiKey)) {
			t.Fatalf("the key crossed the WebSocket: %s", f)
		}
	}
	e.scanForSecrets(t, e.ov["silas.data_dir"].(string))
}

// connectDevice runs the device code setup to active and returns the
// connection id.
func (e *connEnv) connectDevice(t *testing.T) string {
	t.Helper()
	e.fake.ApproveAfter(0)
	e.c.send(map[string]any{"type": "message", "text": connectDeviceText(e.fake, "name=Example")})
	id := connectAnswer(t, e.c)
	card := e.c.next("approval_request")
	e.c.send(map[string]any{"type": "approval_response", "request_id": card.str("request_id"), "verdict": "approved"})
	e.status(t, "active")
	return id
}

// TestConnectionRefreshAndRevocation (spec 5.10.3, 5.10.4): the token is
// refreshed ahead of its expiry with nobody involved; once the service
// revokes it, a health check fails, the refresh fails, and the owner gets
// the token_revoked card with Reconnect.
func TestConnectionRefreshAndRevocation(t *testing.T) {
	// The refresh is due refreshAhead (10 minutes) before the expiry: a
	// token living 10 minutes and 2 seconds is refreshed after 2 seconds.
	e := startConnEnv(t, fakeoauth.Options{Interval: 1, AccessTTL: 10*time.Minute + 2*time.Second})
	id := e.connectDevice(t)
	checkFor(t, waitLimit, func() bool { return len(pwaAudit(t, e.d, "connection_refreshed")) > 0 }, "the scheduled refresh")
	if n := e.fake.TokenRequests(fakeoauth.GrantRefreshToken); n < 1 {
		t.Fatalf("%d refresh grants", n)
	}
	var sum map[string]any
	pwaJSON(t, e.d.Addr(), "POST", "/connections/"+id+"/check", "owner-secret-token", "", http.StatusOK, &sum)
	if sum["status"] != "active" {
		t.Fatalf("after the refresh the check says %v", sum)
	}

	e.fake.Revoke()
	pwaJSON(t, e.d.Addr(), "POST", "/connections/"+id+"/check", "owner-secret-token", "", http.StatusOK, &sum)
	if sum["status"] != "failed" {
		t.Fatalf("after the revocation the check says %v", sum)
	}
	card := e.c.next("connection_failure")
	opts, _ := card["recovery_options"].([]any)
	if card.str("failure_type") != "token_revoked" || len(opts) == 0 || opts[0].(map[string]any)["action"] != "reconnect" {
		t.Fatalf("failure card %v, want token_revoked with Reconnect first", card)
	}
	// Reconnect runs the setup again; the new tokens work.
	e.status(t, "failed")
	e.c.send(map[string]any{"type": "connection_failure_response", "request_id": card.str("request_id"), "selected_action": "reconnect"})
	e.status(t, "connecting")
	e.status(t, "active")
	pwaJSON(t, e.d.Addr(), "POST", "/connections/"+id+"/check", "owner-secret-token", "", http.StatusOK, &sum)
	if sum["status"] != "active" {
		t.Fatalf("after the reconnect the check says %v", sum)
	}
	e.scanForSecrets(t, e.ov["silas.data_dir"].(string))
}

// TestConnectionsAfterRestart: a setup interrupted by a stop is proposed
// again after the restart, never half active, with nothing stored; an
// active connection gets its startup health check and its schedule back.
func TestConnectionsAfterRestart(t *testing.T) {
	e := startConnEnv(t, fakeoauth.Options{Interval: 1})
	active := e.connectDevice(t)
	before := time.Now()

	e.fake.ApproveAfter(-1)
	e.c.send(map[string]any{"type": "message", "text": connectDeviceText(e.fake, "name=Interrupted")})
	interrupted := connectAnswer(t, e.c)
	card := e.c.next("approval_request")
	e.c.send(map[string]any{"type": "approval_response", "request_id": card.str("request_id"), "verdict": "approved"})
	e.status(t, "connecting")
	e.c.next("connection_setup_step")

	e.d.stop()
	e.d, e.log = startLogged(t, e.ov)
	e.c = owner(t, e.d.Addr())
	checkFor(t, waitLimit, func() bool {
		byID := map[string]map[string]any{}
		for _, c := range e.connections(t) {
			byID[c["connection_id"].(string)] = c
		}
		a, i := byID[active], byID[interrupted]
		if a == nil || i == nil || i["status"] != "proposed" || a["status"] != "active" {
			return false
		}
		last, err := time.Parse(time.RFC3339Nano, a["last_health_check"].(string))
		return err == nil && last.After(before)
	}, "the interrupted setup proposed again and the active connection checked at start")
	if n := len(pwaAudit(t, e.d, "connection_setup_interrupted")); n != 1 {
		t.Fatalf("%d connection_setup_interrupted audit entries, want 1", n)
	}
}

// browserSignIn acts as the owner's browser: it opens the sign-in page of
// the browser_redirect card and follows the service's redirect to the
// setup script's loopback listener, with state replaced when forged.
func browserSignIn(t *testing.T, authURL, forgedState string) {
	t.Helper()
	noFollow := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("the authorization endpoint answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if forgedState != "" {
		q := loc.Query()
		q.Set("state", forgedState)
		loc.RawQuery = q.Encode()
	}
	cb, err := noFollow.Get(loc.String())
	if err != nil {
		t.Fatal(err)
	}
	cb.Body.Close()
}

// TestBrowserRedirectConnection (spec 5.10.1 browser redirect): PKCE and
// the state check; a forged state is refused and nothing is stored.
func TestBrowserRedirectConnection(t *testing.T) {
	e := startConnEnv(t, fakeoauth.Options{})
	connect := func(forged string) event {
		e.c.send(map[string]any{"type": "message", "text": "/connect oauth-browser name=Browser authorization_url=" + e.fake.AuthorizationURL() +
			" token_url=" + e.fake.TokenURL() + " api_base=" + e.fake.APIBase() + " client_id=" + e.fake.ClientID()})
		connectAnswer(t, e.c)
		card := e.c.next("approval_request")
		e.c.send(map[string]any{"type": "approval_response", "request_id": card.str("request_id"), "verdict": "approved"})
		var step event
		for step == nil || step.str("step_type") != "browser_redirect" {
			step = e.c.next("connection_setup_step")
		}
		auth := step.str("auth_url")
		u, err := url.Parse(auth)
		if err != nil || u.Query().Get("code_challenge_method") != "S256" || u.Query().Get("code_challenge") == "" || u.Query().Get("state") == "" {
			t.Fatalf("auth_url %q: want PKCE S256 and a state", auth)
		}
		browserSignIn(t, auth, forged)
		return step
	}

	connect("forged-state")
	f := e.c.next("connection_failure")
	if f.str("failure_type") != "consent_denied" {
		t.Fatalf("a forged state gave %v, want a consent_denied failure", f)
	}
	if n := e.fake.TokenRequests(fakeoauth.GrantAuthorizationCode); n != 0 {
		t.Fatalf("the code was exchanged %d times despite the forged state", n)
	}

	connect("")
	e.status(t, "active")
	if n := e.fake.TokenRequests(fakeoauth.GrantAuthorizationCode); n != 1 {
		t.Fatalf("%d code exchanges, want 1", n)
	}
	e.scanForSecrets(t, e.ov["silas.data_dir"].(string))
}

// TestRevokedAPIKeyFails: a refresh cannot cure a revoked API key (the
// api-key skill's refresh changes nothing), so the health chain checks
// again after it, tries recover.py once, and ends failed with a card.
func TestRevokedAPIKeyFails(t *testing.T) {
	const apiKey = "sk-test-0123456789abcdef"
	e := startConnEnv(t, fakeoauth.Options{APIKey: apiKey})
	e.c.send(map[string]any{"type": "message", "text": "/connect api-key name=KeyService api_base=" + e.fake.APIBase() + " check_path=/key-check"})
	id := connectAnswer(t, e.c)
	card := e.c.next("approval_request")
	e.c.send(map[string]any{"type": "approval_response", "request_id": card.str("request_id"), "verdict": "approved"})
	ref := e.c.next("secure_input_request").str("ref_id")
	if status, _ := pwaCall(t, e.d.Addr(), "POST", "/secrets/"+ref, "owner-secret-token", `{"value":"`+apiKey+`"}`); status != http.StatusOK {
		t.Fatalf("POST /secrets: %d", status)
	}
	e.status(t, "active")

	e.fake.RevokeKey()
	var sum map[string]any
	pwaJSON(t, e.d.Addr(), "POST", "/connections/"+id+"/check", "owner-secret-token", "", http.StatusOK, &sum)
	if sum["status"] != "failed" {
		t.Fatalf("a revoked key's check says %v, want failed", sum)
	}
	f := e.c.next("connection_failure")
	if f.str("connection_id") != id {
		t.Fatalf("failure card %v", f)
	}
	if n := len(pwaAudit(t, e.d, "connection_recovered")); n != 0 {
		t.Fatal("a revoked key was recovered")
	}
}

// TestPermissionEscalation (spec 5.10.2): a connection granted observe
// runs a POST only after the owner answers the escalation card: Just this
// once runs that one call and changes nothing, Deny fails the call with
// the connection_permission gate's reason, Approve widens the connection
// so the next call needs no card.
func TestPermissionEscalation(t *testing.T) {
	e := startConnEnv(t, fakeoauth.Options{Interval: 1})
	id := e.connectDevice(t)
	post := func(n string) mockllm.ToolCall {
		return mockllm.ToolCall{ID: "call-" + n, Name: "skill_script",
			Arguments: `{"skill":"oauth-device","script":"scripts/api_request.py","args":{"method":"POST","path":"/echo","body":"{\"n\":\"` + n + `\"}"}}`}
	}
	scriptWork(e.mock, skillPlan("task-post", "[oauth-device]"), executorScript(`{"summary":"posted","artifact_refs":[],"next_steps":[]}`,
		post("once"), post("denied"), post("approved"), post("after")))
	e.c.say("post to the service")
	req := e.c.next("approval_request")
	e.c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})

	for _, verdict := range []string{"just_this_once", "deny", "approve"} {
		card := e.c.next("permission_escalation")
		got, _ := card["requested_permissions"].([]any)
		if card.str("connection_id") != id || len(got) == 0 || got[0] != "act" || card.str("risk_level") != "high" {
			t.Fatalf("escalation card %v, want act for %s at high risk", card, id)
		}
		ans := map[string]any{"type": "permission_escalation_response", "request_id": card.str("request_id"), "verdict": verdict}
		if verdict != "deny" {
			ans["confirmation"] = slide // a new kind of access is high risk
		}
		e.c.send(ans)
	}
	if last := e.c.statusesUntilFinal("task-post"); last[len(last)-1].str("status") != "done" {
		t.Fatalf("the work item ended %v", last[len(last)-1])
	}
	for call, want := range map[string]string{
		"call-once": "once", "call-denied": "blocked by the policy gate connection_permission",
		"call-approved": "approved", "call-after": "after",
	} {
		res := toolResult(e.mock, call)
		ran := strings.Contains(res, `"success":true`) && strings.Contains(res, "POST")
		if !strings.Contains(res, want) || ran == (call == "call-denied") {
			t.Errorf("%s answered %q, want %q (and run only if allowed)", call, res, want)
		}
	}
	if n := len(pwaAudit(t, e.d, "permission_just_this_once")); n != 1 {
		t.Errorf("%d single-use approvals, want 1", n)
	}
	list := e.connections(t)
	perms, _ := list[0]["permissions"].([]any)
	if len(perms) != 2 || perms[1] != "act" {
		t.Fatalf("after Approve the connection's permissions are %v, want observe and act", perms)
	}
}

// TestConnectionKillNineDuringSetup: Silas killed with SIGKILL while a
// device code setup waits for the owner: after the restart the connection
// is proposed, not half active, and no credential is stored.
func TestConnectionKillNineDuringSetup(t *testing.T) {
	mock := newMock(t)
	fake := fakeoauth.Start(t, fakeoauth.Options{Interval: 1})
	fake.ApproveAfter(-1)
	dataDir := t.TempDir()
	ov := overrides(t, mock, dataDir)
	cfgPath := writeConfig(t, ov)

	p1 := startProcess(t, cfgPath)
	c := owner(t, p1.addr)
	c.send(map[string]any{"type": "message", "text": connectDeviceText(fake, "")})
	id := connectAnswer(t, c)
	card := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": card.str("request_id"), "verdict": "approved"})
	c.next("connection_setup_step") // the device code: the script is polling
	checkFor(t, waitLimit, func() bool { return fake.Polls() > 0 }, "the setup script polling")
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p1.cmd.Wait()

	p2 := startProcess(t, cfgPath)
	checkFor(t, waitLimit, func() bool {
		var r struct {
			Connections []map[string]any `json:"connections"`
		}
		pwaJSON(t, p2.addr, "GET", "/connections", "owner-secret-token", "", http.StatusOK, &r)
		return len(r.Connections) == 1 && r.Connections[0]["connection_id"] == id && r.Connections[0]["status"] == "proposed"
	}, "the interrupted connection proposed again")
	keys, _ := filepath.Glob(filepath.Join(dataDir, "keys", "secret-*"))
	if len(keys) != 0 {
		t.Fatalf("credential files left after the interrupted setup: %v", keys)
	}
}
