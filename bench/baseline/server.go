package baseline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"
)

// Options configures the baseline daemon.
type Options struct {
	// ModelURL is the mock model's OpenAI-compatible base URL, e.g.
	// "http://127.0.0.1:8421/v1". Required.
	ModelURL string
	// APIKey is the bearer token of model calls; the mock accepts any
	// non-empty one.
	APIKey string
	// Model is the model name sent with each call; empty means "mock/model".
	Model string
	// OwnerToken is the token the owner authenticates with on /ws; empty
	// refuses every owner.
	OwnerToken string
	// ModelTimeout bounds one model call; zero means 60 s.
	ModelTimeout time.Duration
}

// closeGrace bounds Close's wait for the listener to stop.
const closeGrace = 2 * time.Second

// Server is the baseline daemon. Create it with New, start it with Start,
// stop it with Close.
type Server struct {
	opts     Options
	model    *modelClient
	http     *fasthttp.Server
	upgrader websocket.FastHTTPUpgrader
	served   chan error // Serve's result, once it returns

	mu      sync.Mutex
	ln      net.Listener
	closing bool
	conns   map[*websocket.Conn]struct{}
	sockets sync.WaitGroup // socket handlers; Add only under mu while not closing
}

// New validates opts and returns a server that is not listening yet.
func New(opts Options) (*Server, error) {
	if opts.ModelURL == "" {
		return nil, ErrNoModelURL
	}
	if opts.Model == "" {
		opts.Model = "mock/model"
	}
	if opts.ModelTimeout <= 0 {
		opts.ModelTimeout = 60 * time.Second
	}
	s := &Server{opts: opts, model: newModelClient(opts), conns: map[*websocket.Conn]struct{}{}, served: make(chan error, 1)}
	s.http = &fasthttp.Server{
		Handler: s.handle, NoDefaultServerHeader: true,
		// Sockets own their connections: closing one must really close it
		// (fasthttp's hijacked connections ignore Close otherwise).
		KeepHijackedConns: true,
	}
	return s, nil
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background.
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("baseline: listen on %s: %w", addr, err)
	}
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	go func() { s.served <- s.http.Serve(ln) }()
	return nil
}

// Addr is the address the server listens on, once started.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops accepting connections, closes the open sockets and waits for
// their handlers (a turn waiting on the model ends when its call does).
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	started := s.ln != nil
	open := make([]*websocket.Conn, 0, len(s.conns))
	for c := range s.conns {
		open = append(open, c)
	}
	s.mu.Unlock()

	var err error
	if started {
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		err = s.http.ShutdownWithContext(ctx)
		cancel()
		if serveErr := <-s.served; serveErr != nil && err == nil {
			err = serveErr
		}
	}
	bye := websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down")
	for _, c := range open {
		_ = c.WriteControl(websocket.CloseMessage, bye, time.Now().Add(time.Second))
		_ = c.Close()
	}
	s.sockets.Wait()
	s.model.close()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("baseline: stop listening: %w", err)
	}
	return nil
}

// handle routes an HTTP request: /chat and /ws upgrade, anything else is
// not found.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	var owner bool
	switch string(ctx.Path()) {
	case "/chat":
	case "/ws":
		owner = true
	default:
		ctx.Error("not found: the baseline serves /chat and /ws only", fasthttp.StatusNotFound)
		return
	}
	// The upgrader answers a failed handshake itself.
	_ = s.upgrader.Upgrade(ctx, func(ws *websocket.Conn) { s.serveSocket(ws, owner) })
}

// track registers a socket so Close can end it; false once closing.
func (s *Server) track(ws *websocket.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[ws] = struct{}{}
	s.sockets.Add(1)
	return true
}

func (s *Server) untrack(ws *websocket.Conn) {
	s.mu.Lock()
	delete(s.conns, ws)
	s.mu.Unlock()
	s.sockets.Done()
}
