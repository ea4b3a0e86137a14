package web

import (
	"errors"
	"io"
	"runtime/debug"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/silas-ai/silas/messages"
)

// maxRetainedBuf is the largest read buffer a socket keeps between frames.
const maxRetainedBuf = 64 << 10

// serveSocket runs one socket from attach to Closed, in the tracked read
// goroutine: it starts the writer, reads until the socket ends, then waits
// for the writer and tells the session.
func (s *Server) serveSocket(ws *websocket.Conn, info messages.ConnInfo, p pool) {
	if r := s.admit.take(p, info.RemoteIP); r != nil {
		// Another upgrade took the last place since serveWS checked.
		s.met.Errors.With(string(messages.CodeTooManySockets)).Inc()
		s.log.Debug().Str("path", info.Path).Str("remote_ip", info.RemoteIP).Str("limit", r.key).Msg("websocket refused: too many sockets")
		closeNow(ws, CloseTryAgainLater, r.reason(), s.opts.WriteTimeout)
		return
	}
	c := newSocket(s, ws, info)
	c.pool = p
	defer func() { s.admit.release(c.pool, info.RemoteIP) }()
	if !s.register(c) {
		refuse(ws, s.opts.WriteTimeout)
		return
	}
	c.log.Debug().Bool("bearer", info.BearerToken != "").Msg("websocket open")
	c.sess = s.opts.Gateway.Attach(info, c)
	if c.sess == nil {
		c.log.Error().Msg("gateway attached no session; closing with 1011")
		c.closeWith(closeRequest{code: closeInternal, reason: "internal error", drain: true})
	}
	if s.tasks.Go("web.socket.write", c.writeLoop) {
		c.readLoop()
	} else { // shutting down: no writer, say goodbye directly
		close(c.writeDone)
		refuse(ws, s.opts.WriteTimeout)
	}
	close(c.readDone)
	<-c.writeDone
	c.closed.Store(true)
	_ = ws.Close()
	s.unregister(c)
	c.log.Debug().Msg("websocket closed")
	if c.sess != nil {
		c.sess.Closed()
	}
}

// readLoop reads client frames until the socket fails or closes.
func (c *socket) readLoop() {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Msg("session panicked on a frame; closing with 1011")
			c.closeWith(closeRequest{code: closeInternal, reason: "internal error", drain: true})
		}
	}()
	opts := &c.srv.opts
	pongWait := 2 * opts.PingInterval
	_ = c.ws.SetReadDeadline(time.Now().Add(pongWait))
	c.ws.SetPongHandler(func(string) error {
		if c.closed.Load() {
			return nil // keep the close grace deadline
		}
		return c.ws.SetReadDeadline(time.Now().Add(pongWait))
	})
	var buf []byte
	for {
		kind, r, err := c.ws.NextReader()
		if err != nil {
			c.readEnded(err)
			return
		}
		if c.closed.Load() {
			continue // closing: discard until the client's close frame or the grace deadline
		}
		var tooBig bool
		if kind == websocket.TextMessage {
			buf, tooBig, err = readFrame(r, buf[:0], opts.MaxFrameBytes)
		} else {
			tooBig, err = discardFrame(r, opts.MaxFrameBytes)
		}
		if err != nil {
			c.readEnded(err)
			return
		}
		if tooBig {
			c.sendError(messages.CodeFrameTooLarge, nil)
			c.closeWith(closeRequest{code: closeTooBig, reason: "frame too large", drain: true})
			continue
		}
		c.srv.met.WSFramesIn.Inc()
		if c.srv.limiter != nil && !c.srv.limiter.Allow(c.info.RemoteIP, time.Now()) {
			c.sendError(messages.CodeRateLimited, nil)
			continue
		}
		if kind != websocket.TextMessage {
			c.sendError(messages.CodeNotSupported, errors.New("binary frames are not accepted"))
			continue
		}
		f, err := DecodeFrame(buf)
		if cap(buf) > maxRetainedBuf {
			buf = nil
		}
		if err == nil {
			err = ValidateFrame(f, opts.MaxTextBytes)
		}
		if err != nil {
			c.refuseFrame(f, err)
			continue
		}
		if f.Type == messages.TypeMessage {
			c.spoke.Store(true)
		}
		if c.pool == poolPending && f.Type == messages.TypeAuth && c.srv.isOwnerToken(f.Token) && !c.promote() {
			continue
		}
		c.sess.Frame(f)
	}
}

// refuseFrame answers a frame that did not decode or validate. It is the
// client's error, so it is logged at debug level, without the frame.
func (c *socket) refuseFrame(f *messages.Frame, err error) {
	requestType := ""
	var fe *FieldError
	if f != nil && (!errors.As(err, &fe) || fe.Field != "type") {
		requestType = f.Type
	}
	ev := frameErrorEvent(err, requestType)
	c.log.Debug().Err(err).Str("code", string(ev.Code)).Str("field", ev.Field).Msg("client frame refused")
	c.Send(ev)
}

// promote moves a /ws socket that sent the owner token in its auth frame
// from the unauthenticated pool to the owner's. If the owner's pool is
// full, the socket is closed with 1013 and promote reports false.
func (c *socket) promote() bool {
	r := c.srv.admit.move(poolPending, poolOwner, c.info.RemoteIP)
	if r == nil {
		c.pool = poolOwner
		return true
	}
	c.log.Warn().Str("limit", r.key).Msg("owner socket refused: too many owner sockets")
	ev := messages.NewError(messages.CodeTooManySockets, messages.TypeAuth)
	ev.Message = r.message()
	c.Send(ev)
	c.closeWith(closeRequest{code: CloseTryAgainLater, reason: r.reason(), drain: true})
	return false
}

// readEnded logs why reading stopped, quietly for ordinary closes.
func (c *socket) readEnded(err error) {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		c.log.Debug().Int("code", ce.Code).Msg("client closed websocket")
		return
	}
	if !c.closed.Load() {
		c.log.Debug().Err(err).Msg("websocket read ended")
	}
}

// readFrame reads one message into buf, growing it up to max+1 bytes. It
// reports tooBig, without reading the rest, when the message exceeds max.
func readFrame(r io.Reader, buf []byte, limit int) ([]byte, bool, error) {
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return buf, true, nil
			}
			grown := make([]byte, len(buf), min(max(2*cap(buf), 512), limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF:
			return buf, len(buf) > limit, nil
		case err != nil:
			return buf, false, err
		}
	}
}

// discardFrame reads and drops one message of at most limit+1 bytes.
func discardFrame(r io.Reader, limit int) (tooBig bool, err error) {
	n, err := io.Copy(io.Discard, io.LimitReader(r, int64(limit)+1))
	return n > int64(limit), err
}
