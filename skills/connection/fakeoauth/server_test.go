package fakeoauth_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/skills/connection/fakeoauth"
)

// clock is a settable time source for Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       10 * time.Second,
}

func post(t *testing.T, u string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := noRedirect.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("POST %s: body is not JSON: %v", u, err)
	}
	return resp.StatusCode, out
}

func get(t *testing.T, u string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func apiUser(t *testing.T, s *fakeoauth.Server, access string) int {
	t.Helper()
	return get(t, s.APIBase()+"/user", "Authorization", "Bearer "+access).StatusCode
}

func startDevice(t *testing.T, s *fakeoauth.Server) (deviceCode, userCode string) {
	t.Helper()
	status, out := post(t, s.DeviceAuthorizationURL(), url.Values{"client_id": {s.ClientID()}, "scope": {"read:user"}})
	if status != http.StatusOK {
		t.Fatalf("device code: %d %v", status, out)
	}
	for _, k := range []string{"device_code", "user_code", "verification_uri", "expires_in", "interval"} {
		if out[k] == nil {
			t.Fatalf("device authorization response lacks %s: %v", k, out)
		}
	}
	return out["device_code"].(string), out["user_code"].(string)
}

func pollDevice(t *testing.T, s *fakeoauth.Server, deviceCode string) (int, map[string]any) {
	t.Helper()
	return post(t, s.TokenURL(), url.Values{"grant_type": {fakeoauth.GrantDeviceCode}, "device_code": {deviceCode}, "client_id": {s.ClientID()}})
}

// TestDeviceFlow: the token endpoint answers each RFC 8628 3.5 error in
// its situation, and tokens only once approved.
func TestDeviceFlow(t *testing.T) {
	type poll struct {
		wait  time.Duration // clock advance before the poll
		want  string        // error code, or "" for tokens
		setup func(s *fakeoauth.Server, userCode string)
	}
	approve := func(s *fakeoauth.Server, uc string) { _ = s.Approve(uc) }
	deny := func(s *fakeoauth.Server, uc string) { _ = s.Deny(uc) }
	tests := []struct {
		name         string
		approveAfter int
		polls        []poll
	}{
		{"approved after two polls", 2, []poll{{0, "authorization_pending", nil}, {5 * time.Second, "authorization_pending", nil}, {5 * time.Second, "", nil}}},
		{"approved by user code", -1, []poll{{0, "authorization_pending", nil}, {5 * time.Second, "", approve}}},
		{"never approved", -1, []poll{{0, "authorization_pending", nil}, {time.Minute, "authorization_pending", nil}}},
		{"too fast then slower", -1, []poll{{0, "authorization_pending", nil}, {time.Second, "slow_down", nil}, {5 * time.Second, "slow_down", nil}, {15 * time.Second, "authorization_pending", nil}}},
		{"denied", -1, []poll{{0, "authorization_pending", nil}, {5 * time.Second, "access_denied", deny}}},
		{"expired", -1, []poll{{0, "authorization_pending", nil}, {16 * time.Minute, "expired_token", nil}}},
		{"redeemed once", 0, []poll{{0, "", nil}, {5 * time.Second, "invalid_grant", nil}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			s := fakeoauth.Start(t, fakeoauth.Options{Now: c.Now})
			s.ApproveAfter(tc.approveAfter)
			dc, uc := startDevice(t, s)
			for i, p := range tc.polls {
				c.Advance(p.wait)
				if p.setup != nil {
					p.setup(s, uc)
				}
				status, out := pollDevice(t, s, dc)
				if p.want == "" {
					if status != http.StatusOK || out["access_token"] == nil || out["refresh_token"] == nil || out["expires_in"] != float64(3600) || out["scope"] != "read:user" {
						t.Fatalf("poll %d: want tokens, got %d %v", i, status, out)
					}
					if apiUser(t, s, out["access_token"].(string)) != http.StatusOK {
						t.Fatalf("poll %d: the issued token does not work", i)
					}
					continue
				}
				if status != http.StatusBadRequest || out["error"] != p.want {
					t.Fatalf("poll %d: want %s, got %d %v", i, p.want, status, out)
				}
				if p.want == "slow_down" && out["interval"] == nil {
					t.Fatalf("slow_down without the new interval: %v", out)
				}
			}
			if s.Polls() != len(tc.polls) || s.TokenRequests(fakeoauth.GrantDeviceCode) != len(tc.polls) {
				t.Fatalf("polls counted %d, token requests %d, made %d", s.Polls(), s.TokenRequests(fakeoauth.GrantDeviceCode), len(tc.polls))
			}
		})
	}
}

func TestDeviceFlowRefusals(t *testing.T) {
	s := fakeoauth.Start(t, fakeoauth.Options{})
	if status, out := post(t, s.DeviceAuthorizationURL(), url.Values{"client_id": {"someone-else"}}); status != http.StatusUnauthorized || out["error"] != "invalid_client" {
		t.Fatalf("unknown client: %d %v", status, out)
	}
	dc, _ := startDevice(t, s)
	if status, out := post(t, s.TokenURL(), url.Values{"grant_type": {fakeoauth.GrantDeviceCode}, "device_code": {dc}, "client_id": {"someone-else"}}); status != http.StatusUnauthorized || out["error"] != "invalid_client" {
		t.Fatalf("device code of another client: %d %v", status, out)
	}
	if status, out := pollDevice(t, s, "fdc_guessed"); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("unknown device code: %d %v", status, out)
	}
	if err := s.Approve("NOPE-NOPE"); err == nil {
		t.Fatal("approving an unknown user code succeeded")
	}
	if status, out := post(t, s.TokenURL(), url.Values{"grant_type": {"password"}}); status != http.StatusBadRequest || out["error"] != "unsupported_grant_type" {
		t.Fatalf("password grant: %d %v", status, out)
	}
	if got := s.UserCodes(); len(got) != 1 {
		t.Fatalf("user codes %v", got)
	}
}

