package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client defaults.
const (
	DefaultTimeout        = 120 * time.Second
	DefaultMaxRetries     = 2
	DefaultBackoffInitial = 500 * time.Millisecond
	DefaultBackoffMax     = 20 * time.Second

	// maxResponseBody caps how much of a response the client reads.
	maxResponseBody = 32 << 20
)

// ClientOptions configures a [Client].
type ClientOptions struct {
	// Name is the provider's name in configuration, e.g. "openrouter". It
	// appears in errors.
	Name string
	// BaseURL is the OpenAI-compatible API root, e.g.
	// "https://openrouter.ai/api/v1"; the client posts to
	// BaseURL + "/chat/completions".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>". It never appears in
	// errors. When it is empty and APIKeyEnv is set, the provider expects a
	// key that is missing: every call fails with [ErrMissingAPIKey], unless
	// BaseURL is a loopback address (a local llama.cpp or Ollama server).
	APIKey string
	// APIKeyEnv is the environment variable the key is read from, e.g.
	// "OPENROUTER_API_KEY"; the missing-key error tells the operator to set
	// it. Empty, with an empty APIKey, means the provider needs no key (a
	// provider configured without api_key_env): calls go to BaseURL, on
	// any host, without an Authorization header.
	APIKeyEnv string
	// Timeout bounds each HTTP attempt, body included. Default 120s.
	Timeout time.Duration
	// MaxRetries is how many times a retryable failure (429, 408, 5xx,
	// transport error) is retried after the first attempt. 0 means the
	// default of 2; a negative value disables retries.
	MaxRetries int
	// BackoffInitial is the first retry's wait before jitter. Default 500ms.
	BackoffInitial time.Duration
	// BackoffMax caps every wait, including a server's Retry-After.
	// Default 20s.
	BackoffMax time.Duration
	// Sleep waits between attempts; nil uses a timer that stops early when
	// ctx is done. Tests inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock used to read Retry-After dates and deadlines; nil
	// uses time.Now.
	Now func() time.Time
	// HTTP is the client to use; nil builds one with a keep-alive transport
	// sized for many concurrent scopes calling one host.
	HTTP *http.Client
}

// Client is an OpenAI-compatible chat-completions [Provider]. It is safe for
// concurrent use.
type Client struct {
	name       string
	url        string
	auth       string // "Bearer <key>", or "" for a keyless server
	keyErr     error
	timeout    time.Duration
	maxRetries int
	initial    time.Duration
	max        time.Duration
	sleep      func(context.Context, time.Duration) error
	now        func() time.Time
	jitter     func(time.Duration) time.Duration
	http       *http.Client
}

var _ Provider = (*Client)(nil)

// NewClient returns a client for one provider. It does not contact the
// provider; a missing API key is reported by every [Client.Complete].
func NewClient(o ClientOptions) *Client {
	c := &Client{
		name:       o.Name,
		url:        strings.TrimRight(o.BaseURL, "/") + "/chat/completions",
		timeout:    o.Timeout,
		maxRetries: o.MaxRetries,
		initial:    o.BackoffInitial,
		max:        o.BackoffMax,
		sleep:      o.Sleep,
		now:        o.Now,
		jitter:     randJitter,
		http:       o.HTTP,
	}
	if c.name == "" {
		c.name = "provider"
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.initial <= 0 {
		c.initial = DefaultBackoffInitial
	}
	if c.max <= 0 {
		c.max = DefaultBackoffMax
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.http == nil {
		c.http = &http.Client{Transport: newTransport()}
	}
	switch {
	case o.APIKey != "":
		c.auth = "Bearer " + o.APIKey
	case o.APIKeyEnv != "" && !IsLoopbackURL(o.BaseURL):
		c.keyErr = missingKey(c.name, o.APIKeyEnv)
	}
	return c
}

// Name returns the provider's configured name.
func (c *Client) Name() string { return c.name }

// CloseIdleConnections closes pooled keep-alive connections; call it on
// shutdown.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// Complete sends req, retrying retryable failures with exponential backoff
// and jitter (honouring Retry-After) within ctx. A non-2xx answer is an
// *[APIError] in the returned chain.
func (c *Client) Complete(ctx context.Context, req *Request) (*Response, error) {
	if c.keyErr != nil {
		return nil, c.keyErr
	}
	if req == nil || req.Model == "" || len(req.Messages) == 0 {
		return nil, fmt.Errorf("llm %s: %w: a request needs a model and at least one message", c.name, ErrInvalidRequest)
	}
	body, err := encodeBody(req)
	if err != nil {
		return nil, fmt.Errorf("llm %s: %w", c.name, err)
	}
	for attempt := 0; ; attempt++ {
		resp, retryAfter, err := c.attempt(ctx, &body, req.Stream)
		if err == nil {
			return resp, nil
		}
		if attempt >= c.maxRetries || !c.retryable(ctx, err) {
			return nil, fmt.Errorf("llm %s: chat completion, attempt %d of %d: %w", c.name, attempt+1, c.maxRetries+1, err)
		}
		wait := backoff(attempt, c.initial, c.max, retryAfter, c.jitter)
		if dl, ok := ctx.Deadline(); ok && c.now().Add(wait).After(dl) {
			return nil, fmt.Errorf("llm %s: chat completion, attempt %d: %w (not retried: waiting %s would pass the deadline)", c.name, attempt+1, err, wait)
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("llm %s: waiting to retry: %w (attempt %d: %w)", c.name, serr, attempt+1, err)
		}
	}
}

// retryable reports whether err from one attempt is worth another while ctx
// is still live.
func (c *Client) retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Retryable
	}
	var te *transportError
	return errors.As(err, &te)
}

