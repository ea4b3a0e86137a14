package fakeoauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// authCode is one authorization code (RFC 6749 4.1.2) with its PKCE
// challenge (RFC 7636 4.4).
type authCode struct {
	clientID    string
	redirectURI string
	challenge   string
	scope       string
	expires     time.Time
	used        bool
	// issued are the tokens redeemed with the code, revoked if it is
	// presented again (RFC 6749 4.1.2).
	issued []string
}

// pkceRE is a code_verifier or S256 code_challenge: 43 to 128 unreserved
// characters (RFC 7636 4.1, 4.2).
var pkceRE = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// loopbackRedirect reports whether raw is a loopback redirect URI of a
// native app (RFC 8252 7.3): http://127.0.0.1:<port>/path, no user info,
// no fragment.
func loopbackRedirect(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.User != nil || u.Fragment != "" || u.Hostname() != "127.0.0.1" {
		return false
	}
	port, err := strconv.Atoi(u.Port())
	return err == nil && port > 0 && port < 65536
}

// handleAuthorize is the authorization endpoint (RFC 6749 4.1.1). It
// stands for the user: it approves at once unless DenyAuthorization is
// set, and redirects back to the client.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect := q.Get("redirect_uri")
	// Without a known client and a valid redirect URI there is nowhere
	// safe to send an error: it is shown here (RFC 6749 4.1.2.1).
	if q.Get("client_id") != s.opts.ClientID {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	if !loopbackRedirect(redirect) {
		http.Error(w, "redirect_uri must be http://127.0.0.1:<port>/...", http.StatusBadRequest)
		return
	}
	back := func(params url.Values) {
		u, _ := url.Parse(redirect)
		v := u.Query()
		for k, vs := range params {
			v[k] = vs
		}
		if st := q.Get("state"); st != "" {
			v.Set("state", st)
		}
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	fail := func(code, desc string) {
		back(url.Values{"error": {code}, "error_description": {desc}})
	}
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "only response_type=code is supported")
		return
	case q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "code_challenge_method must be S256")
		return
	case !pkceRE.MatchString(q.Get("code_challenge")):
		fail("invalid_request", "code_challenge is required (43 to 128 characters)")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.denyAuthorize {
		fail("access_denied", "the user declined")
		return
	}
	code := randomString("fac_", 24)
	s.codes[code] = &authCode{
		clientID:    s.opts.ClientID,
		redirectURI: redirect,
		challenge:   q.Get("code_challenge"),
		scope:       q.Get("scope"),
		expires:     s.opts.Now().Add(AuthCodeTTL),
	}
	s.secrets = append(s.secrets, code)
	back(url.Values{"code": {code}})
}

// codeToken answers an authorization code token request (RFC 6749 4.1.3,
// RFC 7636 4.5, 4.6); call with s.mu held.
func (s *Server) codeToken(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	c := s.codes[f.Get("code")]
	switch {
	case c == nil:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown code")
		return
	case c.used:
		for _, t := range c.issued {
			if tok := s.tokens[t]; tok != nil {
				tok.revoked = true
			}
		}
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code was already used; its tokens are revoked")
		return
	case f.Get("client_id") != c.clientID:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "the code was issued to another client")
		return
	case !s.opts.Now().Before(c.expires):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code has expired")
		return
	case f.Get("redirect_uri") != c.redirectURI:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request")
		return
	case !pkceRE.MatchString(f.Get("code_verifier")):
		oauthError(w, http.StatusBadRequest, "invalid_request", "code_verifier is required (43 to 128 characters)")
		return
	}
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(c.challenge)) != 1 {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
		return
	}
	c.used = true
	resp := s.issue(c.clientID, c.scope)
	c.issued = []string{resp["access_token"].(string), resp["refresh_token"].(string)}
	writeJSON(w, http.StatusOK, resp)
}
