package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
)

func httpGet(t *testing.T, url string, header http.Header) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

func TestHealth(t *testing.T) {
	s, gw := startServer(t, Options{})
	code, body, h := httpGet(t, httpURL(s, "/health"), nil)
	if code != 200 || body != `{"status":"ok","connections":0}` || h.Get("Content-Type") != "application/json" {
		t.Fatalf("health = %d %q %q", code, body, h.Get("Content-Type"))
	}
	ws := mustDial(t, s, "/ws")
	gw.conn(t, 0)
	checkFor(t, 5*time.Second, func() error {
		if _, body, _ := httpGet(t, httpURL(s, "/health"), nil); body != `{"status":"ok","connections":1}` {
			return fmt.Errorf("health = %s", body)
		}
		return nil
	})
	_ = ws.Close()
	checkFor(t, 5*time.Second, func() error {
		if _, body, _ := httpGet(t, httpURL(s, "/health"), nil); body != `{"status":"ok","connections":0}` {
			return fmt.Errorf("health = %s", body)
		}
		return nil
	})
}

func TestHealthUsesCallback(t *testing.T) {
	s, _ := startServer(t, Options{Health: func() int { return 42 }})
	if _, body, _ := httpGet(t, httpURL(s, "/health"), nil); body != `{"status":"ok","connections":42}` {
		t.Errorf("health = %s", body)
	}
}

func TestMetricsNeedAToken(t *testing.T) {
	s, _ := startServer(t, Options{OwnerToken: "owner-tok", MetricsToken: "scrape-tok"})
	ws := mustDial(t, s, "/ws")
	send(t, ws, `{"type":"message","text":"hi"}`)
	mustNext(t, ws)
	send(t, ws, `{bad`)
	nextError(t, ws)
	for _, auth := range []string{"", "Bearer wrong", "Bearer owner-tok-", "Basic b3duZXItdG9r"} { // loopback is no credential
		code, body, h := httpGet(t, httpURL(s, "/metrics"), http.Header{"Authorization": {auth}})
		if code != http.StatusUnauthorized || !strings.Contains(body, "metrics_token") || h.Get("WWW-Authenticate") == "" {
			t.Errorf("auth %q: /metrics = %d %s", auth, code, body)
		}
	}
	for _, auth := range []string{"Bearer owner-tok", "bearer scrape-tok"} {
		checkFor(t, 5*time.Second, func() error { // counters update just after the write returns
			code, body, h := httpGet(t, httpURL(s, "/metrics"), http.Header{"Authorization": {auth}})
			if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain; version=0.0.4") {
				return fmt.Errorf("auth %q: /metrics = %d %s", auth, code, h.Get("Content-Type"))
			}
			for _, want := range []string{
				"silas_ws_connections 1\n",
				"silas_ws_frames_in_total 2\n",
				"silas_ws_frames_out_total 2\n",
				`silas_errors_total{code="invalid_json"} 1` + "\n",
			} {
				if !strings.Contains(body, want) {
					return fmt.Errorf("auth %q: /metrics lacks %q:\n%s", auth, want, body)
				}
			}
			return nil
		})
	}
}

// TestMetricsTokens drives the handler directly, from loopback and from a
// remote address: only the owner or metrics token opens /metrics.
func TestMetricsTokens(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		auth string
		want int
	}{
		{"no header", Options{OwnerToken: "tok"}, "", 401},
		{"wrong token", Options{OwnerToken: "tok"}, "Bearer nope", 401},
		{"owner token", Options{OwnerToken: "tok"}, "Bearer tok", 200},
		{"auth token stands for the owner's", Options{AuthToken: "tok"}, "Bearer tok", 200},
		{"metrics token", Options{OwnerToken: "tok", MetricsToken: "scrape"}, "Bearer scrape", 200},
		{"scheme is case-insensitive", Options{OwnerToken: "tok"}, "bearer tok", 200},
		{"basic auth", Options{OwnerToken: "tok"}, "Basic dG9r", 401},
		{"no token configured", Options{}, "Bearer ", 401},
	}
	for _, tt := range tests {
		for _, remote := range []string{"127.0.0.1", "203.0.113.5"} {
			t.Run(tt.name+" from "+remote, func(t *testing.T) {
				tt.opts.Gateway = &fakeGateway{}
				s, err := New(tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				var req fasthttp.Request
				req.SetRequestURI("/metrics")
				req.SetHost("localhost")
				if tt.auth != "" {
					req.Header.Set("Authorization", tt.auth)
				}
				var ctx fasthttp.RequestCtx
				ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(remote), Port: 5555}, nil)
				s.handle(&ctx)
				if got := ctx.Response.StatusCode(); got != tt.want {
					t.Errorf("status = %d, want %d (body %s)", got, tt.want, ctx.Response.Body())
				}
			})
		}
	}
}

