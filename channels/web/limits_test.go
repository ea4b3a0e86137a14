package web

import (
	"bufio"
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

// dialRefused dials path expecting the upgrade to be refused, and returns
// the HTTP status and the error event of the body.
func dialRefused(t *testing.T, s *Server, path string, header http.Header) (int, messages.ErrorEvent, http.Header) {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	ws, resp, err := d.Dial("ws://"+s.Addr().String()+path, header)
	if err == nil {
		_ = ws.Close()
		t.Fatalf("dial %s was admitted, want a refusal", path)
	}
	if resp == nil {
		t.Fatalf("dial %s: no HTTP answer: %v", path, err)
	}
	defer resp.Body.Close()
	var ev messages.ErrorEvent
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("dial %s: refusal body %q is not an error event: %v", path, b, err)
	}
	return resp.StatusCode, ev, resp.Header
}

// admitted waits until pool p counts n sockets: serveWS admits before the
// socket's goroutine counts it.
func admitted(t *testing.T, s *Server, p pool, n int) {
	t.Helper()
	checkFor(t, 5*time.Second, func() error {
		if got := s.admit.open(p); got != n {
			return fmt.Errorf("pool %d counts %d sockets, want %d", p, got, n)
		}
		return nil
	})
}

func TestCustomerSocketsCappedPerIPAndTotal(t *testing.T) {
	s, _ := startServer(t, Options{ChatbotEnabled: true, OwnerToken: "tok", MaxSockets: 5, MaxSocketsPerIP: 3})
	var first *websocket.Conn
	for i := range 3 {
		ws := mustDial(t, s, "/chat")
		if i == 0 {
			first = ws
		}
	}
	admitted(t, s, poolCustomer, 3)
	status, ev, _ := dialRefused(t, s, "/chat", nil)
	if status != http.StatusTooManyRequests || ev.Code != messages.CodeTooManySockets || !strings.Contains(ev.Message, "silas.channels.web.max_sockets_per_ip") {
		t.Errorf("fourth socket from one IP: %d %+v", status, ev)
	}

	// The owner is counted apart: a server full of customers admits it,
	// with the token in the subprotocol or in its first frame.
	if _, _, err := dial(t, s, "/ws", nil, "bearer.tok"); err != nil {
		t.Fatalf("owner with a bearer subprotocol refused: %v", err)
	}
	ws := mustDial(t, s, "/ws")
	admitted(t, s, poolPending, 1)
	send(t, ws, `{"type":"auth","token":"tok"}`)
	admitted(t, s, poolOwner, 2)
	admitted(t, s, poolPending, 0)
	if got := mustNext(t, ws); got != `{"type":"auth","token":"tok"}` {
		t.Errorf("the auth frame did not reach the session: %s", got)
	}

	// A customer that leaves makes room again.
	_ = first.Close()
	admitted(t, s, poolCustomer, 2)
	mustDial(t, s, "/chat")
	admitted(t, s, poolCustomer, 3)

	// The total cap, with other clients' addresses (a trusted proxy's
	// X-Forwarded-For) so that the per-IP cap is not what stops them.
	s2, _ := startServer(t, Options{ChatbotEnabled: true, MaxSockets: 2, MaxSocketsPerIP: 2, TrustedProxies: []string{"127.0.0.1"}})
	for i := range 2 {
		if _, _, err := dial(t, s2, "/chat", http.Header{"X-Forwarded-For": {fmt.Sprintf("198.51.100.%d", i+1)}}); err != nil {
			t.Fatal(err)
		}
	}
	admitted(t, s2, poolCustomer, 2)
	status, ev, h := dialRefused(t, s2, "/chat", http.Header{"X-Forwarded-For": {"198.51.100.9"}})
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(ev.Message, "silas.channels.web.max_sockets)") {
		t.Errorf("third socket over max_sockets: %d %+v", status, ev)
	}
}

func TestUnauthenticatedSocketsCapped(t *testing.T) {
	s, _ := startServer(t, Options{OwnerToken: "tok", MaxUnauthenticatedSockets: 3, MaxUnauthenticatedSocketsPerIP: 2})
	a := mustDial(t, s, "/ws")
	mustDial(t, s, "/ws")
	admitted(t, s, poolPending, 2)
	status, ev, _ := dialRefused(t, s, "/ws", nil)
	if status != http.StatusTooManyRequests || !strings.Contains(ev.Message, "max_unauthenticated_sockets_per_ip") {
		t.Errorf("third unauthenticated socket from one IP: %d %+v", status, ev)
	}
	// A wrong token is no promotion: the socket still counts as waiting.
	send(t, a, `{"type":"auth","token":"guess"}`)
	mustNext(t, a)
	if n := s.admit.open(poolPending); n != 2 {
		t.Errorf("after a wrong token %d sockets wait, want 2", n)
	}
	// The owner with its token in the subprotocol does not wait.
	if _, _, err := dial(t, s, "/ws", nil, "bearer.tok"); err != nil {
		t.Errorf("owner refused while unauthenticated sockets are full: %v", err)
	}
}

