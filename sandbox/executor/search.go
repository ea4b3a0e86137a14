package executor

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/ratelimit"
	"github.com/silas-ai/silas/sandbox"
)

// Search defaults (spec 11 search section).
const (
	DefaultSearchTimeout  = 8 * time.Second
	DefaultMaxResults     = 5
	DefaultMaxQueryChars  = 300
	DefaultCallsPerMinute = 20
	// MaxResultsCeiling is the most results one search may return: Tavily's
	// own cap on max_results.
	MaxResultsCeiling     = 20
	maxSnippetChars       = 2000
	maxTitleChars         = 300
	maxSearchResponseSize = 2 << 20
)

// SearchResult is one hit of a web search.
type SearchResult struct {
	Title   string
	URL     string
	Snippet string
	Score   float64
}

// SearchQuery is what a provider is asked.
type SearchQuery struct {
	Query          string
	MaxResults     int
	AllowedDomains []string
}

// SearchProvider answers web searches over HTTP.
type SearchProvider interface {
	// Name is the provider key, as in config search.provider.
	Name() string
	// Search runs q; it must return within ctx's deadline.
	Search(ctx context.Context, q SearchQuery) (SearchResponse, error)
}

// SearchResponse is a provider's answer. Diagnostics are application-only
// details (request id, response time) that go to result metadata.
type SearchResponse struct {
	Results     []SearchResult
	Diagnostics map[string]any
}

// SearchOptions configure web_search; they mirror config.Search and
// silas.limits.web_search_calls_per_minute_per_scope.
type SearchOptions struct {
	// Provider is the provider key; only "tavily" is implemented. Empty
	// disables web_search.
	Provider string
	// APIKey is the provider's key; empty disables web_search. It goes only
	// into the provider's Authorization header: never into results, errors,
	// metadata or the sandbox.
	APIKey string
	// BaseURL overrides the provider's API base URL: https, or http to a
	// loopback address (a local stand-in or proxy).
	BaseURL string
	// Timeout bounds one search. Default DefaultSearchTimeout.
	Timeout time.Duration
	// MaxResults caps results per search, at most MaxResultsCeiling.
	// Default DefaultMaxResults.
	MaxResults int
	// MaxQueryChars refuses longer queries. Default DefaultMaxQueryChars.
	MaxQueryChars int
	// AllowedDomains restricts results to these domains (and subdomains);
	// empty means the whole web.
	AllowedDomains []string
	// CallsPerMinutePerScope limits searches per scope (see WithScope).
	// Default DefaultCallsPerMinute.
	CallsPerMinutePerScope int
	// Now is the rate limiter's clock. Default time.Now.
	Now func() time.Time
	// HTTPClient makes the requests. Default: a client with Timeout that
	// follows no redirects.
	HTTPClient *http.Client
}

// Enabled reports whether web_search is configured at all: a provider and
// a key (spec 9.2). An enabled configuration that is not Valid is an error
// at start, not a silently missing tool.
func (o SearchOptions) Enabled() bool {
	return o.Provider != "" && strings.TrimSpace(o.APIKey) != ""
}

// Valid reports why web_search cannot be registered, or nil.
func (o SearchOptions) Valid() error {
	switch {
	case o.Provider == "":
		return fmt.Errorf("web_search: no search provider configured")
	case strings.TrimSpace(o.APIKey) == "":
		return fmt.Errorf("web_search: search.api_key is empty; set SEARCH_API_KEY")
	case strings.ContainsFunc(o.APIKey, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return fmt.Errorf("web_search: search.api_key contains whitespace or control characters")
	case o.Provider != TavilyName:
		return fmt.Errorf("web_search: unknown search provider %q (known: %s)", o.Provider, TavilyName)
	case o.Timeout < 0 || o.MaxResults < 0 || o.MaxQueryChars < 0 || o.CallsPerMinutePerScope < 0:
		return fmt.Errorf("web_search: timeout, max_results, max_query_chars and calls per minute must not be negative")
	case o.MaxResults > MaxResultsCeiling:
		return fmt.Errorf("web_search: max_results %d is above the provider's cap of %d", o.MaxResults, MaxResultsCeiling)
	}
	if o.BaseURL != "" {
		u, err := url.Parse(o.BaseURL)
		if err != nil || u.Host == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return fmt.Errorf("web_search: base URL %q must be an http(s) URL", o.BaseURL)
		}
		if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
			return fmt.Errorf("web_search: base URL %q is plain http to a remote host, which would expose the API key; use https", o.BaseURL)
		}
	}
	return nil
}

func (o SearchOptions) withDefaults() SearchOptions {
	if o.Timeout == 0 {
		o.Timeout = DefaultSearchTimeout
	}
	if o.MaxResults == 0 {
		o.MaxResults = DefaultMaxResults
	}
	o.MaxResults = min(o.MaxResults, MaxResultsCeiling)
	if o.MaxQueryChars == 0 {
		o.MaxQueryChars = DefaultMaxQueryChars
	}
	if o.CallsPerMinutePerScope == 0 {
		o.CallsPerMinutePerScope = DefaultCallsPerMinute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: o.Timeout, CheckRedirect: refuseRedirect}
	}
	return o
}

// refuseRedirect keeps the client on the configured API: a search API
// answers a POST directly, and a redirect could carry the request (and the
// key) elsewhere.
func refuseRedirect(req *http.Request, _ []*http.Request) error {
	return fmt.Errorf("the search API redirected to %s; set search.base_url to the API's own address", req.URL.Redacted())
}

// loopbackHost reports whether host names this machine.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}