func TestBearerMatches(t *testing.T) {
	tokens := [][]byte{[]byte("tok"), []byte("scrape")}
	tests := []struct {
		auth string
		want bool
	}{
		{"Bearer tok", true},
		{"BEARER scrape", true},
		{"Bearer tok2", false},
		{"Bearer to", false},
		{"Bearer ", false},
		{"tok", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := bearerMatches(tt.auth, tokens); got != tt.want {
			t.Errorf("bearerMatches(%q) = %v, want %v", tt.auth, got, tt.want)
		}
	}
	if bearerMatches("Bearer ", nil) {
		t.Error("no tokens configured, yet an empty bearer matched")
	}
}

func TestRoutes(t *testing.T) {
	static := func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("static " + string(ctx.Path())) }
	s, _ := startServer(t, Options{
		Static: static,
		Extra: map[string]fasthttp.RequestHandler{
			"GET /api/":      func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("api") },
			"GET /api/v2/":   func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("api v2") },
			"POST /secrets/": func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("secret " + string(ctx.Path())) },
		},
	})
	tests := []struct {
		method, path string
		wantCode     int
		wantBody     string
	}{
		{"GET", "/", 200, "static /"},
		{"GET", "/app.js", 200, "static /app.js"},
		{"GET", "/api/x", 200, "api"},
		{"GET", "/api/v2/x", 200, "api v2"},
		{"POST", "/secrets/abc", 200, "secret /secrets/abc"},
		{"POST", "/nothing", 404, `"code":"not_found"`},
		{"POST", "/health", 405, `"code":"method_not_allowed"`},
		{"GET", "/chat", 404, `"code":"not_found"`},
		{"GET", "/ws", 400, `"code":"bad_request"`}, // not an upgrade
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, httpURL(s, tt.path), nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantCode || !strings.Contains(string(b), tt.wantBody) {
				t.Errorf("= %d %s, want %d containing %s", resp.StatusCode, b, tt.wantCode, tt.wantBody)
			}
		})
	}
}

func TestUnknownPathWithoutStatic(t *testing.T) {
	s, _ := startServer(t, Options{})
	code, body, _ := httpGet(t, httpURL(s, "/"), nil)
	var ev messages.ErrorEvent
	if err := json.Unmarshal([]byte(body), &ev); err != nil || code != 404 || ev.Code != messages.CodeNotFound || ev.Message == "" {
		t.Errorf("GET / = %d %s", code, body)
	}
}