// pkce returns a verifier and its S256 challenge.
func pkce(seed string) (string, string) {
	v := strings.Repeat(seed, 64)
	sum := sha256.Sum256([]byte(v))
	return v, base64.RawURLEncoding.EncodeToString(sum[:])
}

// TestAuthorizationCodeWithPKCE: the code grant redirects with code and
// state, and the token endpoint insists on the matching verifier, the same
// redirect URI and a single use.
func TestAuthorizationCodeWithPKCE(t *testing.T) {
	const redirect = "http://127.0.0.1:45678/callback"
	verifier, challenge := pkce("a")
	otherVerifier, _ := pkce("b")
	authorize := func(s *fakeoauth.Server, params map[string]string) *http.Response {
		q := url.Values{"response_type": {"code"}, "client_id": {s.ClientID()}, "redirect_uri": {redirect},
			"state": {"st4te"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"read:user"}}
		for k, v := range params {
			if v == "" {
				q.Del(k)
			} else {
				q.Set(k, v)
			}
		}
		return get(t, s.AuthorizationURL()+"?"+q.Encode())
	}
	tests := []struct {
		name       string
		params     map[string]string
		deny       bool
		wantStatus int    // of /authorize
		wantError  string // in the redirect, when it redirects
	}{
		{"approved", nil, false, http.StatusFound, ""},
		{"denied", nil, true, http.StatusFound, "access_denied"},
		{"plain method", map[string]string{"code_challenge_method": "plain"}, false, http.StatusFound, "invalid_request"},
		{"no challenge", map[string]string{"code_challenge": ""}, false, http.StatusFound, "invalid_request"},
		{"token response type", map[string]string{"response_type": "token"}, false, http.StatusFound, "unsupported_response_type"},
		{"unknown client", map[string]string{"client_id": "evil"}, false, http.StatusBadRequest, ""},
		{"remote redirect", map[string]string{"redirect_uri": "https://evil.example/cb"}, false, http.StatusBadRequest, ""},
		{"localhost name", map[string]string{"redirect_uri": "http://localhost:45678/cb"}, false, http.StatusBadRequest, ""},
		{"no port", map[string]string{"redirect_uri": "http://127.0.0.1/cb"}, false, http.StatusBadRequest, ""},
		{"user info", map[string]string{"redirect_uri": "http://x@127.0.0.1:1/cb"}, false, http.StatusBadRequest, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeoauth.Start(t, fakeoauth.Options{})
			s.DenyAuthorization(tc.deny)
			resp := authorize(s, tc.params)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if resp.StatusCode != http.StatusFound {
				if resp.Header.Get("Location") != "" {
					t.Fatal("an error with an untrusted client or redirect URI was redirected")
				}
				return
			}
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || !strings.HasPrefix(loc.String(), redirect+"?") {
				t.Fatalf("redirected to %q", resp.Header.Get("Location"))
			}
			q := loc.Query()
			if q.Get("state") != "st4te" {
				t.Fatalf("state not echoed: %v", q)
			}
			if tc.wantError != "" {
				if q.Get("error") != tc.wantError || q.Get("code") != "" {
					t.Fatalf("redirect query %v, want error %s", q, tc.wantError)
				}
				return
			}
			code := q.Get("code")
			exchange := func(verifier, redirectURI string) (int, map[string]any) {
				return post(t, s.TokenURL(), url.Values{"grant_type": {"authorization_code"}, "code": {code},
					"redirect_uri": {redirectURI}, "client_id": {s.ClientID()}, "code_verifier": {verifier}})
			}
			if status, out := exchange(otherVerifier, redirect); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
				t.Fatalf("wrong verifier: %d %v", status, out)
			}
			if status, out := exchange(verifier, redirect+"x"); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
				t.Fatalf("other redirect_uri: %d %v", status, out)
			}
			if status, out := exchange("short", redirect); status != http.StatusBadRequest || out["error"] != "invalid_request" {
				t.Fatalf("short verifier: %d %v", status, out)
			}
			status, out := exchange(verifier, redirect)
			if status != http.StatusOK || out["access_token"] == nil || out["scope"] != "read:user" {
				t.Fatalf("exchange: %d %v", status, out)
			}
			access := out["access_token"].(string)
			if apiUser(t, s, access) != http.StatusOK {
				t.Fatal("the issued token does not work")
			}
			// A code presented twice is refused and revokes its tokens.
			if status, out := exchange(verifier, redirect); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
				t.Fatalf("code reuse: %d %v", status, out)
			}
			if apiUser(t, s, access) != http.StatusUnauthorized {
				t.Fatal("tokens of a replayed code still work")
			}
			if s.TokenRequests(fakeoauth.GrantAuthorizationCode) != 5 {
				t.Fatalf("counted %d code token requests", s.TokenRequests(fakeoauth.GrantAuthorizationCode))
			}
		})
	}
}

