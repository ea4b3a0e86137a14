package fakeoauth

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// bearer returns the token of an "Authorization: Bearer <token>" (or
// GitHub's "token <token>") header, or "".
func bearer(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !(strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "token")) {
		return ""
	}
	return strings.TrimSpace(tok)
}

// authorized records the credential r carries and reports whether it is a
// valid access token or the configured API key.
func (s *Server) authorized(r *http.Request, allowKey bool) bool {
	tok := bearer(r)
	key := ""
	if allowKey {
		key = r.Header.Get(s.opts.APIKeyHeader)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range []string{tok, key} {
		if v != "" {
			s.seen = append(s.seen, v)
		}
	}
	if tok != "" {
		if t := s.tokens[tok]; t != nil && !t.refresh && t.valid(s.opts.Now()) {
			return true
		}
	}
	return key != "" && s.opts.APIKey != "" && !s.keyRevoked && subtle.ConstantTimeCompare([]byte(key), []byte(s.opts.APIKey)) == 1
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	writeJSON(w, http.StatusUnauthorized, map[string]string{"message": msg})
}

// handleUser is GET /api/user: who the bearer token belongs to.
func (s *Server) handleUser(w http.ResponseWriter, r *http.Request) {
	if bearer(r) == "" || !s.authorized(r, false) {
		unauthorized(w, "Bad credentials")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"login": s.opts.Login, "id": 1})
}

// handleKeyCheck is GET /api/key-check: whether the API key header holds
// the configured key.
func (s *Server) handleKeyCheck(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(s.opts.APIKeyHeader) == "" || !s.authorized(r, true) {
		unauthorized(w, "invalid API key")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "login": s.opts.Login})
}

// handleEcho is /api/echo (any method, token or key): the request's
// method and JSON body.
func (s *Server) handleEcho(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r, true) {
		unauthorized(w, "Bad credentials")
		return
	}
	var body any
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil && len(data) > 0 {
		if err := json.Unmarshal(data, &body); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "the body is not JSON"})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"method": r.Method, "body": body})
}