func TestUpgradeOrigin(t *testing.T) {
	s, gw := startServer(t, Options{AllowedOrigins: []string{"https://app.example.com"}})
	self := "http://" + s.Addr().String()
	tests := []struct {
		name     string
		origin   string
		wantCode int // 101 when upgraded
	}{
		{"no origin", "", 101},
		{"same origin", self, 101},
		{"allowed origin", "https://app.example.com", 101},
		{"foreign origin", "https://evil.example", 403},
		{"same host, other scheme", "https://" + s.Addr().String(), 403},
		{"null origin", "null", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw.mu.Lock()
			before := len(gw.conns)
			gw.mu.Unlock()
			h := http.Header{}
			if tt.origin != "" {
				h.Set("Origin", tt.origin)
			}
			ws, resp, err := dial(t, s, "/ws", h)
			if resp == nil {
				t.Fatalf("no handshake response: %v", err)
			}
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("status = %d, want %d (err %v)", resp.StatusCode, tt.wantCode, err)
			}
			if tt.wantCode == 101 {
				send(t, ws, `{"type":"message","text":"hi"}`)
				mustNext(t, ws)
				return
			}
			gw.mu.Lock()
			after := len(gw.conns)
			gw.mu.Unlock()
			if ws != nil || after != before {
				t.Errorf("refused origin still reached the gateway")
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		protocols []string
		wantToken string
		wantProto string
	}{
		{"query string is ignored", "/ws?token=s3cret", nil, "", ""},
		{"subprotocol bearer.<token>", "/ws", []string{"bearer.s3cret"}, "s3cret", "bearer.s3cret"},
		{"subprotocol pair", "/ws", []string{"bearer", "s3cret"}, "s3cret", "bearer"},
		{"query and subprotocol", "/ws?token=other", []string{"bearer.s3cret"}, "s3cret", "bearer.s3cret"},
		{"other subprotocol", "/ws", []string{"chat"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, gw := startServer(t, Options{})
			ws, resp, err := dial(t, s, tt.path, nil, tt.protocols...)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != tt.wantProto || ws.Subprotocol() != tt.wantProto {
				t.Errorf("echoed subprotocol = %q, want %q", got, tt.wantProto)
			}
			info := gw.conn(t, 0).info
			if info.BearerToken != tt.wantToken || info.Path != "/ws" || info.RemoteIP != "127.0.0.1" || info.ID == "" {
				t.Errorf("ConnInfo = %+v, want token %q", info, tt.wantToken)
			}
		})
	}
}

func TestBearerFromProtocols(t *testing.T) {
	tests := []struct {
		header, token, echo string
	}{
		{"", "", ""},
		{"bearer.abc", "abc", "bearer.abc"},
		{"chat, bearer.abc", "abc", "bearer.abc"},
		{"bearer, abc", "abc", "bearer"},
		{"bearer,abc", "abc", "bearer"},
		{"bearer", "", ""},
		{"bearer.", "", ""},
		{"Bearer.abc", "", ""},
		{"bearer, , x", "", ""},
	}
	for _, tt := range tests {
		token, echo := bearerFromProtocols(tt.header)
		if token != tt.token || echo != tt.echo {
			t.Errorf("bearerFromProtocols(%q) = %q, %q; want %q, %q", tt.header, token, echo, tt.token, tt.echo)
		}
	}
}

func TestInvalidJSONKeepsConnection(t *testing.T) {
	s, gw := startServer(t, Options{})
	ws := mustDial(t, s, "/ws")
	tests := []struct {
		frame string
		want  string // error code, or "" for an echo
	}{
		{`{"type":"message"`, string(messages.CodeInvalidJSON)},
		{`{"text":"no type"}`, string(messages.CodeInvalidJSON)},
		{`{"type":7}`, string(messages.CodeInvalidJSON)},
		{`{"type":"message","text":"still here"}`, ""},
	}
	for _, tt := range tests {
		send(t, ws, tt.frame)
		if tt.want == "" {
			if got := mustNext(t, ws); got != tt.frame {
				t.Errorf("echo = %s, want %s", got, tt.frame)
			}
			continue
		}
		if ev := nextError(t, ws); string(ev.Code) != tt.want || !strings.HasPrefix(ev.Message, messages.CodeInvalidJSON.Message()) {
			t.Errorf("frame %s: error %+v, want code %s", tt.frame, ev, tt.want)
		}
	}
	if n := gw.conn(t, 0).frameCount(); n != 1 {
		t.Errorf("Conn got %d frames, want only the valid one", n)
	}
}

func TestBinaryFrameNotSupported(t *testing.T) {
	s, _ := startServer(t, Options{})
	ws := mustDial(t, s, "/ws")
	if err := ws.WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if ev := nextError(t, ws); ev.Code != messages.CodeNotSupported {
		t.Errorf("code = %s, want not_supported", ev.Code)
	}
	send(t, ws, `{"type":"message"}`)
	mustNext(t, ws)
}

func TestOversizedFrame(t *testing.T) {
	tests := []struct {
		name string
		kind int
	}{
		{"text", websocket.TextMessage},
		{"binary", websocket.BinaryMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, gw := startServer(t, Options{MaxFrameBytes: 1024})
			ws := mustDial(t, s, "/ws")
			payload := `{"type":"message","text":"` + strings.Repeat("a", 1000) + `"}` // just over the limit
			if err := ws.WriteMessage(tt.kind, []byte(payload)); err != nil {
				t.Fatal(err)
			}
			if ev := nextError(t, ws); ev.Code != messages.CodeFrameTooLarge {
				t.Fatalf("code = %s, want frame_too_large", ev.Code)
			}
			expectClose(t, ws, websocket.CloseMessageTooBig, "frame too large")
			c := gw.conn(t, 0)
			checkFor(t, 5*time.Second, func() error {
				if c.closed.Load() != 1 {
					return errors.New("Closed not called")
				}
				return nil
			})
			if c.frameCount() != 0 {
				t.Error("oversized frame reached the Conn")
			}
		})
	}
}