// Search is the web_search executor. Its args are {"query": "text"} and
// optionally {"max_results": n} (capped by the configuration). It runs in
// the daemon over the provider's HTTP API, never in the sandbox, limits
// calls per scope, and its output is always TaintExternal.
type Search struct {
	opts     SearchOptions
	provider SearchProvider
	limit    *ratelimit.Keyed // calls per minute, per scope
}

var _ Executor = (*Search)(nil)

// NewWebSearch returns web_search over the configured provider.
func NewWebSearch(opts SearchOptions) (*Search, error) {
	if err := opts.Valid(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	return NewSearchWith(opts, NewTavily(opts.APIKey, opts.BaseURL, opts.HTTPClient)), nil
}

// NewSearchWith returns web_search over any provider, with opts' limits.
func NewSearchWith(opts SearchOptions, p SearchProvider) *Search {
	opts = opts.withDefaults()
	return &Search{opts: opts, provider: p, limit: ratelimit.NewKeyed(opts.CallsPerMinutePerScope)}
}

// Name implements Executor.
func (s *Search) Name() string { return WebSearch }

// Execute implements Executor.
func (s *Search) Execute(ctx context.Context, env *messages.ExecutionEnvelope, _ sandbox.Instance) (*messages.ExecutionResult, error) {
	start := time.Now()
	seconds := func() float64 { return time.Since(start).Seconds() }
	query, ok, err := stringArg(env.Args, "query")
	query = strings.TrimSpace(query)
	if err == nil && (!ok || query == "") {
		err = fmt.Errorf("%w: web_search needs a non-empty query", ErrInvalidArgs)
	}
	if err == nil && len([]rune(query)) > s.opts.MaxQueryChars {
		err = fmt.Errorf("%w: query is %d characters, the limit is %d; shorten it to the key terms", ErrInvalidArgs, len([]rune(query)), s.opts.MaxQueryChars)
	}
	if err != nil {
		return failed(env, seconds(), err)
	}
	n := s.opts.MaxResults
	if v, ok := env.Args["max_results"]; ok {
		f, isNum := v.(float64)
		if i, isInt := v.(int); isInt {
			f, isNum = float64(i), true
		}
		if !isNum || f < 1 || f != float64(int(f)) {
			return failed(env, seconds(), fmt.Errorf("%w: max_results must be a positive integer", ErrInvalidArgs))
		}
		n = min(n, int(f))
	}
	// Counted only for calls that would reach the provider: a malformed
	// call costs the scope nothing.
	if !s.limit.Allow(scopeOf(ctx), s.opts.Now()) {
		return failed(env, seconds(), fmt.Errorf("%w: at most %d web searches per minute in this scope "+
			"(silas.limits.web_search_calls_per_minute_per_scope); the search did not run, so use the results you have or search again later",
			ErrRateLimited, s.opts.CallsPerMinutePerScope))
	}
	timeout := min(s.opts.Timeout, time.Duration(env.TimeoutSeconds)*time.Second)
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := s.provider.Search(sctx, SearchQuery{Query: query, MaxResults: n, AllowedDomains: s.opts.AllowedDomains})
	if err != nil {
		return failed(env, seconds(), fmt.Errorf("%w: %s: %w", ErrSearchProvider, s.provider.Name(), err))
	}
	hits := filterResults(resp.Results, s.opts.AllowedDomains, n)
	return searchResult(env, s.provider.Name(), hits, resp.Diagnostics, seconds()), nil
}

// filterResults keeps at most n results with an http(s) URL whose host is
// in allowed (or any host when allowed is empty), and trims long titles and
// snippets: the provider is not trusted to have applied the domain filter
// or the count.
func filterResults(in []SearchResult, allowed []string, n int) []SearchResult {
	out := make([]SearchResult, 0, min(len(in), n))
	for _, r := range in {
		if len(out) == n {
			break
		}
		if !hostAllowed(r.URL, allowed) {
			continue
		}
		r.Title = clipRunes(r.Title, maxTitleChars)
		r.Snippet = clipRunes(r.Snippet, maxSnippetChars)
		out = append(out, r)
	}
	return out
}

func clipRunes(s string, n int) string {
	if rs := []rune(s); len(rs) > n {
		return string(rs[:n])
	}
	return s
}

// hostAllowed reports whether raw is an http(s) URL on one of the allowed
// domains or their subdomains; with no allowed domains any such URL is.
func hostAllowed(raw string, allowed []string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return false
	}
	if len(allowed) == 0 {
		return true
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	for _, d := range allowed {
		d = strings.ToLower(strings.TrimPrefix(d, "."))
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

func searchResult(env *messages.ExecutionEnvelope, provider string, hits []SearchResult, diag map[string]any, seconds float64) *messages.ExecutionResult {
	var b strings.Builder
	content := make([]map[string]any, 0, len(hits))
	for i, h := range hits {
		fmt.Fprintf(&b, "%d. %s\n%s\n%s\n\n", i+1, h.Title, h.URL, h.Snippet)
		content = append(content, map[string]any{"type": "search_result", "title": h.Title, "url": h.URL, "snippet": h.Snippet})
	}
	if len(hits) == 0 {
		b.WriteString("No results.")
	}
	meta := map[string]any{"provider": provider, "result_count": len(hits)}
	for k, v := range diag {
		meta["provider_"+k] = v
	}
	return &messages.ExecutionResult{
		ExecutionID:     env.ExecutionID,
		StepIndex:       env.StepIndex,
		Success:         true,
		ReturnValue:     strings.TrimSpace(b.String()),
		Content:         content,
		Metadata:        meta,
		Artifacts:       map[string]string{},
		Taint:           messages.TaintExternal, // the web is never trusted
		DurationSeconds: seconds,
	}
}
