package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
)

func TestHostAllowlist(t *testing.T) {
	l := newHostAllowlist("0.0.0.0", []string{"chat.example.com", "Admin.Example.com:8443", "[2001:db8::1]"})
	tests := []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LOCALHOST:8420", true},
		{"localhost.:1", true},
		{"127.0.0.1", true},
		{"127.0.0.1:8420", true},
		{"127.8.9.10:80", true},
		{"[::1]", true},
		{"[::1]:8420", true},
		{"chat.example.com", true},
		{"chat.example.com:443", true},
		{"admin.example.com:8443", true},
		{"admin.example.com:8444", false},
		{"admin.example.com", false},
		{"[2001:DB8:0::1]:9", true},
		{"0.0.0.0", false}, // a wildcard bind is no name
		{"evil.example", false},
		{"chat.example.com.evil.example", false},
		{"", false},
		{":8420", false},
		{"::1", false},
		{"[::1", false},
		{"localhost:http", false},
		{"localhost:99999", false},
		{"localhost:-1", false},
	}
	for _, tt := range tests {
		if got := l.allows(tt.host); got != tt.want {
			t.Errorf("allows(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
	if !newHostAllowlist("192.0.2.7", nil).allows("192.0.2.7:8420") {
		t.Error("a concrete bind address is not allowed as Host")
	}
	if !newHostAllowlist("silas.lan", nil).allows("SILAS.lan:8420") {
		t.Error("a bind host name is not allowed as Host")
	}
}

func TestParseAllowedHost(t *testing.T) {
	for _, bad := range []string{"", "https://chat.example.com", "chat.example.com/x", "*.example.com", "a b", "user@host", "host:port", "::1"} {
		if _, err := parseAllowedHost(bad); err == nil {
			t.Errorf("parseAllowedHost(%q) accepted", bad)
		}
	}
	if _, err := New(Options{Gateway: &fakeGateway{}, AllowedHosts: []string{"https://x"}}); err == nil ||
		!strings.Contains(err.Error(), "allowed host") {
		t.Errorf("New with a URL as allowed host: %v", err)
	}
}

// TestHostHeaderGuardsEveryRoute: a DNS-rebinding page reaches the server
// with its own name in Host; every route, the WebSocket upgrades included,
// refuses it and says which key to set.
func TestHostHeaderGuardsEveryRoute(t *testing.T) {
	s, gw := startServer(t, Options{
		ChatbotEnabled: true, OwnerToken: "tok", AllowedHosts: []string{"chat.example.com"},
		Extra: map[string]fasthttp.RequestHandler{"GET /x": func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("x") }},
	})
	for _, path := range []string{"/health", "/metrics", "/x", "/", "/ws", "/chat"} {
		req, _ := http.NewRequest(http.MethodGet, httpURL(s, path), nil)
		req.Host = "rebind.evil.example"
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var ev messages.ErrorEvent
		err = json.NewDecoder(resp.Body).Decode(&ev)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest || err != nil || ev.Code != messages.CodeHostNotAllowed ||
			!strings.Contains(ev.Message, "silas.channels.web.allowed_hosts") {
			t.Errorf("GET %s with a foreign Host: %d %+v (%v)", path, resp.StatusCode, ev, err)
		}
	}
	h := http.Header{"Host": {"rebind.evil.example"}}
	if _, resp, err := dial(t, s, "/ws", h); err == nil || resp == nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("websocket upgrade with a foreign Host: %v %v", resp, err)
	}
	for _, host := range []string{"localhost", "chat.example.com:443", "[::1]"} {
		req, _ := http.NewRequest(http.MethodGet, httpURL(s, "/health"), nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /health with Host %q: %d", host, resp.StatusCode)
		}
	}
	if _, _, err := dial(t, s, "/ws", http.Header{"Host": {"chat.example.com"}}); err != nil {
		t.Errorf("websocket upgrade with an allowed Host: %v", err)
	}
	gw.conn(t, 0) // attached after the handshake returns
	gw.mu.Lock()
	n := len(gw.conns)
	gw.mu.Unlock()
	if n != 1 {
		t.Errorf("%d sockets attached, want only the allowed one", n)
	}
}
