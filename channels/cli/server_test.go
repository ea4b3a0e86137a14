package cli

import (
	"encoding/json"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"
)

// frame is any client → server frame.
type frame struct {
	Type      string `json:"type"`
	Token     string `json:"token"`
	Text      string `json:"text"`
	MessageID string `json:"message_id"`
	RequestID string `json:"request_id"`
	Verdict   string `json:"verdict"`
	// connection cards' answers
	StepType       string `json:"step_type"`
	Action         string `json:"action"`
	SelectedAction string `json:"selected_action"`
	// secure_input_completed
	RefID   string `json:"ref_id"`
	Success bool   `json:"success"`
}

// wireLog records every frame a test server received, exactly as sent.
type wireLog struct {
	mu     sync.Mutex
	frames []string
}

func (l *wireLog) add(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.frames = append(l.frames, string(b))
}

func (l *wireLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.frames)
}

// peer is the server side of one test connection.
type peer struct {
	t    *testing.T
	conn *websocket.Conn
	// log, when set, records each frame read.
	log *wireLog
}

// read returns the next frame, or ok == false when the client closed.
func (p *peer) read() (f frame, ok bool) {
	if err := p.conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		p.t.Errorf("server: set deadline: %v", err)
		return f, false
	}
	_, data, err := p.conn.ReadMessage()
	if err != nil {
		if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
			p.t.Errorf("server: read: %v", err)
		}
		return f, false
	}
	if p.log != nil {
		p.log.add(data)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		p.t.Errorf("server: bad frame %s: %v", data, err)
		return f, false
	}
	return f, true
}

func (p *peer) send(v any) {
	if err := p.conn.WriteJSON(v); err != nil {
		p.t.Errorf("server: write: %v", err)
	}
}

// answer replies to a chat message as the real server does.
func (p *peer) answer(f frame, text string) {
	p.send(map[string]string{"type": "ack", "message_id": f.MessageID})
	p.send(map[string]string{"type": "message", "text": text, "sender": "silas",
		"timestamp": "2026-01-02T03:04:05Z", "reply_to": f.MessageID})
}

// closeWith performs a close handshake with code: send the close frame, then
// read until the client's close reply so no unread data resets the socket.
func (p *peer) closeWith(code int, text string) {
	msg := websocket.FormatCloseMessage(code, text)
	if err := p.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(5*time.Second)); err != nil {
		p.t.Errorf("server: close: %v", err)
		return
	}
	_ = p.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, _, err := p.conn.ReadMessage(); err != nil {
			return
		}
	}
}

// startServer serves the chat protocol on a loopback port and runs script
// for each connection that authenticates with token ("" means no auth
// message is expected). It returns the WebSocket URL.
func startServer(t *testing.T, token string, script func(p *peer)) string {
	t.Helper()
	return startLoggedServer(t, token, nil, script)
}

// startLoggedServer is startServer that records in log every frame the
// connections send, the auth frame included.
func startLoggedServer(t *testing.T, token string, log *wireLog, script func(p *peer)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := websocket.FastHTTPUpgrader{CheckOrigin: func(*fasthttp.RequestCtx) bool { return true }}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) != "/ws" || ctx.QueryArgs().Len() > 0 {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			return
		}
		err := up.Upgrade(ctx, func(c *websocket.Conn) {
			defer c.Close()
			p := &peer{t: t, conn: c, log: log}
			if token != "" {
				f, ok := p.read()
				if !ok {
					return
				}
				if f.Type != "auth" || f.Token != token {
					p.closeWith(CloseUnauthorized, "unauthorized")
					return
				}
			}
			script(p)
		})
		if err != nil {
			t.Errorf("server: upgrade: %v", err)
		}
	}}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		// Shutdown misses a Serve that has not registered the listener
		// yet; closing the listener ends that one too.
		_ = srv.Shutdown()
		_ = ln.Close()
		<-served
	})
	return "ws://" + ln.Addr().String() + "/ws"
}