// attempt performs one HTTP exchange, streamed to onDelta when it is set.
// It returns the server's Retry-After for error answers.
func (c *Client) attempt(ctx context.Context, body *requestBody, onDelta func(Delta)) (*Response, time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, body.reader())
	if err != nil {
		return nil, 0, fmt.Errorf("build request: %w", err)
	}
	hreq.ContentLength = int64(body.size)
	hreq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.reader()), nil }
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if onDelta != nil {
		hreq.Header.Set("Accept", "text/event-stream, application/json")
	}
	if c.auth != "" {
		hreq.Header.Set("Authorization", c.auth)
	}
	hres, err := c.http.Do(hreq)
	if err != nil {
		return nil, 0, &transportError{err: err}
	}
	defer hres.Body.Close()
	if onDelta != nil && hres.StatusCode >= 200 && hres.StatusCode <= 299 {
		resp, err := readStream(hres, onDelta)
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			apiErr.Body = c.redact(apiErr.Body)
		}
		return resp, 0, err
	}
	data, err := io.ReadAll(io.LimitReader(hres.Body, maxResponseBody+1))
	if err != nil {
		return nil, 0, &transportError{err: fmt.Errorf("read response: %w", err)}
	}
	if len(data) > maxResponseBody {
		return nil, 0, fmt.Errorf("%w: body larger than %d bytes", ErrInvalidResponse, maxResponseBody)
	}
	if hres.StatusCode < 200 || hres.StatusCode > 299 {
		return nil, parseRetryAfter(hres.Header.Get("Retry-After"), c.now()), &APIError{
			Status:    hres.StatusCode,
			Body:      c.redact(truncate(string(data), maxErrorBody)),
			Retryable: retryableStatus(hres.StatusCode),
		}
	}
	resp, err := decodeResponse(data)
	if err != nil {
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			apiErr.Body = c.redact(apiErr.Body)
		}
		return nil, 0, err
	}
	return resp, 0, nil
}

// redact removes the API key from text that came back from the server, in
// case a provider echoes the Authorization header.
func (c *Client) redact(s string) string {
	if key := strings.TrimPrefix(c.auth, "Bearer "); key != "" {
		return strings.ReplaceAll(s, key, "[redacted]")
	}
	return s
}

// transportError marks a failure to reach the server or read its answer;
// such failures are retried.
type transportError struct{ err error }

func (e *transportError) Error() string { return "transport: " + e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// newTransport is a keep-alive transport for many concurrent calls to one
// host.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 512
	t.IdleConnTimeout = 90 * time.Second
	return t
}

// missingKey builds the operator-facing missing-key error.
func missingKey(name, env string) error {
	return &missingKeyError{msg: fmt.Sprintf(
		"model provider %s has no API key: set %s and restart, or point silas.providers.%s.base_url at a local OpenAI-compatible server",
		name, env, name)}
}

// IsLoopbackURL reports whether base's host is localhost or a loopback IP:
// a provider there (a local llama.cpp or Ollama server) may go without the
// key its api_key_env names.
func IsLoopbackURL(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
