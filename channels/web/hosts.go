package web

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// allowedHost is one parsed Options.AllowedHosts entry.
type allowedHost struct {
	name string // lower case, IPv6 without brackets, no trailing dot
	port string // "" matches any port
}

// hostAllowlist decides which Host headers the server answers: the
// loopback names, the bind address when it is a concrete one, and
// Options.AllowedHosts. It is read-only after New.
type hostAllowlist []allowedHost

// newHostAllowlist builds the allowlist from validated options.
func newHostAllowlist(bind string, extra []string) hostAllowlist {
	l := hostAllowlist{{name: "localhost"}}
	if a, err := netip.ParseAddr(strings.Trim(bind, "[]")); err == nil {
		if !a.IsUnspecified() {
			l = append(l, allowedHost{name: a.Unmap().String()})
		}
	} else if name, _, ok := splitHost(bind); ok {
		l = append(l, allowedHost{name: name})
	}
	for _, h := range extra {
		if a, err := parseAllowedHost(h); err == nil {
			l = append(l, a)
		}
	}
	return l
}

// parseAllowedHost parses "name", "name:port", "[v6]" or "[v6]:port".
func parseAllowedHost(s string) (allowedHost, error) {
	name, port, ok := splitHost(strings.TrimSpace(s))
	if !ok || strings.ContainsAny(name, "*/@ ") {
		return allowedHost{}, fmt.Errorf("allowed host %q is not a host name or IP with an optional port (e.g. chat.example.com or chat.example.com:8443)", s)
	}
	return allowedHost{name: name, port: port}, nil
}

// allows reports whether a request's Host header may be served.
func (l hostAllowlist) allows(host string) bool {
	name, port, ok := splitHost(host)
	if !ok {
		return false
	}
	if a, err := netip.ParseAddr(name); err == nil && a.Unmap().IsLoopback() {
		return true
	}
	for _, a := range l {
		if a.name == name && (a.port == "" || a.port == port) {
			return true
		}
	}
	return false
}

// splitHost splits a Host header value into its lower-case name (IPv6
// without brackets, no trailing dot) and port ("" when absent). It reports
// false for an empty name, a port that is not a number, or an unbracketed
// IPv6 address.
func splitHost(host string) (name, port string, ok bool) {
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return "", "", false
		}
		name, rest := host[1:end], host[end+1:]
		if rest != "" {
			p, found := strings.CutPrefix(rest, ":")
			if !found {
				return "", "", false
			}
			port = p
		}
		a, err := netip.ParseAddr(name)
		if err != nil || !a.Is6() {
			return "", "", false
		}
		return a.Unmap().String(), port, validPort(port)
	}
	name = host
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		name, port = host[:i], host[i+1:]
		if strings.Contains(name, ":") { // an unbracketed IPv6 address
			return "", "", false
		}
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if name == "" || !validPort(port) {
		return "", "", false
	}
	if a, err := netip.ParseAddr(name); err == nil {
		name = a.Unmap().String()
	}
	return name, port, true
}

func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 0 && n <= 65535 && p[0] != '+' && p[0] != '-'
}
