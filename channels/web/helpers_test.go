package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/silas-ai/silas/messages"
)

// checkFor polls fn until it returns nil or timeout passes, then fails with
// fn's last error.
func checkFor(t testing.TB, timeout time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %v", timeout, err)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
}

// fakeGateway records sockets and, by default, echoes each frame's Raw back.
// Frames of type "kick" get an unauthorized error and close 4001; frames of
// type "flood" make it send large events until Send reports false.
type fakeGateway struct {
	noConn bool // Attach returns nil

	mu    sync.Mutex
	conns []*fakeConn
}

type fakeConn struct {
	info   messages.ConnInfo
	out    messages.Outbound
	closed atomic.Int32

	mu        sync.Mutex
	frames    []*messages.Frame
	floodSent int
	floodFull bool
}

func (g *fakeGateway) Attach(info messages.ConnInfo, out messages.Outbound) messages.Conn {
	c := &fakeConn{info: info, out: out}
	g.mu.Lock()
	g.conns = append(g.conns, c)
	g.mu.Unlock()
	if g.noConn {
		return nil
	}
	return c
}

// conn returns the i-th attached conn once it exists.
func (g *fakeGateway) conn(t testing.TB, i int) *fakeConn {
	t.Helper()
	var c *fakeConn
	checkFor(t, 5*time.Second, func() error {
		g.mu.Lock()
		defer g.mu.Unlock()
		if len(g.conns) <= i {
			return errors.New("not attached yet")
		}
		c = g.conns[i]
		return nil
	})
	return c
}

func (c *fakeConn) Frame(f *messages.Frame) {
	c.mu.Lock()
	c.frames = append(c.frames, f)
	c.mu.Unlock()
	switch f.Type {
	case "kick":
		c.out.Send(messages.NewError(messages.CodeUnauthorized, "auth"))
		c.out.Close(4001, "unauthorized")
	case "flood":
		big := json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`)
		n := 0
		for ; n < 10_000 && c.out.Send(big); n++ {
		}
		c.mu.Lock()
		c.floodSent, c.floodFull = n, n < 10_000
		c.mu.Unlock()
	default:
		c.out.Send(json.RawMessage(f.Raw))
	}
}

func (c *fakeConn) Closed() { c.closed.Add(1) }

func (c *fakeConn) frameCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.frames)
}

// startServer starts a server on 127.0.0.1:0 with opts (Gateway defaulted to
// a fakeGateway) and shuts it down when the test ends.
func startServer(t testing.TB, opts Options) (*Server, *fakeGateway) {
	t.Helper()
	gw, _ := opts.Gateway.(*fakeGateway)
	if opts.Gateway == nil {
		gw = &fakeGateway{}
		opts.Gateway = gw
	}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Listen(); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return s, gw
}

func httpURL(s *Server, path string) string { return "http://" + s.Addr().String() + path }

// dial opens a WebSocket to path with optional headers and subprotocols.
func dial(t testing.TB, s *Server, path string, header http.Header, protocols ...string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second, Subprotocols: protocols}
	ws, resp, err := d.Dial("ws://"+s.Addr().String()+path, header)
	if ws != nil {
		t.Cleanup(func() { _ = ws.Close() })
	}
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	return ws, resp, err
}

// mustDial is dial that fails the test on error.
func mustDial(t testing.TB, s *Server, path string, protocols ...string) *websocket.Conn {
	t.Helper()
	ws, _, err := dial(t, s, path, nil, protocols...)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	return ws
}

// send writes one text frame.
func send(t testing.TB, ws *websocket.Conn, frame string) {
	t.Helper()
	if err := ws.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// next reads one message with a deadline.
func next(t testing.TB, ws *websocket.Conn) (string, error) {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, b, err := ws.ReadMessage()
	return string(b), err
}

// mustNext is next that fails the test on error.
func mustNext(t testing.TB, ws *websocket.Conn) string {
	t.Helper()
	m, err := next(t, ws)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return m
}

// nextError reads one message and decodes it as an ErrorEvent.
func nextError(t testing.TB, ws *websocket.Conn) messages.ErrorEvent {
	t.Helper()
	var ev messages.ErrorEvent
	m := mustNext(t, ws)
	if err := json.Unmarshal([]byte(m), &ev); err != nil || ev.Type != "error" {
		t.Fatalf("expected an error event, got %q (%v)", m, err)
	}
	return ev
}

// expectClose reads until the close frame and checks its code.
func expectClose(t testing.TB, ws *websocket.Conn, code int, reason string) {
	t.Helper()
	for {
		_, err := next(t, ws)
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("expected close %d, got %v", code, err)
		}
		if ce.Code != code || ce.Text != reason {
			t.Fatalf("close = %d %q, want %d %q", ce.Code, ce.Text, code, reason)
		}
		return
	}
}