func TestFrameAtLimitPasses(t *testing.T) {
	s, _ := startServer(t, Options{MaxFrameBytes: 1024})
	ws := mustDial(t, s, "/ws")
	prefix, suffix := `{"type":"message","text":"`, `"}`
	frame := prefix + strings.Repeat("a", 1024-len(prefix)-len(suffix)) + suffix
	send(t, ws, frame)
	if got := mustNext(t, ws); got != frame {
		t.Errorf("echo differs")
	}
}

func TestRateLimitPerIP(t *testing.T) {
	s, gw := startServer(t, Options{MessagesPerMinutePerIP: 3})
	a := mustDial(t, s, "/ws")
	b := mustDial(t, s, "/ws")
	for i := range 2 {
		send(t, a, fmt.Sprintf(`{"type":"message","text":"a%d"}`, i))
		mustNext(t, a)
	}
	send(t, b, `{"type":"message","text":"b0"}`) // third from this IP: allowed
	mustNext(t, b)
	send(t, b, `{"type":"message","text":"b1"}`) // fourth: over the limit
	if ev := nextError(t, b); ev.Code != messages.CodeRateLimited {
		t.Fatalf("code = %s, want rate_limited", ev.Code)
	}
	send(t, a, `{"type":"message","text":"a2"}`) // the limit spans both sockets
	if ev := nextError(t, a); ev.Code != messages.CodeRateLimited {
		t.Fatalf("code = %s, want rate_limited", ev.Code)
	}
	if total := gw.conn(t, 0).frameCount() + gw.conn(t, 1).frameCount(); total != 3 {
		t.Errorf("Conns got %d frames, want 3", total)
	}
	// The connection stays open: control frames still work.
	if err := a.WriteControl(websocket.PingMessage, nil, time.Now().Add(time.Second)); err != nil {
		t.Errorf("socket closed after rate limiting: %v", err)
	}
}

func TestConnCloses4001(t *testing.T) {
	s, gw := startServer(t, Options{})
	ws := mustDial(t, s, "/ws")
	send(t, ws, `{"type":"kick"}`)
	if ev := nextError(t, ws); ev.Code != messages.CodeUnauthorized || ev.RequestType != "auth" {
		t.Errorf("error before close = %+v", ev) // queued events go out before the close frame
	}
	expectClose(t, ws, 4001, "unauthorized")
	c := gw.conn(t, 0)
	checkFor(t, 5*time.Second, func() error {
		if c.closed.Load() != 1 {
			return errors.New("Closed not called")
		}
		return nil
	})
	if c.out.Send(messages.NewError(messages.CodeBusy, "")) {
		t.Error("Send after close reported true")
	}
}

