package bundled_test

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/skills/bundled"
	"github.com/silas-ai/silas/skills/connection/fakeoauth"
)

// noRedirects is the test's browser: it shows redirects instead of
// following them, so each hop is checked.
var noRedirects = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       scriptWait,
}

func browse(t *testing.T, u string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	_ = resp.Body.Close()
	return resp
}

func deviceSettings(f *fakeoauth.Server) map[string]any {
	return map[string]any{
		"service_name":             "Fake",
		"device_authorization_url": f.DeviceAuthorizationURL(),
		"token_url":                f.TokenURL(),
		"api_base":                 f.APIBase(),
		"client_id":                f.ClientID(),
		"scopes":                   []string{"read:user"},
	}
}

func browserSettings(f *fakeoauth.Server) map[string]any {
	return map[string]any{
		"service_name":      "Fake",
		"authorization_url": f.AuthorizationURL(),
		"token_url":         f.TokenURL(),
		"api_base":          f.APIBase(),
		"client_id":         f.ClientID(),
		"scopes":            "read:user repo",
	}
}

// credential decodes the OAuth skills' credential file.
func credential(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var cred map[string]any
	if err := json.Unmarshal(b, &cred); err != nil || cred["access_token"] == nil {
		t.Fatalf("credential file is not the tokens' JSON: %v", err)
	}
	return cred
}

// connectDevice runs the device flow to completion: the fake approves
// after approveAfter polls. It returns the completion payload.
func connectDevice(t *testing.T, c *conn, f *fakeoauth.Server, approveAfter int) map[string]any {
	t.Helper()
	f.ApproveAfter(approveAfter)
	r := c.startSetup([]string{"read:user"})
	s := step(t, r.nextOf("setup_step"))
	if s.Type != "device_code" || s.VerificationURL != f.VerificationURL() || !slices.Contains(f.UserCodes(), s.UserCode) || s.PollInterval != 1 || s.ExpiresIn != 900 {
		t.Fatalf("device code step %+v", s)
	}
	done := r.nextOf("completion")
	r.wait()
	if rest := r.rest(); len(rest) != 0 {
		t.Fatalf("lines after the completion: %v", rest)
	}
	c.Cred = r.credential()
	if c.Cred == nil {
		t.Fatal("the setup completed without writing the credential file")
	}
	return done["connection_payload"].(map[string]any)
}

// TestConnectionDeviceCode: the device flow end to end against the fake
// server, then every lifecycle script and an API call with the stored
// token, which the service sees and no output shows.
func TestConnectionDeviceCode(t *testing.T) {
	m := realSandbox(t)
	f := fakeoauth.Start(t, fakeoauth.Options{Interval: 1, RefreshTTL: 24 * time.Hour})
	c := newConn(t, m, "oauth-device", deviceSettings(f), f.Secrets)

	d := c.call("scripts/discover.py", nil, map[string]any{"type": "discover", "identity_hint": map[string]any{"email": "o@example.org"}, "settings": map[string]any{}})
	if d["auth_strategy"] != "device_code" || d["provider"] != "Fake" || d["setup_requirements"].(map[string]any)["browser"] != false {
		t.Fatalf("discover: %v", d)
	}

	payload := connectDevice(t, c, f, 2)
	if f.Polls() != 3 {
		t.Fatalf("the fake approved after 2 polls; the script polled %d times", f.Polls())
	}
	if payload["success"] != true || payload["account"] != fakeoauth.DefaultLogin || !strings.Contains(payload["summary"].(string), fakeoauth.DefaultLogin) ||
		!slices.Equal(toStrings(payload["permissions_granted"]), []string{"read:user"}) || payload["token_expires_at"] == nil || payload["refresh_token_expires_at"] == nil {
		t.Fatalf("completion %v", payload)
	}
	cred := credential(t, c.Cred)
	access := cred["access_token"].(string)
	if !slices.Contains(f.Secrets(), access) || cred["refresh_token"] == nil || cred["expires_at"] != payload["token_expires_at"] {
		t.Fatalf("credential file %v", cred)
	}

	got := c.call("scripts/api_request.py", map[string]any{"path": "/user"}, nil)
	if got["ok"] != true || got["status"] != float64(200) || got["body"].(map[string]any)["login"] != fakeoauth.DefaultLogin {
		t.Fatalf("api_request: %v", got)
	}
	if !slices.Contains(f.SeenTokens(), access) {
		t.Fatal("the service never saw the token")
	}
	got = c.call("scripts/api_request.py", map[string]any{"method": "POST", "path": "/echo", "body": `{"title":"hello"}`}, nil)
	if got["status"] != float64(200) || got["body"].(map[string]any)["body"].(map[string]any)["title"] != "hello" {
		t.Fatalf("api_request with a body: %v", got)
	}

	h := health(t, c.call("scripts/health_check.py", nil, nil))
	if !h.Healthy || h.TokenExpiresAt == nil || h.RefreshExpiresAt == nil || h.Error != nil {
		t.Fatalf("health %+v", h)
	}
	p := c.call("scripts/probe.py", map[string]any{"capability": "user"}, nil)
	if p["ok"] != true || p["account"] != fakeoauth.DefaultLogin {
		t.Fatalf("probe %v", p)
	}
	if r := c.call("scripts/recover.py", map[string]any{"error": "service_unavailable: no answer"}, nil); r["success"] != true {
		t.Fatalf("recover with the service back: %v", r)
	}
}

