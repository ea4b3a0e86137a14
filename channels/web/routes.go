package web

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/pprofhandler"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/metrics"
)

// handle routes every HTTP request. A Host that is not allowed is refused
// before any route: a page on another site that rebinds its DNS name to
// this address must not reach the daemon.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	if host := ctx.Host(); !s.hosts.allows(string(host)) {
		s.met.Errors.With(string(messages.CodeHostNotAllowed)).Inc()
		s.log.Debug().Str("host", truncateReason(string(host))).Str("remote_ip", ctx.RemoteIP().String()).Msg("request for a host that is not allowed")
		writeHTTPErrorMessage(ctx, fasthttp.StatusMisdirectedRequest, messages.CodeHostNotAllowed,
			"This server does not answer to host "+strconv.Quote(truncateReason(string(host)))+
				"; if it should, add it to silas.channels.web.allowed_hosts.")
		return
	}
	path := ctx.Path()
	switch string(path) {
	case "/ws":
		s.serveWS(ctx, "/ws")
		return
	case "/chat":
		if s.opts.ChatbotEnabled {
			s.serveWS(ctx, "/chat")
		} else {
			writeHTTPError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound)
		}
		return
	case "/health":
		s.serveHealth(ctx)
		return
	case "/ready":
		s.serveReady(ctx)
		return
	case "/metrics":
		s.serveMetrics(ctx)
		return
	}
	if s.opts.Pprof && bytes.HasPrefix(path, []byte("/debug/pprof/")) {
		s.servePprof(ctx)
		return
	}
	method := ctx.Method()
	for _, r := range s.routes {
		if string(method) == r.method && bytes.HasPrefix(path, []byte(r.prefix)) {
			r.handler(ctx)
			return
		}
	}
	if s.opts.Static != nil && (ctx.IsGet() || ctx.IsHead()) {
		s.opts.Static(ctx)
		return
	}
	writeHTTPError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound)
}

// serveHealth answers {"status":"ok","connections":N}.
func (s *Server) serveHealth(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeHTTPError(ctx, fasthttp.StatusMethodNotAllowed, messages.CodeMethodNotAllowed)
		return
	}
	b := append(make([]byte, 0, 48), `{"status":"ok","connections":`...)
	b = strconv.AppendInt(b, int64(s.connections()), 10)
	b = append(b, '}')
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// serveMetrics answers the Prometheus exposition to callers holding the
// owner token or the metrics token.
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeHTTPError(ctx, fasthttp.StatusMethodNotAllowed, messages.CodeMethodNotAllowed)
		return
	}
	if !s.metricsAllowed(ctx) {
		return
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetContentType(metrics.ContentType)
	if err := s.opts.Metrics.WritePrometheus(ctx); err != nil {
		s.log.Error().Err(err).Msg("write /metrics")
		ctx.ResetBody()
		writeHTTPError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal)
	}
}

// servePprof serves Go's profiles, to the same callers as /metrics.
func (s *Server) servePprof(ctx *fasthttp.RequestCtx) {
	if !s.metricsAllowed(ctx) {
		return
	}
	pprofhandler.PprofHandler(ctx)
}

// metricsAllowed lets a caller with "Authorization: Bearer <owner or
// metrics token>" through, and answers 401 to any other. Being on loopback
// is no credential: every local process and every page the owner's browser
// opens can reach loopback.
func (s *Server) metricsAllowed(ctx *fasthttp.RequestCtx) bool {
	if bearerMatches(string(ctx.Request.Header.Peek("Authorization")), s.tokens) {
		return true
	}
	ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="silas"`)
	writeHTTPErrorMessage(ctx, fasthttp.StatusUnauthorized, messages.CodeUnauthorized,
		"This endpoint needs \"Authorization: Bearer <token>\" with the owner token (silas token) or silas.channels.web.metrics_token.")
	return false
}

// bearerMatches reports whether authorization is "Bearer <t>" for one of
// tokens, comparing in constant time.
func bearerMatches(authorization string, tokens [][]byte) bool {
	const scheme = "Bearer "
	if len(authorization) < len(scheme) || !strings.EqualFold(authorization[:len(scheme)], scheme) {
		return false
	}
	got := []byte(authorization[len(scheme):])
	ok := 0
	for _, t := range tokens {
		ok |= subtle.ConstantTimeCompare(got, t)
	}
	return ok == 1
}

// writeHTTPError answers status with an ErrorEvent as the JSON body.
func writeHTTPError(ctx *fasthttp.RequestCtx, status int, code messages.Code) {
	writeHTTPErrorMessage(ctx, status, code, "")
}

// writeHTTPErrorMessage is writeHTTPError with a message of its own; ""
// keeps the code's default message.
func writeHTTPErrorMessage(ctx *fasthttp.RequestCtx, status int, code messages.Code, message string) {
	ev := messages.NewError(code, "")
	if message != "" {
		ev.Message = message
	}
	body, err := json.Marshal(ev)
	if err != nil { // cannot happen: ErrorEvent holds only strings
		body = []byte(`{"type":"error","code":"internal"}`)
	}
	ctx.Response.Header.Del("Sec-WebSocket-Protocol")
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

// codeForStatus maps an HTTP status from the upgrader to an error code.
func codeForStatus(status int) messages.Code {
	switch status {
	case fasthttp.StatusForbidden:
		return messages.CodeForbidden
	case fasthttp.StatusMethodNotAllowed:
		return messages.CodeMethodNotAllowed
	case fasthttp.StatusBadRequest:
		return messages.CodeBadRequest
	case fasthttp.StatusServiceUnavailable:
		return messages.CodeUnavailable
	case fasthttp.StatusTooManyRequests:
		return messages.CodeTooManySockets
	}
	return messages.CodeInternal
}
