package fakeoauth

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// Defaults of Options.
const (
	DefaultClientID      = "silas-test-client"
	DefaultLogin         = "octocat"
	DefaultAccessTTL     = time.Hour
	DefaultDeviceCodeTTL = 15 * time.Minute
	DefaultInterval      = 5
	DefaultAPIKeyHeader  = "X-Api-Key"
	// AuthCodeTTL is how long an authorization code may be redeemed.
	AuthCodeTTL = 10 * time.Minute
	// SlowDownStep is what RFC 8628 3.5 adds to the interval on slow_down.
	SlowDownStep = 5
)

// Grant types as the token endpoint names them.
const (
	GrantDeviceCode        = "urn:ietf:params:oauth:grant-type:device_code"
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
)

// Options configure a Server. Every zero field takes the default named in
// its comment.
type Options struct {
	// ClientID is the only client the server knows (default
	// DefaultClientID). Clients are public: no secret is checked.
	ClientID string
	// Login is the account /api/user reports (default DefaultLogin).
	Login string
	// AccessTTL is the lifetime of access tokens, sent as expires_in
	// (default one hour).
	AccessTTL time.Duration
	// RefreshTTL is the lifetime of refresh tokens, sent as
	// refresh_token_expires_in; zero means they do not expire.
	RefreshTTL time.Duration
	// DeviceCodeTTL is the lifetime of device codes, sent as expires_in
	// (default 15 minutes).
	DeviceCodeTTL time.Duration
	// Interval is the device flow's polling interval in seconds (default
	// 5). A poll sooner than that after the previous one gets slow_down.
	Interval int
	// APIKey is the one key /api/key-check accepts; empty accepts none.
	APIKey string
	// APIKeyHeader is the header the key comes in (default X-Api-Key).
	APIKeyHeader string
	// Now is the server's clock (default time.Now); tests move it to
	// expire codes and tokens without waiting.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.ClientID == "" {
		o.ClientID = DefaultClientID
	}
	if o.Login == "" {
		o.Login = DefaultLogin
	}
	if o.AccessTTL <= 0 {
		o.AccessTTL = DefaultAccessTTL
	}
	if o.DeviceCodeTTL <= 0 {
		o.DeviceCodeTTL = DefaultDeviceCodeTTL
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.APIKeyHeader == "" {
		o.APIKeyHeader = DefaultAPIKeyHeader
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Server is a running fake authorization server and API. Its methods are
// safe for concurrent use.
type Server struct {
	opts Options
	http *httptest.Server

	mu            sync.Mutex
	devices       map[string]*deviceGrant // by device_code
	userCodes     map[string]*deviceGrant // by user_code
	approveAfter  int                     // polls answered pending before approval; <0 never
	denyAuthorize bool
	keyRevoked    bool
	codes         map[string]*authCode // by code
	tokens        map[string]*token    // access and refresh tokens by value
	seen          []string
	secrets       []string
	tokenRequests map[string]int
	polls         int
}

// New starts a server on a free port of 127.0.0.1. Close it when done.
func New(opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake oauth server: listen on 127.0.0.1: %w", err)
	}
	s := &Server{
		opts:          opts.withDefaults(),
		devices:       map[string]*deviceGrant{},
		userCodes:     map[string]*deviceGrant{},
		approveAfter:  -1,
		codes:         map[string]*authCode{},
		tokens:        map[string]*token{},
		tokenRequests: map[string]int{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /device/code", s.handleDeviceCode)
	mux.HandleFunc("GET /authorize", s.handleAuthorize)
	mux.HandleFunc("POST /token", s.handleToken)
	mux.HandleFunc("GET /api/user", s.handleUser)
	mux.HandleFunc("GET /api/key-check", s.handleKeyCheck)
	mux.HandleFunc("/api/echo", s.handleEcho)
	s.http = httptest.NewUnstartedServer(mux)
	_ = s.http.Listener.Close()
	s.http.Listener = ln
	s.http.Start()
	return s, nil
}

// Start is New for tests: it fails tb when the server cannot start and
// closes it when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server and closes its connections.
func (s *Server) Close() { s.http.Close() }

// URL is the server's base URL (http://127.0.0.1:<port>).
func (s *Server) URL() string { return s.http.URL }

// DeviceAuthorizationURL is the RFC 8628 device authorization endpoint.
func (s *Server) DeviceAuthorizationURL() string { return s.http.URL + "/device/code" }

// AuthorizationURL is the authorization endpoint of the code grant.
func (s *Server) AuthorizationURL() string { return s.http.URL + "/authorize" }

// TokenURL is the token endpoint of every grant.
func (s *Server) TokenURL() string { return s.http.URL + "/token" }

// VerificationURL is the verification_uri device flows show the user.
func (s *Server) VerificationURL() string { return s.http.URL + "/device" }

// APIBase is the API's base URL: /user and /key-check and /echo are below it.
func (s *Server) APIBase() string { return s.http.URL + "/api" }

// ClientID is the client id the server accepts.
func (s *Server) ClientID() string { return s.opts.ClientID }

// Login is the account the API reports.
func (s *Server) Login() string { return s.opts.Login }

// ApproveAfter makes the user approve every device grant, present and
// future, once n of its polls have been answered authorization_pending:
// poll n+1 gets the tokens. A negative n turns automatic approval off
// (the default).
func (s *Server) ApproveAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.approveAfter = n
}

// Approve approves the device grant of userCode, as the user entering the
// code on the verification page would.
func (s *Server) Approve(userCode string) error {
	return s.decide(userCode, true)
}

// Deny denies the device grant of userCode: its next poll gets
// access_denied.
func (s *Server) Deny(userCode string) error {
	return s.decide(userCode, false)
}

func (s *Server) decide(userCode string, approve bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.userCodes[userCode]
	if g == nil {
		return fmt.Errorf("fake oauth server: no device grant has user code %q", userCode)
	}
	g.approved, g.denied = approve, !approve
	return nil
}

// UserCodes lists the user codes of the device grants issued so far, oldest
// first.
func (s *Server) UserCodes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.userCodes))
	for c := range s.userCodes {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b string) int { return s.userCodes[a].seq - s.userCodes[b].seq })
	return out
}

