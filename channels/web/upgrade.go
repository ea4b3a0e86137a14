package web

import (
	"crypto/subtle"
	"net/netip"
	"strings"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
)

// serveWS upgrades /ws and /chat. Tokens are read only from
// Sec-WebSocket-Protocol, never from the query string.
func (s *Server) serveWS(ctx *fasthttp.RequestCtx, path string) {
	if s.isClosing() {
		writeHTTPError(ctx, fasthttp.StatusServiceUnavailable, messages.CodeUnavailable)
		return
	}
	if !s.checkOrigin(ctx) {
		s.log.Warn().Str("origin", string(ctx.Request.Header.Peek("Origin"))).Str("remote_ip", ctx.RemoteIP().String()).
			Msg("cross-origin websocket upgrade refused")
		writeHTTPError(ctx, fasthttp.StatusForbidden, messages.CodeForbidden)
		return
	}
	token, echo := bearerFromProtocols(string(ctx.Request.Header.Peek("Sec-WebSocket-Protocol")))
	info := messages.ConnInfo{
		ID:          uuid.NewString(),
		Path:        path,
		RemoteIP:    s.clientIP(ctx),
		PeerIP:      ctx.RemoteIP().String(),
		BearerToken: token,
	}
	p := s.poolFor(info)
	if r := s.admit.check(p, info.RemoteIP); r != nil {
		s.refuseUpgrade(ctx, info, r)
		return
	}
	if echo != "" {
		// With Subprotocols nil, the upgrader echoes this response header.
		ctx.Response.Header.Set("Sec-WebSocket-Protocol", echo)
	}
	if err := s.upgrader.Upgrade(ctx, func(ws *websocket.Conn) { s.runSocket(ws, info, p) }); err != nil {
		return // the upgrader's Error hook answered and logged
	}
}

// clientIP is the address the per-IP limits count for a request (see
// proxies.clientIP), as a string.
func (s *Server) clientIP(ctx *fasthttp.RequestCtx) string {
	peer, _ := netip.AddrFromSlice(ctx.RemoteIP())
	if len(s.proxies) == 0 {
		return peer.Unmap().String()
	}
	var xff []string
	for _, v := range ctx.Request.Header.PeekAll("X-Forwarded-For") {
		xff = append(xff, string(v))
	}
	return s.proxies.clientIP(peer, xff).String()
}

// poolFor is the pool a new socket is counted in: /chat sockets are
// customers; a /ws socket is the owner's if it offered the owner token in
// Sec-WebSocket-Protocol, else it waits for its auth frame.
func (s *Server) poolFor(info messages.ConnInfo) pool {
	switch {
	case info.Path == "/chat":
		return poolCustomer
	case s.isOwnerToken(info.BearerToken):
		return poolOwner
	}
	return poolPending
}

// isOwnerToken reports whether token is the owner's.
func (s *Server) isOwnerToken(token string) bool {
	return token != "" && s.owner != nil && subtle.ConstantTimeCompare([]byte(token), s.owner) == 1
}

// refuseUpgrade answers an upgrade that does not fit its pool with 503 or
// 429 and says which key to raise.
func (s *Server) refuseUpgrade(ctx *fasthttp.RequestCtx, info messages.ConnInfo, r *refusal) {
	s.met.Errors.With(string(messages.CodeTooManySockets)).Inc()
	s.log.Debug().Str("path", info.Path).Str("remote_ip", info.RemoteIP).Str("limit", r.key).Msg("websocket refused: too many sockets")
	if r.status == fasthttp.StatusServiceUnavailable {
		ctx.Response.Header.Set("Retry-After", "5")
	}
	writeHTTPErrorMessage(ctx, r.status, messages.CodeTooManySockets, r.message())
}

// checkOrigin is the upgrader's CheckOrigin, and serveWS's first check.
func (s *Server) checkOrigin(ctx *fasthttp.RequestCtx) bool {
	return originAllowed(string(ctx.Request.Header.Peek("Origin")), string(ctx.Host()), ctx.IsTLS(), s.origins)
}

// bearerFromProtocols finds a bearer token among the offered subprotocols,
// and the subprotocol to echo. Two forms are accepted: the pair
// "bearer, <token>" (echo "bearer", so the token is not sent back) and the
// single value "bearer.<token>" (echoed, as a client must get one of its own
// values back).
func bearerFromProtocols(header string) (token, echo string) {
	if header == "" {
		return "", ""
	}
	parts := strings.Split(header, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	for i, p := range parts {
		if p == "bearer" && i+1 < len(parts) && parts[i+1] != "" {
			return parts[i+1], "bearer"
		}
	}
	for _, p := range parts {
		if tok, ok := strings.CutPrefix(p, "bearer."); ok && tok != "" {
			return tok, p
		}
	}
	return "", ""
}

// runSocket runs in fasthttp's hijack goroutine, which the server adopts.
// It owns the connection (KeepHijackedConns) and closes it when done.
func (s *Server) runSocket(ws *websocket.Conn, info messages.ConnInfo, p pool) {
	defer ws.Close()
	if !s.tasks.Adopt("web.socket.read", func() { s.serveSocket(ws, info, p) }) {
		refuse(ws, s.opts.WriteTimeout)
	}
}

// refuse closes a socket that arrived during shutdown.
func refuse(ws *websocket.Conn, timeout time.Duration) {
	closeNow(ws, websocket.CloseGoingAway, "server shutting down", timeout)
}

// closeNow writes a close frame to a socket no writer runs for.
func closeNow(ws *websocket.Conn, code int, reason string, timeout time.Duration) {
	msg := websocket.FormatCloseMessage(code, truncateReason(reason))
	_ = ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(timeout))
}