func TestClosedExactlyOnceWhenClientLeaves(t *testing.T) {
	s, gw := startServer(t, Options{})
	ws := mustDial(t, s, "/ws")
	send(t, ws, `{"type":"message"}`)
	mustNext(t, ws)
	_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"), time.Now().Add(time.Second))
	c := gw.conn(t, 0)
	checkFor(t, 5*time.Second, func() error {
		if c.closed.Load() == 0 {
			return errors.New("Closed not called")
		}
		return nil
	})
	c.out.Close(1000, "again") // a late Close must not call Closed again
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := c.closed.Load(); n != 1 {
		t.Errorf("Closed called %d times", n)
	}
}

func TestNilConnFromGateway(t *testing.T) {
	s, _ := startServer(t, Options{Gateway: &fakeGateway{noConn: true}})
	ws := mustDial(t, s, "/ws")
	expectClose(t, ws, websocket.CloseInternalServerErr, "internal error")
}

func TestChatRoute(t *testing.T) {
	tests := []struct {
		name     string
		enabled  bool
		wantCode int
	}{
		{"disabled", false, 404},
		{"enabled", true, 101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, gw := startServer(t, Options{ChatbotEnabled: tt.enabled})
			_, resp, err := dial(t, s, "/chat", nil)
			if resp == nil || resp.StatusCode != tt.wantCode {
				t.Fatalf("dial /chat: resp %v err %v, want %d", resp, err, tt.wantCode)
			}
			if tt.enabled {
				if p := gw.conn(t, 0).info.Path; p != "/chat" {
					t.Errorf("Path = %q, want /chat", p)
				}
			}
		})
	}
}

func TestNonLoopbackHostNeedsToken(t *testing.T) {
	tests := []struct {
		host, token string
		wantErr     bool
	}{
		{"0.0.0.0", "", true},
		{"::", "", true},
		{"192.168.1.10", "", true},
		{"example.com", "", true},
		{"0.0.0.0", "tok", false},
		{"", "", false},
		{"127.0.0.1", "", false},
		{"127.0.0.2", "", false},
		{"::1", "", false},
		{"localhost", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.host+"/"+tt.token, func(t *testing.T) {
			_, err := New(Options{Host: tt.host, AuthToken: tt.token, Gateway: &fakeGateway{}})
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrAuthTokenRequired) || !strings.Contains(err.Error(), "silas.channels.web.auth_token") {
				t.Fatalf("err = %v, want ErrAuthTokenRequired naming silas.channels.web.auth_token", err)
			}
		})
	}
}

func TestInvalidOptions(t *testing.T) {
	gw := &fakeGateway{}
	h := func(*fasthttp.RequestCtx) {}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no gateway", Options{}, "Gateway is required"},
		{"bad port", Options{Gateway: gw, Port: 70000}, "port"},
		{"bad origin", Options{Gateway: gw, AllowedOrigins: []string{"evil"}}, "allowed origin"},
		{"bad route", Options{Gateway: gw, Extra: map[string]fasthttp.RequestHandler{"/x": h}}, "extra route"},
		{"lower-case method", Options{Gateway: gw, Extra: map[string]fasthttp.RequestHandler{"get /x": h}}, "extra route"},
		{"negative queue", Options{Gateway: gw, SendQueue: -1}, "SendQueue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalidOptions mentioning %q", err, tt.want)
			}
		})
	}
}

func TestShutdownClosesSockets(t *testing.T) {
	s, gw := startServer(t, Options{})
	a := mustDial(t, s, "/ws")
	b := mustDial(t, s, "/ws")
	gw.conn(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx) }()
	expectClose(t, a, websocket.CloseGoingAway, "server shutting down")
	expectClose(t, b, websocket.CloseGoingAway, "server shutting down")
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for i := range 2 {
		if n := gw.conn(t, i).closed.Load(); n != 1 {
			t.Errorf("conn %d: Closed called %d times before Shutdown returned", i, n)
		}
	}
	s.tasks.mu.Lock()
	if n := s.tasks.n; n != 0 {
		t.Errorf("%d goroutines still tracked after Shutdown", n)
	}
	s.tasks.mu.Unlock()
	if err := s.Listen(); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Listen after Shutdown = %v, want ErrServerClosed", err)
	}
	if _, _, err := dial(t, s, "/ws", nil); err == nil {
		t.Error("dial after Shutdown succeeded")
	}
}

