package mockllm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// DefaultDelay is the answer delay when [Options].Delay is zero.
const DefaultDelay = 50 * time.Millisecond

// Options configures a [Server]. Rates are probabilities in [0, 1], rolled
// independently per request in the order rate limit, error, malformed.
type Options struct {
	// Delay is how long each answer takes (a model's latency). Zero means
	// 50ms; a negative value answers at once.
	Delay time.Duration
	// ErrorRate is the share of requests answered 500 with an OpenAI error.
	ErrorRate float64
	// RateLimitRate is the share answered 429 with a Retry-After header.
	RateLimitRate float64
	// RetryAfter is the Retry-After of injected 429s, rounded up to whole
	// seconds; zero means 1s.
	RetryAfter time.Duration
	// MalformedRate is the share of structured-output requests answered with
	// [MalformedContent].
	MalformedRate float64
	// Seed seeds the failure dice, so a run is reproducible.
	Seed int64
	// MaxRecorded bounds the request log of [Server.Requests]; zero means
	// 10000, negative keeps none.
	MaxRecorded int
	// Models is what GET /v1/models lists; empty means ["mock/model"].
	Models []string
}

// Server is the mock model server. Its methods are safe for concurrent use.
type Server struct {
	opts    Options
	delay   time.Duration
	models  []byte // rendered /v1/models body
	rec     *recorder
	hook    atomic.Pointer[ReplyFunc]
	closing chan struct{}

	// embedFail, embedReqs and embedTexts belong to /v1/embeddings
	// (embeddings.go).
	embedFail  atomic.Int32
	embedReqs  atomic.Int64
	embedTexts atomic.Int64

	randMu sync.Mutex
	rand   *rand.Rand

	mu      sync.Mutex
	srv     *fasthttp.Server
	ln      net.Listener
	served  chan error
	started bool
	closed  bool
}

// New returns a server configured by o; [Server.Start] begins serving.
func New(o Options) *Server {
	s := &Server{opts: o, closing: make(chan struct{})}
	switch {
	case o.Delay == 0:
		s.delay = DefaultDelay
	case o.Delay > 0:
		s.delay = o.Delay
	}
	if s.opts.RetryAfter <= 0 {
		s.opts.RetryAfter = time.Second
	}
	max := o.MaxRecorded
	switch {
	case max == 0:
		max = DefaultMaxRecorded
	case max < 0:
		max = 0
	}
	s.rec = newRecorder(max)
	seed := uint64(o.Seed)
	s.rand = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	models := o.Models
	if len(models) == 0 {
		models = []string{"mock/model"}
	}
	s.models = modelList(models)
	return s
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background
// until [Server.Close].
func (s *Server) Start(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrAlreadyStarted
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mockllm: listen on %s: %w", addr, err)
	}
	s.started = true
	s.ln = ln
	s.srv = &fasthttp.Server{
		Handler:            s.serve,
		Name:               "silas-mockllm",
		IdleTimeout:        30 * time.Second,
		ReadTimeout:        60 * time.Second,
		MaxRequestBodySize: 64 << 20,
		CloseOnShutdown:    true,
	}
	s.served = make(chan error, 1)
	go func() { s.served <- s.srv.Serve(ln) }()
	return nil
}

// Addr returns the listening address, e.g. "127.0.0.1:38121", or "" before
// Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// URL returns the base URL to configure as a provider's base_url, e.g.
// "http://127.0.0.1:38121/v1".
func (s *Server) URL() string { return "http://" + s.Addr() + "/v1" }

// Close stops accepting requests, ends delays in progress (those requests
// get 503) and waits up to five seconds for connections to finish.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	close(s.closing)
	if !s.started {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	shutErr := s.srv.ShutdownWithContext(ctx)
	// Shutdown does nothing when Serve has not registered the listener yet;
	// closing it here makes such a Serve return at once.
	if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) && shutErr == nil {
		shutErr = err
	}
	if shutErr != nil {
		return fmt.Errorf("mockllm: shutdown: %w", shutErr)
	}
	if err := <-s.served; err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("mockllm: serve: %w", err)
	}
	return nil
}

// Requests returns the recorded requests, oldest first (at most
// Options.MaxRecorded of the latest).
func (s *Server) Requests() []RecordedRequest { return s.rec.requests() }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.rec.stats() }

// Reset clears the counters and the request log; the script stays.
func (s *Server) Reset() { s.rec.reset() }

// roll reports whether an event of probability p happens.
func (s *Server) roll(p float64) bool {
	if p <= 0 {
		return false
	}
	if p >= 1 {
		return true
	}
	s.randMu.Lock()
	defer s.randMu.Unlock()
	return s.rand.Float64() < p
}

// wait applies the answer delay; false means the server is closing.
func (s *Server) wait() bool {
	if s.delay <= 0 {
		return true
	}
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.closing:
		return false
	}
}

func modelList(ids []string) []byte {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for _, id := range ids {
		list.Data = append(list.Data, model{ID: id, Object: "model", Created: 1700000000, OwnedBy: "silas-mockllm"})
	}
	b, _ := json.Marshal(list) // plain strings always marshal
	return b
}

// retryAfterSeconds renders d as whole seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}