// TestConnectionAPIRequestStaysOnTheAPI: api_request.py refuses paths that
// leave api_base, does not follow redirects, and scrubs the token from an
// answer that echoes it.
func TestConnectionAPIRequestStaysOnTheAPI(t *testing.T) {
	m := realSandbox(t)
	f := fakeoauth.Start(t, fakeoauth.Options{Interval: 1})
	c := newConn(t, m, "oauth-device", deviceSettings(f), f.Secrets)
	connectDevice(t, c, f, 0)
	access := credential(t, c.Cred)["access_token"].(string)
	seen := len(f.SeenTokens())
	for _, path := range []string{"/../token", "/%2e%2e/token", "/./user", "//evil.example/user", "/user#x"} {
		if _, err := c.skill.CheckArgs("scripts/api_request.py", map[string]any{"path": path}); err != nil {
			continue // refused before it runs
		}
		got := c.call("scripts/api_request.py", map[string]any{"path": path}, nil)
		if got["ok"] != false || got["status"] != nil || !strings.HasPrefix(got["error"].(string), "bad_request") {
			t.Errorf("path %q: %v", path, got)
		}
	}
	if len(f.SeenTokens()) != seen {
		t.Fatal("a refused path reached the service")
	}
	// The echo endpoint returns what it is sent: a body holding the token
	// comes back scrubbed.
	got := c.call("scripts/api_request.py", map[string]any{"method": "POST", "path": "/echo", "body": `{"note":"` + access + `"}`}, nil)
	if got["status"] != float64(200) || got["body"].(map[string]any)["body"].(map[string]any)["note"] != "[REDACTED]" {
		t.Fatalf("echoed token: %v", got)
	}
	// An answer too long for one protocol line is cut, and says so.
	got = c.call("scripts/api_request.py", map[string]any{"method": "POST", "path": "/echo", "body": `{"x":"` + strings.Repeat("a", 59000) + `"}`}, nil)
	if got["status"] != float64(200) || got["truncated"] != true || len(got["body"].(string)) > 20000 {
		t.Fatalf("long answer: truncated=%v", got["truncated"])
	}
	if _, err := c.skill.CheckArgs("scripts/api_request.py", map[string]any{"path": "/user", "method": "TRACE"}); err == nil {
		t.Fatal("TRACE passed the schema")
	}
}

// TestConnectionDeviceCodeFailures: a denied or expired code ends the
// setup with a failure and no credential.
func TestConnectionDeviceCodeFailures(t *testing.T) {
	m := realSandbox(t)
	tests := []struct {
		name string
		opts fakeoauth.Options
		act  func(f *fakeoauth.Server, userCode string)
		want string
	}{
		{"denied", fakeoauth.Options{Interval: 1}, func(f *fakeoauth.Server, uc string) { _ = f.Deny(uc) }, "consent_denied"},
		{"expired", fakeoauth.Options{Interval: 1, DeviceCodeTTL: time.Second}, func(*fakeoauth.Server, string) {}, "unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fakeoauth.Start(t, tc.opts)
			c := newConn(t, m, "oauth-device", deviceSettings(f), f.Secrets)
			r := c.startSetup(nil)
			s := step(t, r.nextOf("setup_step"))
			tc.act(f, s.UserCode)
			fail := failureOf(t, r.nextOf("failure")["failure"])
			r.wait()
			if fail.FailureType != tc.want || fail.Service != "Fake" {
				t.Fatalf("failure %+v", fail)
			}
			if r.credential() != nil {
				t.Fatal("a failed setup left a credential file")
			}
		})
	}
}