// TestShutdownRightAfterListen stops servers that never served a request:
// fasthttp's Shutdown only closes the listeners its Serve has registered, so
// a Shutdown that wins the race with the serve goroutine must still stop it
// (valyala/fasthttp#1371).
func TestShutdownRightAfterListen(t *testing.T) {
	for i := range 20 {
		s, err := New(Options{Gateway: &fakeGateway{}, Host: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Listen(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = s.Shutdown(ctx)
		cancel()
		if err != nil {
			t.Fatalf("run %d: Shutdown right after Listen: %v", i, err)
		}
	}
}

func TestShutdownDeadlineCutsSilentClients(t *testing.T) {
	s, gw := startServer(t, Options{CloseGrace: time.Hour}) // would wait an hour for a close reply
	ws := mustDial(t, s, "/ws")
	_ = ws // never reads, so never answers the close frame
	gw.conn(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := s.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want deadline exceeded", err)
	}
	if n := gw.conn(t, 0).closed.Load(); n != 1 {
		t.Errorf("Closed called %d times", n)
	}
}

func TestSlowConsumer(t *testing.T) {
	s, gw := startServer(t, Options{SendQueue: 2, CloseGrace: 100 * time.Millisecond})
	ws := mustDial(t, s, "/ws")
	send(t, ws, `{"type":"flood"}`) // and never read
	c := gw.conn(t, 0)
	checkFor(t, 10*time.Second, func() error {
		if c.closed.Load() != 1 {
			return errors.New("slow consumer not closed")
		}
		return nil
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.floodFull {
		t.Errorf("Send never reported a full queue (sent %d)", c.floodSent)
	}
}

func TestKeepalive(t *testing.T) {
	s, gw := startServer(t, Options{PingInterval: 200 * time.Millisecond})

	// A client that reads answers pings (the library pongs) and stays.
	live := mustDial(t, s, "/ws")
	var pings atomic.Int32
	live.SetPingHandler(func(data string) error {
		pings.Add(1)
		return live.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	go func() { // ends when the test closes the socket
		for {
			if _, _, err := live.ReadMessage(); err != nil {
				return
			}
		}
	}()
	liveConn := gw.conn(t, 0)

	// A client that never reads never answers, and is dropped after two intervals.
	silent := mustDial(t, s, "/ws")
	_ = silent
	silentConn := gw.conn(t, 1)

	checkFor(t, 5*time.Second, func() error {
		if silentConn.closed.Load() != 1 {
			return errors.New("silent client not dropped")
		}
		if pings.Load() < 3 {
			return fmt.Errorf("live client got %d pings", pings.Load())
		}
		return nil
	})
	if liveConn.closed.Load() != 0 {
		t.Error("live client was dropped although it answered pings")
	}
}

func TestPprofOnlyWhenEnabled(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		srv, _ := startServer(t, Options{Pprof: enabled, OwnerToken: "tok"})
		code, _, _ := httpGet(t, httpURL(srv, "/debug/pprof/cmdline"), http.Header{"Authorization": {"Bearer tok"}})
		want := http.StatusNotFound
		if enabled {
			want = http.StatusOK
			if code, _, _ := httpGet(t, httpURL(srv, "/debug/pprof/cmdline"), nil); code != http.StatusUnauthorized {
				t.Errorf("pprof without a token: status %d, want 401", code)
			}
		}
		if code != want {
			t.Errorf("pprof enabled=%v: status %d, want %d", enabled, code, want)
		}
	}
}