// DenyAuthorization makes /authorize answer access_denied (deny true), as
// a user declining the consent screen would, or approve again (false, the
// default).
func (s *Server) DenyAuthorization(deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denyAuthorize = deny
}

// Revoke revokes every access and refresh token issued so far: the API
// answers 401 and refresh grants invalid_grant for them.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tokens {
		t.revoked = true
	}
}

// RevokeKey makes the API key stop working, as an owner revoking it on
// the service's page would.
func (s *Server) RevokeKey() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keyRevoked = true
}

// SeenTokens lists every bearer token and API key the API was shown,
// valid or not, in order.
func (s *Server) SeenTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// Secrets lists every secret the server handed out or accepts: access and
// refresh tokens, device codes, authorization codes and the API key. None
// of them may ever appear in a script's output.
func (s *Server) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.secrets)
	if s.opts.APIKey != "" {
		out = append(out, s.opts.APIKey)
	}
	return out
}

// TokenRequests counts token endpoint requests of one grant type, whatever
// their outcome.
func (s *Server) TokenRequests(grantType string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenRequests[grantType]
}

// Polls counts device flow token requests (the same as
// TokenRequests(GrantDeviceCode)).
func (s *Server) Polls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polls
}

// token is an issued access or refresh token.
type token struct {
	refresh  bool
	clientID string
	scope    string
	expires  time.Time // zero: never
	revoked  bool
	// pair is the other token of the same response.
	pair string
}

// valid reports whether t can be used at now; call with s.mu held.
func (t *token) valid(now time.Time) bool {
	return t != nil && !t.revoked && (t.expires.IsZero() || now.Before(t.expires))
}

// issue creates a token pair and returns the token response; call with
// s.mu held.
func (s *Server) issue(clientID, scope string) map[string]any {
	now := s.opts.Now()
	access, refresh := randomString("fat_", 32), randomString("frt_", 32)
	s.tokens[access] = &token{clientID: clientID, scope: scope, expires: now.Add(s.opts.AccessTTL), pair: refresh}
	rt := &token{refresh: true, clientID: clientID, scope: scope, pair: access}
	resp := map[string]any{
		"access_token":  access,
		"token_type":    "bearer",
		"expires_in":    int(s.opts.AccessTTL / time.Second),
		"refresh_token": refresh,
		"scope":         scope,
	}
	if s.opts.RefreshTTL > 0 {
		rt.expires = now.Add(s.opts.RefreshTTL)
		resp["refresh_token_expires_in"] = int(s.opts.RefreshTTL / time.Second)
	}
	s.tokens[refresh] = rt
	s.secrets = append(s.secrets, access, refresh)
	return resp
}

// randomString returns prefix and n random bytes in base64url.
func randomString(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// writeJSON answers v as JSON with status, never cached (RFC 6749 5.1).
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// oauthError answers an RFC 6749 5.2 error.
func oauthError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": description})
}