// TestConnectionBrowserRedirect: the test is the browser; the script's
// loopback listener gets the redirect, checks state and exchanges the
// code with its PKCE verifier. A wrong state and a refusal end the setup
// without a token request.
func TestConnectionBrowserRedirect(t *testing.T) {
	m := realSandbox(t)
	f := fakeoauth.Start(t, fakeoauth.Options{})
	c := newConn(t, m, "oauth-browser", browserSettings(f), f.Secrets)

	d := c.call("scripts/discover.py", nil, map[string]any{"type": "discover", "settings": map[string]any{}})
	if d["auth_strategy"] != "browser_redirect" || d["setup_requirements"].(map[string]any)["browser"] != true {
		t.Fatalf("discover: %v", d)
	}

	// begin starts a setup and returns the step and the auth URL's query.
	begin := func() (*scriptRun, string, url.Values) {
		t.Helper()
		r := c.startSetup(nil)
		s := step(t, r.nextOf("setup_step"))
		u, err := url.Parse(s.AuthURL)
		if s.Type != "browser_redirect" || err != nil || !strings.HasPrefix(s.AuthURL, f.AuthorizationURL()+"?") {
			t.Fatalf("browser step %+v", s)
		}
		q := u.Query()
		if q.Get("redirect_uri") != "http://"+s.ListeningOn+"/callback" || q.Get("code_challenge_method") != "S256" ||
			len(q.Get("state")) < 32 || len(q.Get("code_challenge")) != 43 || q.Get("scope") != "read:user repo" || q.Get("client_id") != f.ClientID() {
			t.Fatalf("auth URL query %v", q)
		}
		return r, s.ListeningOn, q
	}

	t.Run("approved", func(t *testing.T) {
		r, listen, q := begin()
		if resp := browse(t, "http://"+listen+"/favicon.ico"); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("another path: %d", resp.StatusCode)
		}
		resp := browse(t, authorizeURL(q, f))
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "http://"+listen+"/callback?") {
			t.Fatalf("authorize: %d %q", resp.StatusCode, loc)
		}
		if back := browse(t, loc); back.StatusCode != http.StatusOK {
			t.Fatalf("the listener answered %d", back.StatusCode)
		}
		payload := r.nextOf("completion")["connection_payload"].(map[string]any)
		r.wait()
		if payload["account"] != fakeoauth.DefaultLogin || !slices.Equal(toStrings(payload["permissions_granted"]), []string{"read:user", "repo"}) {
			t.Fatalf("completion %v", payload)
		}
		c.Cred = r.credential()
		access := credential(t, c.Cred)["access_token"].(string)
		if f.TokenRequests(fakeoauth.GrantAuthorizationCode) != 1 {
			t.Fatalf("code token requests: %d", f.TokenRequests(fakeoauth.GrantAuthorizationCode))
		}
		if got := c.call("scripts/api_request.py", map[string]any{"path": "/user"}, nil); got["status"] != float64(200) || !slices.Contains(f.SeenTokens(), access) {
			t.Fatalf("api_request: %v", got)
		}
	})

	t.Run("wrong state", func(t *testing.T) {
		before := f.TokenRequests(fakeoauth.GrantAuthorizationCode)
		r, listen, _ := begin()
		if resp := browse(t, "http://"+listen+"/callback?code=fac_forged&state=not-the-state"); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("forged redirect answered %d", resp.StatusCode)
		}
		fail := failureOf(t, r.nextOf("failure")["failure"])
		r.wait()
		if fail.FailureType != "consent_denied" || r.credential() != nil || f.TokenRequests(fakeoauth.GrantAuthorizationCode) != before {
			t.Fatalf("wrong state: %+v, token requests %d", fail, f.TokenRequests(fakeoauth.GrantAuthorizationCode)-before)
		}
	})

	t.Run("declined", func(t *testing.T) {
		f.DenyAuthorization(true)
		defer f.DenyAuthorization(false)
		r, listen, q := begin()
		resp := browse(t, authorizeURL(q, f))
		loc := resp.Header.Get("Location")
		if !strings.Contains(loc, "error=access_denied") {
			t.Fatalf("declined authorize redirected to %q", loc)
		}
		browse(t, loc)
		fail := failureOf(t, r.nextOf("failure")["failure"])
		r.wait()
		if fail.FailureType != "consent_denied" || r.credential() != nil {
			t.Fatalf("declined: %+v", fail)
		}
		if resp, err := noRedirects.Get("http://" + listen + "/callback"); err == nil {
			_ = resp.Body.Close()
			t.Fatalf("the listener still answers after the setup ended: %d", resp.StatusCode)
		}
	})
}

