package config

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// minAuthTokenChars is the shortest auth token accepted on a non-loopback bind.
const minAuthTokenChars = 16

// validateChannels checks the web and Telegram channels.
func (c *Config) validateChannels(p *problems) {
	w := c.Channels.Web
	p.required("channels.web.host", w.Host, `bind to "127.0.0.1" unless clients connect from other machines`)
	if w.Port < 0 || w.Port > 65535 {
		p.add("channels.web.port", "must be a TCP port between 1 and 65535 (or 0 for any free port), got %d", w.Port)
	}
	if w.Enabled && w.Host != "" && !w.IsLoopbackHost() {
		switch {
		case w.AuthToken == "":
			p.add("channels.web.auth_token", "is required because silas.channels.web.host %q is not loopback; "+
				"set silas.channels.web.auth_token (or SILAS_CHANNELS__WEB__AUTH_TOKEN) or bind to 127.0.0.1", w.Host)
		case len(w.AuthToken) < minAuthTokenChars:
			p.add("channels.web.auth_token", "is shorter than %d characters on non-loopback host %q; "+
				"use a long random value (e.g. openssl rand -hex 32)", minAuthTokenChars, w.Host)
		}
	}
	p.atLeast("channels.web.max_frame_bytes", w.MaxFrameBytes, 1024)
	p.atLeast("channels.web.auth_timeout_seconds", w.AuthTimeoutSeconds, 1)
	p.atLeast("channels.web.send_queue", w.SendQueue, 1)
	for i, origin := range w.AllowedOrigins {
		if !validOrigin(origin) {
			p.add(indexed("channels.web.allowed_origins", i),
				"%q is not an origin; write scheme and host only, e.g. https://app.example.com", origin)
		}
	}
	validateWebLimits(w, p)
	c.validateChannelSet(p)

	c.validateTelegram(p)
}

// validateWebLimits checks the socket caps, timeouts, trusted proxies,
// allowed hosts and metrics token of the web channel.
func validateWebLimits(w Web, p *problems) {
	for _, l := range []struct {
		key string
		v   int
	}{
		{"max_text_bytes", w.MaxTextBytes},
		{"max_sockets", w.MaxSockets},
		{"max_sockets_per_ip", w.MaxSocketsPerIP},
		{"max_unauthenticated_sockets", w.MaxUnauthenticatedSockets},
		{"max_unauthenticated_sockets_per_ip", w.MaxUnauthenticatedSocketsPerIP},
		{"max_owner_sockets", w.MaxOwnerSockets},
		{"idle_timeout_seconds", w.IdleTimeoutSeconds},
		{"header_timeout_seconds", w.HeaderTimeoutSeconds},
		{"body_timeout_seconds", w.BodyTimeoutSeconds},
	} {
		p.atLeast("channels.web."+l.key, l.v, 1)
	}
	for i, proxy := range w.TrustedProxies {
		if !validProxy(proxy) {
			p.add(indexed("channels.web.trusted_proxies", i),
				"%q is neither an IP nor a CIDR; write e.g. 10.0.0.1 or 10.0.0.0/8", proxy)
		}
	}
	for i, host := range w.AllowedHosts {
		if !validAllowedHost(host) {
			p.add(indexed("channels.web.allowed_hosts", i),
				"%q is not a host; write the name the browser uses, e.g. chat.example.com or chat.example.com:8443 (no scheme, path or wildcard)", host)
		}
	}
	if w.MetricsToken != "" && len(w.MetricsToken) < minAuthTokenChars {
		p.add("channels.web.metrics_token", "is shorter than %d characters; use a long random value (e.g. openssl rand -hex 32)", minAuthTokenChars)
	}
}

// validProxy accepts an IP or a CIDR.
func validProxy(s string) bool {
	s = strings.TrimSpace(s)
	if _, err := netip.ParsePrefix(s); err == nil {
		return true
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// validAllowedHost accepts "name", "name:port", "[v6]" and "[v6]:port".
func validAllowedHost(s string) bool {
	s = strings.TrimSpace(s)
	name, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return false
		}
		name = s[1:end]
		if rest := s[end+1:]; rest != "" {
			var ok bool
			if port, ok = strings.CutPrefix(rest, ":"); !ok {
				return false
			}
		}
		if a, err := netip.ParseAddr(name); err != nil || !a.Is6() {
			return false
		}
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		name, port = s[:i], s[i+1:]
	}
	if name == "" || strings.ContainsAny(name, ":*/@ ") && !strings.HasPrefix(s, "[") {
		return false
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 || port[0] == '+' || port[0] == '-' {
			return false
		}
	}
	return true
}

// validOrigin accepts "scheme://host[:port]" with scheme http or https.
func validOrigin(s string) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return u.User == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" &&
		!strings.Contains(u.Host, "*")
}
