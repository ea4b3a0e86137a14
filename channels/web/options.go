package web

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/metrics"
)

// Defaults for zero Options fields.
const (
	DefaultHost                   = "127.0.0.1"
	DefaultMaxFrameBytes          = 256 << 10
	DefaultSendQueue              = 256
	DefaultMessagesPerMinutePerIP = 240
	DefaultWriteTimeout           = 10 * time.Second
	DefaultPingInterval           = 30 * time.Second
	DefaultCloseGrace             = 2 * time.Second

	DefaultMaxSockets                     = 10_000
	DefaultMaxSocketsPerIP                = 100
	DefaultMaxUnauthenticatedSockets      = 64
	DefaultMaxUnauthenticatedSocketsPerIP = 8
	DefaultMaxOwnerSockets                = 32
	DefaultIdleTimeout                    = 120 * time.Second
	DefaultHeaderTimeout                  = 10 * time.Second
	DefaultBodyTimeout                    = 30 * time.Second
	DefaultMaxTextBytes                   = 32 << 10
)

// Options configure a Server. Zero values take the documented defaults.
type Options struct {
	// Host is the address to bind (silas.channels.web.host). Default
	// "127.0.0.1". Any host that is not loopback requires AuthToken.
	Host string
	// Port is the TCP port (silas.channels.web.port); 0 picks a free port,
	// see Server.Addr.
	Port int
	// AuthToken is silas.channels.web.auth_token. The transport uses it to
	// refuse a non-loopback bind without it, and in place of OwnerToken when
	// that is empty.
	AuthToken string
	// OwnerToken is the owner's token (the auth token, or the one `silas
	// token` prints). The transport does not authenticate sessions with it
	// (the Conn does); it uses it to count a socket that presents it as the
	// owner's (MaxOwnerSockets, so that customers cannot crowd the owner
	// out) and to let "Authorization: Bearer <token>" read /metrics and
	// /debug/pprof/. Empty means AuthToken.
	OwnerToken string
	// MetricsToken is silas.channels.web.metrics_token: a second bearer
	// token that may read /metrics and /debug/pprof/ (for a Prometheus
	// scraper that should not hold the owner token). Empty means none.
	MetricsToken string
	// ChatbotEnabled serves /chat; otherwise /chat is 404.
	ChatbotEnabled bool
	// MaxFrameBytes is the largest client frame accepted. A larger frame gets
	// an error event frame_too_large and close code 1009. Default 256 KiB.
	MaxFrameBytes int
	// MaxTextBytes is silas.channels.web.max_text_bytes: the largest text,
	// edited_text or freetext a frame may carry, in bytes of UTF-8. A longer
	// one is answered bad_request naming the field. Default 32 KiB.
	MaxTextBytes int
	// AllowedOrigins lists extra origins ("https://app.example.com") allowed
	// to open WebSockets besides the server's own. Origins compare on scheme,
	// host and port, case-insensitively, default ports implied.
	AllowedOrigins []string
	// SendQueue is how many server events may wait for one socket before it
	// is closed as a slow consumer (1008). Default 256.
	SendQueue int
	// MessagesPerMinutePerIP is silas.limits.ws_messages_per_minute_per_ip,
	// counted over all sockets of one remote IP, burst equal to the rate.
	// Default 240; negative disables the limit (benchmarks only).
	MessagesPerMinutePerIP int
	// MaxSockets is silas.channels.web.max_sockets: how many customer
	// sockets (/chat) may be open at once. Beyond it an upgrade is refused
	// with HTTP 503 and code too_many_connections. Default 10,000.
	MaxSockets int
	// MaxSocketsPerIP is silas.channels.web.max_sockets_per_ip: how many
	// customer sockets one client IP may hold open; beyond it HTTP 429.
	// Default 100.
	MaxSocketsPerIP int
	// MaxUnauthenticatedSockets is silas.channels.web.max_unauthenticated_sockets:
	// how many /ws sockets may wait for their auth frame at once (each for
	// at most auth_timeout_seconds); beyond it HTTP 503. Default 64.
	MaxUnauthenticatedSockets int
	// MaxUnauthenticatedSocketsPerIP is
	// silas.channels.web.max_unauthenticated_sockets_per_ip: the same, per
	// client IP; beyond it HTTP 429. Default 8.
	MaxUnauthenticatedSocketsPerIP int
	// MaxOwnerSockets is silas.channels.web.max_owner_sockets: how many
	// sockets may be open with the owner token. They are counted apart from
	// customers and unauthenticated sockets, so a server full of customers
	// still admits its owner. Default 32.
	MaxOwnerSockets int
	// IdleTimeout is silas.channels.web.idle_timeout_seconds: a customer
	// socket that has sent no message within it gets an idle_timeout error
	// and close code 4008. Default 120 s.
	IdleTimeout time.Duration
	// HeaderTimeout is silas.channels.web.header_timeout_seconds: how long a
	// client may take to send a request's headers, from connecting (or from
	// its first byte on a kept-alive connection); a slower client is cut
	// off. Default 10 s.
	HeaderTimeout time.Duration
	// BodyTimeout is silas.channels.web.body_timeout_seconds: how long a
	// client may take to send a request's body once its headers arrived.
	// Default 30 s.
	BodyTimeout time.Duration
	// TrustedProxies is silas.channels.web.trusted_proxies: IPs and CIDRs of
	// reverse proxies. Only when the peer is one of them is the client IP
	// (for the per-IP limits and the logs) read from X-Forwarded-For: the
	// rightmost address that is not itself a trusted proxy.
	TrustedProxies []string
	// AllowedHosts is silas.channels.web.allowed_hosts: Host header values
	// served besides the loopback names (localhost, 127.0.0.1, [::1]) and
	// the bind address, as "name" (any port) or "name:port". Any other Host
	// is answered 421 on every route, which defeats DNS rebinding.
	AllowedHosts []string
	// Gateway attaches sessions to new sockets. Required.
	Gateway messages.Gateway
	// Metrics receives the transport's metrics and is served at /metrics.
	// Default: a private registry.
	Metrics *metrics.Registry
	// Health returns the connection count for /health. Default: the number
	// of open sockets on this server.
	Health func() int
	// Logger receives the transport's logs. The zero Logger discards.
	Logger zerolog.Logger
	// Static serves every GET or HEAD no other route takes ("/" and the
	// PWA's assets). Nil means such requests get 404.
	Static fasthttp.RequestHandler
	// Extra routes, keyed "METHOD /path/prefix" (for example
	// "POST /secrets/"). The longest matching prefix wins. The built-in
	// paths (/ws, /chat, /health, /metrics) are matched first and cannot be
	// overridden.
	Extra map[string]fasthttp.RequestHandler
	// Pprof serves Go's runtime profiles under /debug/pprof/ to the callers
	// allowed /metrics (owner or metrics token), for chasing a performance
	// regression. Default off.
	Pprof bool
	// WriteTimeout bounds each write to a socket. Default 10 s.
	WriteTimeout time.Duration
	// PingInterval is how often sockets are pinged; a socket that has not
	// answered within two intervals is closed. Default 30 s.
	PingInterval time.Duration
	// CloseGrace is how long a closing socket waits for the client's close
	// frame, and how long a slow consumer may block a write once its queue
	// is full. Default 2 s.
	CloseGrace time.Duration
}

