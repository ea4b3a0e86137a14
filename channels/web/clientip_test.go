package web

import (
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	ps, err := parseProxies([]string{"10.0.0.0/8", "192.0.2.1", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		peer string
		xff  []string
		want string
	}{
		{"untrusted peer: header ignored", "203.0.113.9", []string{"198.51.100.1"}, "203.0.113.9"},
		{"trusted peer, one client", "10.1.2.3", []string{"198.51.100.1"}, "198.51.100.1"},
		{"client cannot spoof a hop to the left", "10.1.2.3", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1"},
		{"chained trusted proxies are skipped", "192.0.2.1", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"several headers are one list", "10.1.2.3", []string{"6.6.6.6", "198.51.100.1"}, "198.51.100.1"},
		{"every hop a proxy: the first", "10.1.2.3", []string{"10.0.0.7, 10.0.0.8"}, "10.0.0.7"},
		{"no header: the peer", "10.1.2.3", nil, "10.1.2.3"},
		{"garbage header: the peer", "10.1.2.3", []string{"198.51.100.1, not-an-ip"}, "10.1.2.3"},
		{"IPv6 loopback proxy", "::1", []string{"2001:db8::5"}, "2001:db8::5"},
		{"mapped peer", "::ffff:10.1.2.3", []string{"198.51.100.1"}, "198.51.100.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ps.clientIP(netip.MustParseAddr(tt.peer), tt.xff).String(); got != tt.want {
				t.Errorf("clientIP = %s, want %s", got, tt.want)
			}
		})
	}
	if got := proxies(nil).clientIP(netip.MustParseAddr("10.1.2.3"), []string{"198.51.100.1"}).String(); got != "10.1.2.3" {
		t.Errorf("no trusted proxies: clientIP = %s, want the peer", got)
	}
}

func TestParseProxiesRefusesGarbage(t *testing.T) {
	for _, bad := range []string{"", "10.0.0.0/33", "proxy.lan", "10.0.0.1-10.0.0.9"} {
		if _, err := parseProxies([]string{bad}); err == nil {
			t.Errorf("parseProxies(%q) accepted", bad)
		}
	}
}