// authorizeURL rebuilds the authorization URL from its query, as the
// browser opens it.
func authorizeURL(q url.Values, f *fakeoauth.Server) string {
	return f.AuthorizationURL() + "?" + q.Encode()
}

// TestConnectionAPIKey: secure input end to end: the step names the
// connection's ref_id, the runtime writes the value and answers; a wrong
// key, another ref_id and a failed store each end in a failure.
func TestConnectionAPIKey(t *testing.T) {
	m := realSandbox(t)
	const key = "ak-test-0123456789abcdef"
	f := fakeoauth.Start(t, fakeoauth.Options{APIKey: key})
	settings := map[string]any{"service_name": "Fake", "api_base": f.APIBase(), "check_path": "/key-check", "header": "X-Api-Key", "help_url": "https://example.org/keys"}
	c := newConn(t, m, "api-key", settings, f.Secrets)

	d := c.call("scripts/discover.py", nil, map[string]any{"type": "discover"})
	if d["auth_strategy"] != "secure_input" || d["setup_requirements"].(map[string]any)["secure_input"] != true {
		t.Fatalf("discover: %v", d)
	}

	// ask starts a setup and waits at await_input.
	ask := func() *scriptRun {
		t.Helper()
		r := c.startSetup(nil)
		st := step(t, r.nextOf("setup_step"))
		if st.Type != "secure_input" || st.Request.RefID != c.ref || st.Request.Label == "" || st.Request.Guidance.HelpURL == nil {
			t.Fatalf("secure input step %+v", st)
		}
		if w := r.nextOf("await_input"); w["step_id"] != "s1" {
			t.Fatalf("await_input %v", w)
		}
		return r
	}
	answer := func(r *scriptRun, ref string, ok bool) {
		r.send(map[string]any{"type": "step_result", "step_id": "s1", "payload": map[string]any{"ref_id": ref, "success": ok}})
	}

	t.Run("wrong key", func(t *testing.T) {
		r := ask()
		r.stage([]byte("ak-wrong-000000000000\n"))
		answer(r, c.ref, true)
		fail := failureOf(t, r.nextOf("failure")["failure"])
		r.wait()
		if fail.FailureType != "token_revoked" || r.credential() != nil {
			t.Fatalf("wrong key: %+v (the rejected key must be removed)", fail)
		}
	})

	t.Run("other ref_id", func(t *testing.T) {
		seen := len(f.SeenTokens())
		r := ask()
		r.stage([]byte(key))
		answer(r, "ref-someone-else", true)
		fail := failureOf(t, r.nextOf("failure")["failure"])
		r.wait()
		if !strings.Contains(fail.Message, "another ref_id") || len(f.SeenTokens()) != seen {
			t.Fatalf("other ref_id: %+v, the service saw %d keys", fail, len(f.SeenTokens())-seen)
		}
	})

	t.Run("not stored", func(t *testing.T) {
		r := ask()
		answer(r, c.ref, false)
		fail := failureOf(t, r.nextOf("failure")["failure"])
		r.wait()
		if !strings.Contains(fail.Message, "not stored") {
			t.Fatalf("not stored: %+v", fail)
		}
	})

	t.Run("valid key", func(t *testing.T) {
		r := ask()
		// A line for another step is ignored.
		r.send(map[string]any{"type": "step_result", "step_id": "s9", "payload": map[string]any{}})
		r.stage([]byte(key + "\n"))
		answer(r, c.ref, true)
		payload := r.nextOf("completion")["connection_payload"].(map[string]any)
		r.wait()
		if payload["success"] != true || payload["account"] != fakeoauth.DefaultLogin || payload["token_expires_at"] != nil {
			t.Fatalf("completion %v", payload)
		}
		if string(r.credential()) != key+"\n" {
			t.Fatal("the setup changed the stored key")
		}
		c.Cred = []byte(key + "\n")
		if !slices.Contains(f.SeenTokens(), key) {
			t.Fatal("the service never saw the key")
		}
	})

	got := c.call("scripts/api_request.py", map[string]any{"method": "POST", "path": "/echo", "body": `[1,2]`}, nil)
	if got["status"] != float64(200) || got["body"].(map[string]any)["method"] != "POST" {
		t.Fatalf("api_request: %v", got)
	}
	if h := health(t, c.call("scripts/health_check.py", nil, nil)); !h.Healthy || h.TokenExpiresAt != nil {
		t.Fatalf("health %+v", h)
	}
	if r := c.call("scripts/refresh_token.py", nil, nil); r["success"] != true || r["new_expires_at"] != nil {
		t.Fatalf("refresh %v", r)
	}
	if p := c.call("scripts/probe.py", map[string]any{"capability": "key"}, nil); p["ok"] != true {
		t.Fatalf("probe %v", p)
	}
	c.Cred = []byte("ak-revoked-0000000000")
	h := health(t, c.call("scripts/health_check.py", nil, nil))
	if h.Healthy || h.Error == nil || !strings.HasPrefix(*h.Error, "unauthorized") {
		t.Fatalf("health with a rejected key %+v", h)
	}
	r := c.call("scripts/recover.py", map[string]any{"error": *h.Error}, nil)
	if r["success"] != false || failureOf(t, r["failure"]).FailureType != "token_revoked" {
		t.Fatalf("recover %v", r)
	}
}