func TestOwnerSocketsCapped(t *testing.T) {
	s, gw := startServer(t, Options{OwnerToken: "tok", MaxOwnerSockets: 1})
	mustDial(t, s, "/ws", "bearer.tok")
	admitted(t, s, poolOwner, 1)
	status, ev, _ := dialRefused(t, s, "/ws", http.Header{"Sec-WebSocket-Protocol": {"bearer.tok"}})
	if status != http.StatusServiceUnavailable || !strings.Contains(ev.Message, "max_owner_sockets") {
		t.Errorf("second owner socket: %d %+v", status, ev)
	}
	ws := mustDial(t, s, "/ws")
	send(t, ws, `{"type":"auth","token":"tok"}`)
	if ev := nextError(t, ws); ev.Code != messages.CodeTooManySockets || !strings.Contains(ev.Message, "max_owner_sockets") {
		t.Errorf("auth over max_owner_sockets: %+v", ev)
	}
	expectClose(t, ws, CloseTryAgainLater, "too many sockets: silas.channels.web.max_owner_sockets")
	late := gw.conn(t, 1)
	if late.info.BearerToken != "" { // attached in the other order
		late = gw.conn(t, 0)
	}
	if n := late.frameCount(); n != 0 {
		t.Errorf("the refused auth frame reached the session (%d frames)", n)
	}
	admitted(t, s, poolPending, 0)
}

func TestTrustedProxyForwardsTheClientIP(t *testing.T) {
	for _, trusted := range []bool{true, false} {
		t.Run(fmt.Sprint("trusted=", trusted), func(t *testing.T) {
			opts := Options{ChatbotEnabled: true, MaxSocketsPerIP: 1}
			if trusted {
				opts.TrustedProxies = []string{"127.0.0.0/8"}
			}
			s, gw := startServer(t, opts)
			xff := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {"6.6.6.6, " + ip}} }
			if _, _, err := dial(t, s, "/chat", xff("198.51.100.1")); err != nil {
				t.Fatal(err)
			}
			info := gw.conn(t, 0).info
			if status, _, _ := dialRefused(t, s, "/chat", xff("198.51.100.1")); status != http.StatusTooManyRequests {
				t.Errorf("second socket of one client: %d, want 429", status)
			}
			_, _, err := dial(t, s, "/chat", xff("198.51.100.2"))
			if trusted {
				if info.RemoteIP != "198.51.100.1" || info.PeerIP != "127.0.0.1" {
					t.Errorf("conn info %+v: want the forwarded client and the proxy peer", info)
				}
				if err != nil {
					t.Errorf("another client behind the proxy refused: %v", err)
				}
			} else {
				if info.RemoteIP != "127.0.0.1" {
					t.Errorf("untrusted X-Forwarded-For was believed: %+v", info)
				}
				if err == nil {
					t.Error("an untrusted X-Forwarded-For escaped the per-IP cap")
				}
			}
		})
	}
}

// TestIdleCustomerSocketsClose: a customer socket that sends no message is
// closed with 4008 after the idle timeout; one that talked stays, and so
// does the owner's.
func TestIdleCustomerSocketsClose(t *testing.T) {
	s, _ := startServer(t, Options{ChatbotEnabled: true, OwnerToken: "tok", IdleTimeout: time.Second}) // the talker must speak within it, even on a loaded machine
	owner := mustDial(t, s, "/ws", "bearer.tok")
	talker := mustDial(t, s, "/chat")
	send(t, talker, `{"type":"message","text":"hi"}`)
	mustNext(t, talker)
	idler := mustDial(t, s, "/chat") // opened last, so its timeout ends last
	if ev := nextError(t, idler); ev.Code != messages.CodeIdleTimeout {
		t.Errorf("idle socket got %+v, want idle_timeout", ev)
	}
	expectClose(t, idler, CloseIdle, "idle: no message within 1s")
	for name, ws := range map[string]*websocket.Conn{"talker": talker, "owner": owner} {
		send(t, ws, `{"type":"message","text":"still here"}`)
		if got, err := next(t, ws); err != nil || !strings.Contains(got, "still here") {
			t.Errorf("%s closed along with the idle socket: %q %v", name, got, err)
		}
	}
	admitted(t, s, poolCustomer, 1)
}

// readUntilClosed reads from conn until the server closes it, within
// limit (which only bounds a failing test), and returns what it sent.
func readUntilClosed(t *testing.T, conn net.Conn, limit time.Duration) string {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(limit))
	b, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept a slow client's connection open for %v", limit)
	}
	return string(b)
}

func TestSlowClientsAreCutOff(t *testing.T) {
	var served atomic.Int32
	s, _ := startServer(t, Options{
		HeaderTimeout: 200 * time.Millisecond, BodyTimeout: 200 * time.Millisecond,
		Extra: map[string]fasthttp.RequestHandler{"POST /upload": func(ctx *fasthttp.RequestCtx) { served.Add(1) }},
	})
	tests := []struct {
		name string
		send string
	}{
		{"headers never finish", "GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: "},
		{"nothing at all", ""},
		{"body never finishes", "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n0123456789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tt.send); err != nil {
				t.Fatal(err)
			}
			if got := readUntilClosed(t, conn, 20*time.Second); strings.Contains(got, " 200 ") {
				t.Errorf("a slow request was answered: %q", got)
			}
		})
	}
	if n := served.Load(); n != 0 {
		t.Errorf("the handler ran %d times for a body that never arrived", n)
	}
	// A prompt client on the same server is served.
	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Errorf("prompt client: %q %v", line, err)
	}
}
