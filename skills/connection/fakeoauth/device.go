package fakeoauth

import (
	"crypto/rand"
	"net/http"
	"time"
)

// deviceGrant is one device authorization request (RFC 8628 3.1).
type deviceGrant struct {
	seq      int
	clientID string
	scope    string
	userCode string
	expires  time.Time
	interval time.Duration
	lastPoll time.Time // zero before the first poll
	polls    int       // polls answered authorization_pending
	approved bool
	denied   bool
	redeemed bool
}

// handleDeviceCode is the device authorization endpoint (RFC 8628 3.1, 3.2).
func (s *Server) handleDeviceCode(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	if r.PostForm.Get("client_id") != s.opts.ClientID {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client_id")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &deviceGrant{
		seq:      len(s.userCodes),
		clientID: s.opts.ClientID,
		scope:    r.PostForm.Get("scope"),
		userCode: userCode(),
		expires:  s.opts.Now().Add(s.opts.DeviceCodeTTL),
		interval: time.Duration(s.opts.Interval) * time.Second,
	}
	for s.userCodes[g.userCode] != nil {
		g.userCode = userCode()
	}
	deviceCode := randomString("fdc_", 32)
	s.devices[deviceCode] = g
	s.userCodes[g.userCode] = g
	s.secrets = append(s.secrets, deviceCode)
	writeJSON(w, http.StatusOK, map[string]any{
		"device_code":               deviceCode,
		"user_code":                 g.userCode,
		"verification_uri":          s.VerificationURL(),
		"verification_uri_complete": s.VerificationURL() + "?user_code=" + g.userCode,
		"expires_in":                int(s.opts.DeviceCodeTTL / time.Second),
		"interval":                  s.opts.Interval,
	})
}

// userCode returns a code of eight characters from the RFC 8628 6.1
// alphabet (no vowels, no look-alikes), as XXXX-XXXX.
func userCode() string {
	const alphabet = "BCDFGHJKLMNPQRSTVWXZ"
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	out := make([]byte, 0, 9)
	for i, c := range b {
		if i == 4 {
			out = append(out, '-')
		}
		out = append(out, alphabet[int(c)%len(alphabet)])
	}
	return string(out)
}

// deviceToken answers a device access token request (RFC 8628 3.4, 3.5);
// call with s.mu held.
func (s *Server) deviceToken(w http.ResponseWriter, r *http.Request) {
	s.polls++
	g := s.devices[r.PostForm.Get("device_code")]
	now := s.opts.Now()
	switch {
	case g == nil || g.redeemed:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown or already used device_code")
		return
	case r.PostForm.Get("client_id") != g.clientID:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "the device_code was issued to another client")
		return
	case !now.Before(g.expires):
		oauthError(w, http.StatusBadRequest, "expired_token", "the device_code has expired; start over")
		return
	case g.denied:
		oauthError(w, http.StatusBadRequest, "access_denied", "the user denied the request")
		return
	}
	early := !g.lastPoll.IsZero() && now.Sub(g.lastPoll) < g.interval
	g.lastPoll = now
	if early {
		g.interval += SlowDownStep * time.Second
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"error": "slow_down", "error_description": "polling too fast",
			"interval": int(g.interval / time.Second),
		})
		return
	}
	if !g.approved && s.approveAfter >= 0 && g.polls >= s.approveAfter {
		g.approved = true
	}
	if !g.approved {
		g.polls++
		oauthError(w, http.StatusBadRequest, "authorization_pending", "the user has not yet entered the code")
		return
	}
	g.redeemed = true
	writeJSON(w, http.StatusOK, s.issue(g.clientID, g.scope))
}
