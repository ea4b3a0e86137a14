package web

import (
	"time"

	"github.com/fasthttp/websocket"

	"github.com/silas-ai/silas/messages"
)

// writeLoop is the socket's only writer of data and close frames: it drains
// the send queue, pings, and performs the close a closeRequest asks for.
func (c *socket) writeLoop() {
	defer close(c.writeDone)
	ping := time.NewTicker(c.srv.opts.PingInterval)
	defer ping.Stop()
	var idle <-chan time.Time // nil: no idle timeout
	if c.info.Path == "/chat" {
		t := time.NewTimer(c.srv.opts.IdleTimeout)
		defer t.Stop()
		idle = t.C
	}
	var batch [][]byte
	for {
		select { // a pending close goes before more data
		case req := <-c.closeReq:
			c.finish(req)
			return
		default:
		}
		select {
		case req := <-c.closeReq:
			c.finish(req)
			return
		case <-c.queue.ready:
			batch = c.queue.take(batch)
			for _, b := range batch {
				if !c.write(b) {
					return
				}
			}
			clear(batch)
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.srv.opts.WriteTimeout)); err != nil {
				c.abort(err)
				return
			}
		case <-idle:
			idle = nil
			c.idleExpired()
		case <-c.readDone:
			return
		}
	}
}

// idleExpired closes a customer socket that has sent no message since it
// opened: an idle socket costs memory and a file descriptor, and a client
// that means to talk reconnects when it does.
func (c *socket) idleExpired() {
	if c.spoke.Load() {
		return
	}
	c.log.Debug().Dur("idle_timeout", c.srv.opts.IdleTimeout).Msg("closing customer socket that sent no message")
	c.Send(messages.NewError(messages.CodeIdleTimeout, ""))
	c.closeWith(closeRequest{code: CloseIdle, reason: "idle: no message within " + c.srv.opts.IdleTimeout.String(), drain: true})
}

// write sends one event; on failure it aborts the socket.
func (c *socket) write(b []byte) bool {
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.srv.opts.WriteTimeout))
	if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		c.abort(err)
		return false
	}
	c.srv.met.WSFramesOut.Inc()
	return true
}

// finish writes the queued events if asked, then the close frame, and gives
// the client CloseGrace to answer before the reader gives up.
func (c *socket) finish(req closeRequest) {
	timeout := c.srv.opts.WriteTimeout
	if req.drain {
		for _, b := range c.queue.take(nil) {
			if !c.write(b) {
				return
			}
		}
	} else {
		timeout = c.srv.opts.CloseGrace // a slow consumer gets no patience
	}
	msg := websocket.FormatCloseMessage(req.code, req.reason)
	if err := c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(timeout)); err != nil {
		c.abort(err)
		return
	}
	_ = c.ws.SetReadDeadline(time.Now().Add(c.srv.opts.CloseGrace))
}
