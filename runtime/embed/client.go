package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/silas-ai/silas/runtime/llm"
)

// Client defaults.
const (
	// DefaultTimeout bounds one request when ClientOptions.Timeout is 0.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxBatch is how many texts one request carries at most.
	DefaultMaxBatch = 64
	// DefaultMaxInputRunes is how much of each text is sent: small
	// embedding models read 256 to 512 tokens and cut the rest, and
	// servers such as OpenAI's refuse inputs over their limit, which would
	// keep a long memory from ever getting a vector. About 2,000 characters
	// (some 500 tokens) carry what a memory is about.
	DefaultMaxInputRunes = 2000

	maxResponseBody = 64 << 20
	maxErrorBody    = 512
)

// ClientOptions configures a [Client].
type ClientOptions struct {
	// Provider is the provider's name in configuration, e.g. "openai"; it
	// appears in errors and in Model.
	Provider string
	// BaseURL is the OpenAI-compatible API root; requests go to
	// BaseURL + "/embeddings".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" and never appears in
	// errors. Empty with APIKeyEnv set means a key is missing: every call
	// fails with [ErrMissingAPIKey] naming APIKeyEnv, unless BaseURL is a
	// loopback address. Empty with APIKeyEnv empty means the server needs
	// no key: requests go to BaseURL, on any host, without Authorization.
	APIKey    string
	APIKeyEnv string
	// Model is the model id sent to the provider.
	Model string
	// Dimensions, when above 0, is sent as "dimensions" (models such as
	// OpenAI's text-embedding-3 shorten their vectors to it) and every
	// vector must have exactly that size. 0 takes the model's own size.
	Dimensions int
	// Timeout bounds each request, body included. Default 30s.
	Timeout time.Duration
	// MaxBatch caps the texts of one request. Default 64.
	MaxBatch int
	// MaxInputRunes cuts each text to this many characters before it is
	// sent. Default 2000.
	MaxInputRunes int
	// HTTP is the client to use; nil builds one.
	HTTP *http.Client
}

// Client is an [Embedder] over an OpenAI-compatible embeddings endpoint.
// It makes one attempt per request: the vector writer retries later with
// backoff, and a query's caller falls back to keyword search.
type Client struct {
	o      ClientOptions
	url    string
	auth   string
	keyErr error
	model  string
}

var _ Embedder = (*Client)(nil)

// NewClient returns a client; it does not contact the provider.
func NewClient(o ClientOptions) *Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxInputRunes <= 0 {
		o.MaxInputRunes = DefaultMaxInputRunes
	}
	if o.HTTP == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		o.HTTP = &http.Client{Transport: t}
	}
	if o.Provider == "" {
		o.Provider = "provider"
	}
	c := &Client{o: o, url: strings.TrimRight(o.BaseURL, "/") + "/embeddings", model: o.Provider + ":" + o.Model}
	if o.Dimensions > 0 {
		c.model += fmt.Sprintf("/%d", o.Dimensions)
	}
	switch {
	case o.APIKey != "":
		c.auth = "Bearer " + o.APIKey
	case o.APIKeyEnv != "" && !llm.IsLoopbackURL(o.BaseURL):
		c.keyErr = fmt.Errorf("embedding provider %s has no API key: set %s and restart, or point silas.providers.%s.base_url at a local OpenAI-compatible server: %w",
			o.Provider, o.APIKeyEnv, o.Provider, ErrMissingAPIKey)
	}
	return c
}

// Model implements [Embedder].
func (c *Client) Model() string { return c.model }

// CloseIdleConnections closes pooled keep-alive connections.
func (c *Client) CloseIdleConnections() { c.o.HTTP.CloseIdleConnections() }

// Embed implements [Embedder], in requests of at most MaxBatch texts.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.keyErr != nil {
		return nil, c.keyErr
	}
	out := make([][]float32, 0, len(texts))
	dims := 0
	for start := 0; start < len(texts); start += c.o.MaxBatch {
		batch := texts[start:min(start+c.o.MaxBatch, len(texts))]
		vecs, err := c.embedBatch(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("embed %d texts with %s: %w", len(texts), c.model, err)
		}
		for i, v := range vecs {
			if dims == 0 {
				dims = len(v)
			}
			if len(v) != dims {
				return nil, fmt.Errorf("embed with %s: vector %d has %d values, the others %d: %w", c.model, start+i, len(v), dims, ErrInvalidResponse)
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// embedBatch sends one request.
func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = cut(t, c.o.MaxInputRunes)
		if strings.TrimSpace(in[i]) == "" {
			// Servers refuse empty inputs; a blank text has no meaning to
			// find anyway, and any vector for it matches nothing in
			// particular.
			in[i] = "(empty)"
		}
	}
	body, err := json.Marshal(embedRequest{Model: c.o.Model, Input: in, EncodingFormat: "float", Dimensions: c.o.Dimensions})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	res, err := c.o.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", c.url, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBody+1))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if len(data) > maxResponseBody {
		return nil, fmt.Errorf("body larger than %d bytes: %w", maxResponseBody, ErrInvalidResponse)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		s := res.StatusCode
		return nil, &llm.APIError{Status: s, Body: c.redact(truncate(string(data), maxErrorBody)),
			Retryable: s == http.StatusTooManyRequests || s == http.StatusRequestTimeout || s >= 500}
	}
	var er embedResponse
	if err := json.Unmarshal(data, &er); err != nil {
		return nil, fmt.Errorf("decode response: %v: %w", err, ErrInvalidResponse)
	}
	if len(er.Data) != len(texts) {
		return nil, fmt.Errorf("%d embeddings for %d texts: %w", len(er.Data), len(texts), ErrInvalidResponse)
	}
	out := make([][]float32, len(texts))
	for _, d := range er.Data {
		if d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil {
			return nil, fmt.Errorf("embedding index %d out of range or repeated: %w", d.Index, ErrInvalidResponse)
		}
		if c.o.Dimensions > 0 && len(d.Embedding) != c.o.Dimensions {
			return nil, fmt.Errorf("the provider returned %d-dimensional vectors, silas.memory.embedding_dim is %d; set it to %d or to 0 (the model's own size): %w",
				len(d.Embedding), c.o.Dimensions, len(d.Embedding), ErrInvalidResponse)
		}
		if err := Normalize(d.Embedding); err != nil {
			return nil, fmt.Errorf("embedding %d: %w", d.Index, err)
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// redact removes the API key from text the server sent back.
func (c *Client) redact(s string) string {
	if key := strings.TrimPrefix(c.auth, "Bearer "); key != "" {
		return strings.ReplaceAll(s, key, "[redacted]")
	}
	return s
}

// cut returns s cut to at most n characters.
func cut(s string, n int) string {
	if len(s) <= n { // bytes >= runes
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// Retryable reports whether a failed Embed may succeed if made again later
// (an outage, a timeout, a rate limit), as opposed to a request the
// provider refused (a bad model id, a refused key, an input it will never
// take).
func Retryable(err error) bool {
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	if errors.Is(err, ErrMissingAPIKey) {
		return false
	}
	return llm.KindOf(err).Retryable()
}