// TestConnectionRefreshAndRevoke: refresh_token.py rotates the tokens
// ahead of expiry and rewrites the credential; after the service revokes
// them, health is unhealthy and refresh and recover say token_revoked.
func TestConnectionRefreshAndRevoke(t *testing.T) {
	m := realSandbox(t)
	f := fakeoauth.Start(t, fakeoauth.Options{Interval: 1, AccessTTL: time.Hour, RefreshTTL: 24 * time.Hour})
	c := newConn(t, m, "oauth-device", deviceSettings(f), f.Secrets)
	connectDevice(t, c, f, 0)
	old := credential(t, c.Cred)

	began := time.Now()
	got := c.call("scripts/refresh_token.py", nil, nil)
	if got["success"] != true {
		t.Fatalf("refresh %v", got)
	}
	exp, err := time.Parse(time.RFC3339, got["new_expires_at"].(string))
	if err != nil || exp.Before(began.Add(time.Hour-time.Minute)) || exp.After(time.Now().Add(time.Hour+time.Minute)) || got["refresh_token_expires_at"] == nil {
		t.Fatalf("refresh %v", got)
	}
	now := credential(t, c.Cred)
	if now["access_token"] == old["access_token"] || now["refresh_token"] == old["refresh_token"] || now["expires_at"] != got["new_expires_at"] {
		t.Fatal("the refresh did not rewrite the credential with the new tokens")
	}
	if f.TokenRequests(fakeoauth.GrantRefreshToken) != 1 {
		t.Fatalf("refresh requests %d", f.TokenRequests(fakeoauth.GrantRefreshToken))
	}
	if a := c.call("scripts/api_request.py", map[string]any{"path": "/user"}, nil); a["status"] != float64(200) || !slices.Contains(f.SeenTokens(), now["access_token"].(string)) {
		t.Fatalf("api_request with the new token: %v", a)
	}

	// An access token past its expires_at: health says token_expired, the
	// runtime's cue to refresh.
	expired := map[string]any{}
	for k, v := range now {
		expired[k] = v
	}
	expired["expires_at"] = "2020-01-01T00:00:00Z"
	stored := c.Cred
	c.Cred, _ = json.Marshal(expired)
	if h := health(t, c.call("scripts/health_check.py", nil, nil)); h.Healthy || !strings.HasPrefix(*h.Error, "token_expired") {
		t.Fatalf("health of an expired token %+v", h)
	}
	c.Cred = stored

	f.Revoke()
	h := health(t, c.call("scripts/health_check.py", nil, nil))
	if h.Healthy || h.Error == nil || !strings.HasPrefix(*h.Error, "unauthorized") {
		t.Fatalf("health after revocation %+v", h)
	}
	got = c.call("scripts/refresh_token.py", nil, nil)
	if got["success"] != false || failureOf(t, got["failure"]).FailureType != "token_revoked" {
		t.Fatalf("refresh after revocation %v", got)
	}
	if string(c.Cred) != string(stored) {
		t.Fatal("a failed refresh changed the credential")
	}
	r := c.call("scripts/recover.py", map[string]any{"error": *h.Error}, nil)
	if r["success"] != false || failureOf(t, r["failure"]).FailureType != "token_revoked" {
		t.Fatalf("recover after revocation %v", r)
	}
	if p := c.call("scripts/probe.py", map[string]any{"capability": "user"}, nil); p["ok"] != false || failureOf(t, p["failure"]).FailureType != "token_revoked" {
		t.Fatalf("probe after revocation %v", p)
	}
}

