package fakeoauth

import (
	"net/http"
	"strings"
)

// handleToken is the token endpoint (RFC 6749 3.2): it dispatches on
// grant_type and counts every request.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body does not parse")
		return
	}
	grant := r.PostForm.Get("grant_type")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenRequests[grant]++
	switch grant {
	case GrantDeviceCode:
		s.deviceToken(w, r)
	case GrantAuthorizationCode:
		s.codeToken(w, r)
	case GrantRefreshToken:
		s.refreshToken(w, r)
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "unsupported grant_type")
	}
}

// refreshToken answers a refresh request (RFC 6749 6). Both tokens
// rotate: the refresh token presented stops working, and so does the
// access token issued with it. Call with s.mu held.
func (s *Server) refreshToken(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	t := s.tokens[f.Get("refresh_token")]
	switch {
	case t == nil || !t.refresh || !t.valid(s.opts.Now()):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is invalid, expired or revoked")
		return
	case f.Get("client_id") != t.clientID:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "the refresh token was issued to another client")
		return
	}
	t.revoked = true
	if old := s.tokens[t.pair]; old != nil {
		old.revoked = true
	}
	writeJSON(w, http.StatusOK, s.issue(t.clientID, t.scope))
}