// route is one parsed Extra entry.
type route struct {
	method  string
	prefix  string
	handler fasthttp.RequestHandler
}

// withDefaults returns o with zero fields defaulted, and validates it.
func (o Options) withDefaults() (Options, error) {
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.MaxFrameBytes == 0 {
		o.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if o.SendQueue == 0 {
		o.SendQueue = DefaultSendQueue
	}
	if o.MessagesPerMinutePerIP == 0 {
		o.MessagesPerMinutePerIP = DefaultMessagesPerMinutePerIP
	}
	if o.Metrics == nil {
		o.Metrics = metrics.NewRegistry()
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.PingInterval == 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.CloseGrace == 0 {
		o.CloseGrace = DefaultCloseGrace
	}
	o.defaultLimits()
	var errs []string
	if o.Gateway == nil {
		errs = append(errs, "Gateway is required")
	}
	if o.Port < 0 || o.Port > 65535 {
		errs = append(errs, fmt.Sprintf("port %d is out of range 0-65535", o.Port))
	}
	if o.MaxFrameBytes < 0 {
		errs = append(errs, "MaxFrameBytes must not be negative")
	}
	if o.SendQueue < 0 {
		errs = append(errs, "SendQueue must not be negative")
	}
	if o.WriteTimeout < 0 || o.PingInterval < 0 || o.CloseGrace < 0 ||
		o.IdleTimeout < 0 || o.HeaderTimeout < 0 || o.BodyTimeout < 0 {
		errs = append(errs, "timeouts must not be negative")
	}
	errs = append(errs, o.limitProblems()...)
	for _, a := range o.AllowedOrigins {
		if _, ok := normalizeOrigin(a); !ok {
			errs = append(errs, fmt.Sprintf("allowed origin %q is not scheme://host[:port]", a))
		}
	}
	if _, err := parseRoutes(o.Extra); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return o, fmt.Errorf("%w: %s", ErrInvalidOptions, strings.Join(errs, "; "))
	}
	if !isLoopbackHost(o.Host) && o.AuthToken == "" {
		return o, fmt.Errorf("%w (host %q is not loopback)", ErrAuthTokenRequired, o.Host)
	}
	return o, nil
}

// defaultLimits defaults the zero connection limits.
func (o *Options) defaultLimits() {
	defaults := []struct {
		v   *int
		def int
	}{
		{&o.MaxTextBytes, DefaultMaxTextBytes},
		{&o.MaxSockets, DefaultMaxSockets},
		{&o.MaxSocketsPerIP, DefaultMaxSocketsPerIP},
		{&o.MaxUnauthenticatedSockets, DefaultMaxUnauthenticatedSockets},
		{&o.MaxUnauthenticatedSocketsPerIP, DefaultMaxUnauthenticatedSocketsPerIP},
		{&o.MaxOwnerSockets, DefaultMaxOwnerSockets},
	}
	for _, d := range defaults {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.HeaderTimeout == 0 {
		o.HeaderTimeout = DefaultHeaderTimeout
	}
	if o.BodyTimeout == 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
}

// limitProblems validates the connection limits, trusted proxies and
// allowed hosts.
func (o *Options) limitProblems() []string {
	var errs []string
	for name, v := range map[string]int{
		"MaxTextBytes": o.MaxTextBytes, "MaxSockets": o.MaxSockets, "MaxSocketsPerIP": o.MaxSocketsPerIP,
		"MaxUnauthenticatedSockets": o.MaxUnauthenticatedSockets, "MaxUnauthenticatedSocketsPerIP": o.MaxUnauthenticatedSocketsPerIP,
		"MaxOwnerSockets": o.MaxOwnerSockets,
	} {
		if v < 0 {
			errs = append(errs, name+" must not be negative")
		}
	}
	if _, err := parseProxies(o.TrustedProxies); err != nil {
		errs = append(errs, err.Error())
	}
	for _, h := range o.AllowedHosts {
		if _, err := parseAllowedHost(h); err != nil {
			errs = append(errs, err.Error())
		}
	}
	slices.Sort(errs) // map order is random; the message should not be
	return errs
}

// isLoopbackHost reports whether host is "localhost" or a loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// parseRoutes parses Options.Extra, longest prefix first.
func parseRoutes(extra map[string]fasthttp.RequestHandler) ([]route, error) {
	rs := make([]route, 0, len(extra))
	for k, h := range extra {
		method, prefix, ok := strings.Cut(k, " ")
		if !ok || method == "" || method != strings.ToUpper(method) || !strings.HasPrefix(prefix, "/") || h == nil {
			return nil, fmt.Errorf("extra route %q must be \"METHOD /prefix\" with a handler", k)
		}
		rs = append(rs, route{method: method, prefix: prefix, handler: h})
	}
	for i := 1; i < len(rs); i++ { // insertion sort: longest prefix first, then by key for stable order
		for j := i; j > 0 && longer(rs[j], rs[j-1]); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
	return rs, nil
}

func longer(a, b route) bool {
	if len(a.prefix) != len(b.prefix) {
		return len(a.prefix) > len(b.prefix)
	}
	return a.method+a.prefix < b.method+b.prefix
}
