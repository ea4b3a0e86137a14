package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Tavily provider constants.
const (
	TavilyName    = "tavily"
	TavilyBaseURL = "https://api.tavily.com"
)

// Tavily is the SearchProvider for Tavily's search API:
// POST {base}/search with {"query", "max_results", "include_domains"} and
// the key in an Authorization Bearer header (never in the body, which a
// failing server may echo).
type Tavily struct {
	key    string
	base   string
	client *http.Client
}

var _ SearchProvider = (*Tavily)(nil)

// NewTavily returns the provider; base "" means TavilyBaseURL and a nil
// client means http.DefaultClient (callers should pass one with a timeout).
func NewTavily(apiKey, base string, client *http.Client) *Tavily {
	if base == "" {
		base = TavilyBaseURL
	}
	if client == nil {
		client = http.DefaultClient
	}
	return &Tavily{key: apiKey, base: strings.TrimRight(base, "/"), client: client}
}

// Name implements SearchProvider.
func (t *Tavily) Name() string { return TavilyName }

type tavilyRequest struct {
	Query          string   `json:"query"`
	MaxResults     int      `json:"max_results"`
	IncludeDomains []string `json:"include_domains,omitempty"`
}

type tavilyResponse struct {
	Query        string  `json:"query"`
	ResponseTime float64 `json:"response_time"`
	RequestID    string  `json:"request_id"`
	Results      []struct {
		Title   string  `json:"title"`
		URL     string  `json:"url"`
		Content string  `json:"content"`
		Score   float64 `json:"score"`
	} `json:"results"`
}

// Search implements SearchProvider.
func (t *Tavily) Search(ctx context.Context, q SearchQuery) (SearchResponse, error) {
	body, err := json.Marshal(tavilyRequest{Query: q.Query, MaxResults: q.MaxResults, IncludeDomains: q.AllowedDomains})
	if err != nil {
		return SearchResponse{}, fmt.Errorf("tavily: encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/search", bytes.NewReader(body))
	if err != nil {
		return SearchResponse{}, fmt.Errorf("tavily: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.key)
	resp, err := t.client.Do(req)
	if err != nil {
		return SearchResponse{}, fmt.Errorf("tavily: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchResponseSize+1))
	if err != nil {
		return SearchResponse{}, fmt.Errorf("tavily: read response: %w", err)
	}
	if len(raw) > maxSearchResponseSize {
		return SearchResponse{}, fmt.Errorf("tavily: response larger than %d bytes", maxSearchResponseSize)
	}
	if resp.StatusCode != http.StatusOK {
		// The body may echo the request; never include it.
		return SearchResponse{}, fmt.Errorf("tavily: HTTP %d%s", resp.StatusCode, statusHint(resp.StatusCode))
	}
	var tr tavilyResponse
	if err := json.Unmarshal(raw, &tr); err != nil {
		return SearchResponse{}, fmt.Errorf("tavily: decode response: %w", err)
	}
	out := SearchResponse{
		Results:     make([]SearchResult, 0, len(tr.Results)),
		Diagnostics: map[string]any{"response_time": tr.ResponseTime, "http_status": resp.StatusCode},
	}
	if tr.RequestID != "" {
		out.Diagnostics["request_id"] = tr.RequestID
	}
	for _, r := range tr.Results {
		out.Results = append(out.Results, SearchResult{Title: r.Title, URL: r.URL, Snippet: r.Content, Score: r.Score})
	}
	return out, nil
}

// statusHint says what an HTTP error status of a search API means for the
// owner (who fixes the key or quota) and the model (which can wait).
func statusHint(code int) string {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return " (the API key was refused; the owner must check SEARCH_API_KEY)"
	case http.StatusTooManyRequests, 432, 433:
		return " (the provider's rate limit or plan quota is exhausted; try again later)"
	}
	return ""
}
