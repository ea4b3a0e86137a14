package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/runtime/metrics"
	"github.com/silas-ai/silas/runtime/ratelimit"
)

// Server is the web channel's HTTP and WebSocket server. Create it with New,
// start it with Listen, stop it with Shutdown.
type Server struct {
	opts     Options
	log      zerolog.Logger
	met      *metrics.Standard
	limiter  *ratelimit.Keyed // nil when the per-IP limit is disabled
	origins  []string         // normalized AllowedOrigins
	routes   []route          // Extra, longest prefix first
	upgrader websocket.FastHTTPUpgrader
	http     *fasthttp.Server
	tasks    *tracker
	open     atomic.Int64  // sockets registered
	admit    *admission    // socket caps per pool and client IP
	hosts    hostAllowlist // Host headers served
	proxies  proxies       // peers whose X-Forwarded-For is believed
	tokens   [][]byte      // bearer tokens that may read /metrics and pprof
	owner    []byte        // the owner token; nil if none

	mu      sync.Mutex
	ln      net.Listener
	started bool
	closing bool
	sockets map[*socket]struct{}
}

// New validates opts and returns a Server that is not listening yet. It
// refuses (ErrAuthTokenRequired) a non-loopback Host without AuthToken.
func New(opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	routes, err := parseRoutes(opts.Extra)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	trusted, err := parseProxies(opts.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	s := &Server{
		opts:    opts,
		log:     opts.Logger.With().Str("component", "channels.web").Logger(),
		met:     metrics.NewStandard(opts.Metrics),
		origins: normalizeOrigins(opts.AllowedOrigins),
		routes:  routes,
		tasks:   newTracker(),
		sockets: make(map[*socket]struct{}),
		admit:   newAdmission(&opts),
		hosts:   newHostAllowlist(opts.Host, opts.AllowedHosts),
		proxies: trusted,
	}
	owner := opts.OwnerToken
	if owner == "" {
		owner = opts.AuthToken
	}
	if owner != "" {
		s.owner = []byte(owner)
		s.tokens = append(s.tokens, s.owner)
	}
	if opts.MetricsToken != "" {
		s.tokens = append(s.tokens, []byte(opts.MetricsToken))
	}
	if opts.MessagesPerMinutePerIP > 0 {
		s.limiter = ratelimit.NewKeyed(opts.MessagesPerMinutePerIP)
	}
	s.upgrader = websocket.FastHTTPUpgrader{
		HandshakeTimeout: opts.WriteTimeout,
		CheckOrigin:      s.checkOrigin,
		Error: func(ctx *fasthttp.RequestCtx, status int, reason error) {
			s.log.Debug().Err(reason).Int("status", status).Msg("websocket upgrade refused")
			writeHTTPError(ctx, status, codeForStatus(status))
		},
	}
	s.http = &fasthttp.Server{
		Handler:               s.handle,
		NoDefaultServerHeader: true,
		// ReadTimeout runs from the connection's first byte (or its
		// opening) to the end of the headers: a client that trickles its
		// headers is cut off. Once they are in, the body gets BodyTimeout.
		ReadTimeout: opts.HeaderTimeout,
		HeaderReceived: func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
			return fasthttp.RequestConfig{ReadTimeout: opts.BodyTimeout}
		},
		WriteTimeout:    30 * time.Second,
		IdleTimeout:     60 * time.Second,
		CloseOnShutdown: true,
		// Sockets own their connections: closing one must really close it,
		// so that a blocked read or write returns at once.
		KeepHijackedConns: true,
		Logger:            fasthttpLogger{s.log},
	}
	return s, nil
}

// Listen binds Host:Port and serves in a tracked goroutine. It returns once
// the socket is listening; Addr then reports the bound address.
func (s *Server) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closing {
		return ErrServerClosed
	}
	addr := net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("web: listen on %s: %w", addr, err)
	}
	if !s.serve(ln) {
		_ = ln.Close()
		return ErrServerClosed
	}
	s.ln, s.started = ln, true
	s.log.Info().Str("addr", ln.Addr().String()).Msg("web channel listening")
	return nil
}

// serve runs the HTTP server on ln in a tracked goroutine.
func (s *Server) serve(ln net.Listener) bool {
	return s.tasks.Go("web.http.serve", func() {
		if err := s.http.Serve(ln); err != nil && !s.isClosing() {
			s.log.Error().Err(err).Msg("web channel stopped serving")
		}
	})
}

// Addr returns the listening address, or nil before Listen.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Shutdown stops accepting, closes every socket with 1001 "server shutting
// down" (after the events already queued for it), and waits until every
// goroutine of the server has returned. If ctx ends first, it cuts the
// remaining sockets, waits at most CloseGrace more, and returns ctx's error.
// Calling it again waits again.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	first := !s.closing
	s.closing = true
	started, ln := s.started, s.ln
	s.mu.Unlock()

	var errs []error
	if first {
		for _, c := range s.snapshot() {
			c.Close(websocket.CloseGoingAway, "server shutting down")
		}
		if started {
			if err := s.http.ShutdownWithContext(ctx); err != nil {
				errs = append(errs, fmt.Errorf("web: stop http server: %w", err))
			}
			// fasthttp's Shutdown closes only the listeners its Serve has
			// registered; when Shutdown wins the race with the serve
			// goroutine, closing ours is what makes Serve return
			// (valyala/fasthttp#1371). A second Close is harmless.
			_ = ln.Close()
		}
		s.tasks.close()
	}
	if err := s.tasks.wait(ctx); err != nil {
		for _, c := range s.snapshot() {
			c.abort(errors.New("shutdown deadline"))
		}
		grace, cancel := context.WithTimeout(context.Background(), s.opts.CloseGrace)
		defer cancel()
		_ = s.tasks.wait(grace)
		errs = append(errs, fmt.Errorf("web: wait for connections to close: %w", err))
	}
	return errors.Join(errs...)
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

func (s *Server) snapshot() []*socket {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := make([]*socket, 0, len(s.sockets))
	for c := range s.sockets {
		cs = append(cs, c)
	}
	return cs
}

// register adds c to the open sockets, unless the server is shutting down.
func (s *Server) register(c *socket) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.sockets[c] = struct{}{}
	s.open.Add(1)
	s.met.WSConnections.Inc()
	return true
}

func (s *Server) unregister(c *socket) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sockets[c]; !ok {
		return
	}
	delete(s.sockets, c)
	s.open.Add(-1)
	s.met.WSConnections.Dec()
}

// connections is the count /health reports.
func (s *Server) connections() int {
	if s.opts.Health != nil {
		return s.opts.Health()
	}
	return int(s.open.Load())
}

// fasthttpLogger sends fasthttp's own messages to zerolog, at debug level:
// they are about clients (timeouts, malformed requests), which anyone can
// produce at will, so they must not flood the log.
type fasthttpLogger struct{ l zerolog.Logger }

func (f fasthttpLogger) Printf(format string, args ...any) { f.l.Debug().Msgf(format, args...) }
