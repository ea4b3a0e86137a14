package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
)

// event is the part of a server event the bench reads.
type event struct {
	Type      string `json:"type"`
	MessageID string `json:"message_id"`
	ReplyTo   string `json:"reply_to"`
	Code      string `json:"code"`
	Text      string `json:"text"`
	// SessionToken and Resumed are set on a customer's session event.
	SessionToken string `json:"session_token"`
	Resumed      bool   `json:"resumed"`
	// Raw is the frame as received; the chaos scenario compares the bytes
	// of an answer delivered twice.
	Raw []byte `json:"-"`
}

// outgoing is a chat message as the customer sends it.
type outgoing struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	MessageID string `json:"message_id"`
}

// resumeFrame is the auth frame that resumes a customer's session.
type resumeFrame struct {
	Type         string `json:"type"`
	SessionToken string `json:"session_token"`
}

// customer is one WebSocket connection to /chat. A reader goroutine decodes
// server events into events; one other goroutine may send.
type customer struct {
	conn    *websocket.Conn
	events  chan event
	quit    chan struct{} // closed by close: the reader stops forwarding
	gone    chan struct{} // closed when the reader ends
	readErr error         // valid once gone is closed
	once    sync.Once
}

// newDialer returns a dialer for addr with the given socket buffer sizes.
// Idle customers use small buffers so the driver's own memory stays small.
func newDialer(bufSize int) *websocket.Dialer {
	nd := &net.Dialer{Timeout: 30 * time.Second}
	return &websocket.Dialer{
		NetDialContext:   nd.DialContext,
		HandshakeTimeout: 30 * time.Second,
		ReadBufferSize:   bufSize,
		WriteBufferSize:  bufSize,
		// Proxy stays nil: the bench talks to loopback only.
	}
}

// errNoSession means the server did not start the session it must start.
var errNoSession = errors.New("no session event")

// connect dials ws://addr/chat and waits for the session event.
func connect(ctx context.Context, d *websocket.Dialer, addr string) (*customer, error) {
	c, _, err := dialSession(ctx, d, addr)
	return c, err
}

// dialSession dials ws://addr/chat and returns the customer with its
// session event, which carries the token that resumes the session later.
func dialSession(ctx context.Context, d *websocket.Dialer, addr string) (*customer, event, error) {
	conn, resp, err := d.DialContext(ctx, "ws://"+addr+"/chat", nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, event{}, fmt.Errorf("dial /chat: %w", err)
	}
	c := &customer{conn: conn, events: make(chan event, 8), quit: make(chan struct{}), gone: make(chan struct{})}
	go c.read()
	ev, err := c.awaitSession(ctx)
	if err != nil {
		c.close()
		return nil, event{}, err
	}
	return c, ev, nil
}

// awaitSession waits for the next event, which must be a session event.
func (c *customer) awaitSession(ctx context.Context) (event, error) {
	select {
	case ev := <-c.events:
		if ev.Type == "session" {
			return ev, nil
		}
		return event{}, fmt.Errorf("%w: the event is %q (code %q)", errNoSession, ev.Type, ev.Code)
	case <-c.gone:
		return event{}, fmt.Errorf("%w: connection closed: %v", errNoSession, c.readErr)
	case <-ctx.Done():
		return event{}, fmt.Errorf("%w: %w", errNoSession, ctx.Err())
	}
}

// read decodes server events until the connection ends.
func (c *customer) read() {
	defer close(c.gone)
	for {
		_, b, err := c.conn.ReadMessage()
		if err != nil {
			c.readErr = err
			return
		}
		var ev event
		if err := json.Unmarshal(b, &ev); err != nil {
			ev = event{Type: "<undecodable>"}
		}
		ev.Raw = b
		select {
		case c.events <- ev:
		case <-c.quit:
			return
		}
	}
}

// send writes one chat message.
func (c *customer) send(id, text string) error {
	if err := c.conn.WriteJSON(outgoing{Type: "message", Text: text, MessageID: id}); err != nil {
		return fmt.Errorf("send message %s: %w", id, err)
	}
	return nil
}

// resume asks the server to return to the session of token: the auth frame
// a customer sends before any message after reconnecting.
func (c *customer) resume(token string) error {
	if err := c.conn.WriteJSON(resumeFrame{Type: "auth", SessionToken: token}); err != nil {
		return fmt.Errorf("send the resume frame: %w", err)
	}
	return nil
}

// close says goodbye and closes the connection; safe to call twice.
func (c *customer) close() {
	c.once.Do(func() {
		close(c.quit)
		_ = c.conn.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bench done"), time.Now().Add(time.Second))
		_ = c.conn.Close()
	})
}