// TestConnectionServiceDown: with the service gone, the scripts answer
// service_unavailable instead of failing.
func TestConnectionServiceDown(t *testing.T) {
	m := realSandbox(t)
	f := fakeoauth.Start(t, fakeoauth.Options{Interval: 1})
	c := newConn(t, m, "oauth-device", deviceSettings(f), f.Secrets)
	connectDevice(t, c, f, 0)
	f.Close()
	if h := health(t, c.call("scripts/health_check.py", nil, nil)); h.Healthy || !strings.HasPrefix(*h.Error, "service_unavailable") {
		t.Fatalf("health %+v", h)
	}
	if r := c.call("scripts/refresh_token.py", nil, nil); failureOf(t, r["failure"]).FailureType != "service_unavailable" {
		t.Fatalf("refresh %v", r)
	}
	if a := c.call("scripts/api_request.py", map[string]any{"path": "/user"}, nil); a["ok"] != false || !strings.HasPrefix(a["error"].(string), "service_unavailable") {
		t.Fatalf("api_request %v", a)
	}
}

// TestConnectionSetupCancel: a cancel at the waiting step of each
// strategy ends the script at once (long before its own wait would),
// with no completion and nothing left in the secrets directory.
func TestConnectionSetupCancel(t *testing.T) {
	m := realSandbox(t)
	f := fakeoauth.Start(t, fakeoauth.Options{Interval: 60, APIKey: "ak-test-0123456789abcdef"})
	tests := []struct {
		skill    string
		settings map[string]any
	}{
		{"oauth-device", deviceSettings(f)},
		{"oauth-browser", browserSettings(f)},
		{"api-key", map[string]any{"api_base": f.APIBase(), "check_path": "/key-check"}},
	}
	for _, tc := range tests {
		t.Run(tc.skill, func(t *testing.T) {
			c := newConn(t, m, tc.skill, tc.settings, f.Secrets)
			r := c.startSetup(nil)
			step(t, r.nextOf("setup_step"))
			if tc.skill == "api-key" {
				r.nextOf("await_input")
				r.stage([]byte("ak-test-0123456789abcdef")) // the value arrived, the answer did not
			}
			r.send(map[string]any{"type": "cancel", "reason": "user_cancelled"})
			r.wait()
			for _, l := range r.rest() {
				if l["type"] == "completion" || l["type"] == "failure" {
					t.Fatalf("a cancelled setup printed %v", l)
				}
			}
			if r.credential() != nil {
				t.Fatal("a cancelled setup left a credential file")
			}
		})
	}
}

// TestConnectionSkillsShareTheirLibrary: the copies of the shared modules
// and scripts are the same in every connection skill, so a fix reaches
// all of them.
func TestConnectionSkillsShareTheirLibrary(t *testing.T) {
	same := map[string][]string{
		"scripts/lib/connection.py": {"oauth-device", "oauth-browser", "api-key"},
		"scripts/lib/oauth.py":      {"oauth-device", "oauth-browser"},
	}
	for _, sc := range []string{"refresh_token.py", "health_check.py", "recover.py", "probe.py", "api_request.py"} {
		same["scripts/"+sc] = []string{"oauth-device", "oauth-browser"}
	}
	for file, names := range same {
		first, err := fs.ReadFile(bundled.FS(), names[0]+"/"+file)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names[1:] {
			if b, err := fs.ReadFile(bundled.FS(), n+"/"+file); err != nil || string(b) != string(first) {
				t.Errorf("%s/%s differs from %s/%s (%v)", n, file, names[0], file, err)
			}
		}
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