func TestAuthorizationCodeExpires(t *testing.T) {
	c := newClock()
	s := fakeoauth.Start(t, fakeoauth.Options{Now: c.Now})
	verifier, challenge := pkce("c")
	const redirect = "http://127.0.0.1:1/cb"
	resp := get(t, s.AuthorizationURL()+"?"+url.Values{"response_type": {"code"}, "client_id": {s.ClientID()}, "redirect_uri": {redirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}}.Encode())
	loc, _ := url.Parse(resp.Header.Get("Location"))
	c.Advance(fakeoauth.AuthCodeTTL)
	status, out := post(t, s.TokenURL(), url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"redirect_uri": {redirect}, "client_id": {s.ClientID()}, "code_verifier": {verifier}})
	if status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("expired code: %d %v", status, out)
	}
}

// deviceTokens runs a device flow approved at once and returns the token
// response.
func deviceTokens(t *testing.T, s *fakeoauth.Server) map[string]any {
	t.Helper()
	s.ApproveAfter(0)
	dc, _ := startDevice(t, s)
	status, out := pollDevice(t, s, dc)
	if status != http.StatusOK {
		t.Fatalf("device tokens: %d %v", status, out)
	}
	return out
}

func refresh(t *testing.T, s *fakeoauth.Server, rt string) (int, map[string]any) {
	t.Helper()
	return post(t, s.TokenURL(), url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {s.ClientID()}})
}

// TestRefreshAndExpiry: refresh rotates both tokens, tokens expire after
// their TTLs, and Revoke ends them all.
func TestRefreshAndExpiry(t *testing.T) {
	c := newClock()
	s := fakeoauth.Start(t, fakeoauth.Options{Now: c.Now, AccessTTL: 10 * time.Minute, RefreshTTL: 24 * time.Hour})
	first := deviceTokens(t, s)
	if first["expires_in"] != float64(600) || first["refresh_token_expires_in"] != float64(86400) {
		t.Fatalf("lifetimes: %v", first)
	}
	status, second := refresh(t, s, first["refresh_token"].(string))
	if status != http.StatusOK || second["access_token"] == first["access_token"] || second["refresh_token"] == first["refresh_token"] || second["scope"] != "read:user" {
		t.Fatalf("refresh: %d %v", status, second)
	}
	if apiUser(t, s, first["access_token"].(string)) != http.StatusUnauthorized || apiUser(t, s, second["access_token"].(string)) != http.StatusOK {
		t.Fatal("after a refresh only the new access token works")
	}
	if status, out := refresh(t, s, first["refresh_token"].(string)); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("rotated refresh token reused: %d %v", status, out)
	}
	if status, out := refresh(t, s, second["access_token"].(string)); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("access token as refresh token: %d %v", status, out)
	}
	if status, out := post(t, s.TokenURL(), url.Values{"grant_type": {"refresh_token"}, "refresh_token": {second["refresh_token"].(string)}, "client_id": {"evil"}}); status != http.StatusUnauthorized || out["error"] != "invalid_client" {
		t.Fatalf("refresh by another client: %d %v", status, out)
	}

	c.Advance(10 * time.Minute)
	if apiUser(t, s, second["access_token"].(string)) != http.StatusUnauthorized {
		t.Fatal("an expired access token works")
	}
	status, third := refresh(t, s, second["refresh_token"].(string))
	if status != http.StatusOK {
		t.Fatalf("refresh after the access token expired: %d %v", status, third)
	}
	c.Advance(24 * time.Hour)
	if status, out := refresh(t, s, third["refresh_token"].(string)); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("expired refresh token: %d %v", status, out)
	}
	if s.TokenRequests(fakeoauth.GrantRefreshToken) != 6 {
		t.Fatalf("refresh requests counted %d", s.TokenRequests(fakeoauth.GrantRefreshToken))
	}
}

