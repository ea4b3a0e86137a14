package web

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/fasthttp/websocket"
	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/messages"
)

// Close codes the transport uses itself.
const (
	closePolicyViolation = websocket.ClosePolicyViolation // 1008: slow consumer
	closeTooBig          = websocket.CloseMessageTooBig   // 1009
	closeInternal        = websocket.CloseInternalServerErr
)

// Close codes a client may see from the transport's limits.
const (
	// CloseTryAgainLater (1013) closes a socket that did not fit its pool:
	// too many sockets (the reason names the config key).
	CloseTryAgainLater = websocket.CloseTryAgainLater
	// CloseIdle (4008) closes a customer socket that sent no message within
	// silas.channels.web.idle_timeout_seconds.
	CloseIdle = 4008
)

// socket is one upgraded WebSocket: the Outbound handed to the Gateway, and
// the state its reader and writer goroutines share.
type socket struct {
	srv  *Server
	ws   *websocket.Conn
	info messages.ConnInfo
	sess messages.Conn // nil if the Gateway returned none
	log  zerolog.Logger
	pool pool // the admission pool it is counted in; read goroutine only

	spoke     atomic.Bool       // a message frame arrived (ends the idle timeout)
	queue     sendq             // encoded events for the writer
	closeReq  chan closeRequest // capacity 1, filled once
	closeOnce sync.Once
	closed    atomic.Bool   // no more Sends; frames are discarded
	readDone  chan struct{} // closed when the read loop returns
	writeDone chan struct{} // closed when the write loop returns
}

// closeRequest asks the writer to send a close frame and stop.
type closeRequest struct {
	code   int
	reason string
	drain  bool // write the queued events first
}

var _ messages.Outbound = (*socket)(nil)

func newSocket(s *Server, ws *websocket.Conn, info messages.ConnInfo) *socket {
	c := &socket{
		srv:       s,
		ws:        ws,
		info:      info,
		log:       s.log.With().Str("conn_id", info.ID).Str("path", info.Path).Str("remote_ip", info.RemoteIP).Logger(),
		closeReq:  make(chan closeRequest, 1),
		readDone:  make(chan struct{}),
		writeDone: make(chan struct{}),
	}
	c.queue.init(s.opts.SendQueue)
	return c
}

// Send implements Outbound.
func (c *socket) Send(ev any) bool {
	if c.closed.Load() {
		return false
	}
	b, err := encodeEvent(ev)
	if err != nil {
		c.log.Error().Err(err).Msg("server event cannot be sent")
		return false
	}
	switch e := ev.(type) {
	case *messages.ErrorEvent:
		c.srv.met.Errors.With(string(e.Code)).Inc()
	case messages.ErrorEvent:
		c.srv.met.Errors.With(string(e.Code)).Inc()
	}
	if c.queue.push(b) {
		return true
	}
	c.slowConsumer()
	return false
}

// Close implements Outbound.
func (c *socket) Close(code int, reason string) {
	if !validCloseCode(code) {
		c.log.Error().Int("code", code).Msg("invalid close code; closing with 1011")
		code = closeInternal
	}
	c.closeWith(closeRequest{code: code, reason: truncateReason(reason), drain: true})
}

// closeWith hands the first close request to the writer.
func (c *socket) closeWith(req closeRequest) {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.closeReq <- req
	})
}

// slowConsumer closes a socket whose send queue is full, and bounds the
// write the writer may be stuck in.
func (c *socket) slowConsumer() {
	c.log.Warn().Int("queue", c.queue.limit).Msg("send queue full; closing slow consumer")
	c.closeWith(closeRequest{code: closePolicyViolation, reason: "send queue full"})
	_ = c.ws.NetConn().SetWriteDeadline(time.Now().Add(c.srv.opts.CloseGrace))
}

// abort cuts the socket without a close frame; both loops then return.
func (c *socket) abort(err error) {
	c.log.Debug().Err(err).Msg("websocket aborted")
	c.closed.Store(true)
	_ = c.ws.NetConn().Close()
}

// sendError queues an ErrorEvent, with detail appended to the default
// message when given.
func (c *socket) sendError(code messages.Code, detail error) {
	ev := messages.NewError(code, "")
	if detail != nil {
		ev.Message += " (" + detail.Error() + ")"
	}
	c.Send(ev)
}

// encodeEvent returns the JSON of a server event.
func encodeEvent(ev any) ([]byte, error) {
	switch v := ev.(type) {
	case json.RawMessage:
		return v, nil
	case []byte:
		return v, nil
	case nil:
		return nil, fmt.Errorf("web: encode event: nil event")
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("web: encode %T: %w", ev, err)
	}
	return b, nil
}

// validCloseCode reports whether code may be sent in a close frame (RFC 6455
// section 7.4).
func validCloseCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// truncateReason fits reason in a close frame (125 bytes minus the code),
// on a UTF-8 boundary.
func truncateReason(reason string) string {
	const limit = 123
	if len(reason) <= limit {
		return reason
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut]
}