func TestRevoke(t *testing.T) {
	s := fakeoauth.Start(t, fakeoauth.Options{})
	tok := deviceTokens(t, s)
	s.Revoke()
	if apiUser(t, s, tok["access_token"].(string)) != http.StatusUnauthorized {
		t.Fatal("a revoked access token works")
	}
	if status, out := refresh(t, s, tok["refresh_token"].(string)); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("revoked refresh token: %d %v", status, out)
	}
	// Tokens issued after the revocation work.
	if apiUser(t, s, deviceTokens(t, s)["access_token"].(string)) != http.StatusOK {
		t.Fatal("a token issued after Revoke does not work")
	}
}

// TestAPI: the API accepts only valid credentials in the right place, and
// records every credential it is shown.
func TestAPI(t *testing.T) {
	s := fakeoauth.Start(t, fakeoauth.Options{APIKey: "k3y-value-123", APIKeyHeader: "X-Test-Key"})
	access := deviceTokens(t, s)["access_token"].(string)
	tests := []struct {
		name   string
		path   string
		header []string
		want   int
	}{
		{"user with token", "/user", []string{"Authorization", "Bearer " + access}, 200},
		{"user with token scheme", "/user", []string{"Authorization", "token " + access}, 200},
		{"user without token", "/user", nil, 401},
		{"user with bad token", "/user", []string{"Authorization", "Bearer fat_bad"}, 401},
		{"user with basic auth", "/user", []string{"Authorization", "Basic " + access}, 401},
		{"user with the key", "/user", []string{"X-Test-Key", "k3y-value-123"}, 401},
		{"key check", "/key-check", []string{"X-Test-Key", "k3y-value-123"}, 200},
		{"key check wrong key", "/key-check", []string{"X-Test-Key", "k3y-value-124"}, 401},
		{"key check in the wrong header", "/key-check", []string{"X-Api-Key", "k3y-value-123"}, 401},
		{"key check with a token", "/key-check", []string{"Authorization", "Bearer " + access}, 401},
		{"echo with token", "/echo", []string{"Authorization", "Bearer " + access}, 200},
		{"echo with key", "/echo", []string{"X-Test-Key", "k3y-value-123"}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := get(t, s.APIBase()+tc.path, tc.header...)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 401 && !strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
	resp := get(t, s.APIBase()+"/user", "Authorization", "Bearer "+access)
	var user map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&user); err != nil || user["login"] != fakeoauth.DefaultLogin {
		t.Fatalf("user: %v %v", user, err)
	}
	seen := s.SeenTokens()
	for _, want := range []string{access, "fat_bad", "k3y-value-123", "k3y-value-124"} {
		if !slices.Contains(seen, want) {
			t.Errorf("SeenTokens lacks %q", want)
		}
	}
	secrets := s.Secrets()
	if !slices.Contains(secrets, access) || !slices.Contains(secrets, "k3y-value-123") || len(secrets) != 4 { // device code, access, refresh, key
		t.Fatalf("secrets %v", secrets)
	}

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.APIBase()+"/echo", strings.NewReader(`{"a":[1,2]}`))
	req.Header.Set("Authorization", "Bearer "+access)
	eresp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = eresp.Body.Close() }()
	var echo map[string]any
	if err := json.NewDecoder(eresp.Body).Decode(&echo); err != nil || echo["method"] != "POST" || echo["body"].(map[string]any)["a"] == nil {
		t.Fatalf("echo: %v %v", echo, err)
	}
}

// TestNoAPIKeyConfigured: without Options.APIKey no key is valid, the
// empty one included.
func TestNoAPIKeyConfigured(t *testing.T) {
	s := fakeoauth.Start(t, fakeoauth.Options{})
	if resp := get(t, s.APIBase()+"/key-check", "X-Api-Key", "anything"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("key accepted without a configured key: %d", resp.StatusCode)
	}
}
