package config

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateSearchRefuses(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(s *Search)
		want   []string
	}{
		{"unknown provider", func(s *Search) { s.Provider = "bing" }, []string{"silas.search.provider", "tavily", `"bing"`}},
		{"key with a newline", func(s *Search) { s.APIKey = "tvly-1\nX-Evil: 1" }, []string{"silas.search.api_key", "whitespace"}},
		{"base url plain http to a remote host", func(s *Search) { s.BaseURL = "http://search.example.com" },
			[]string{"silas.search.base_url", "expose the search API key", "https"}},
		{"base url not a URL", func(s *Search) { s.BaseURL = "api.tavily.com" }, []string{"silas.search.base_url", "absolute URL"}},
		{"base url with credentials", func(s *Search) { s.BaseURL = "https://u:p@api.tavily.com" }, []string{"silas.search.base_url"}},
		{"base url ftp", func(s *Search) { s.BaseURL = "ftp://api.tavily.com" }, []string{"silas.search.base_url", "must be https"}},
		{"timeout zero", func(s *Search) { s.TimeoutSeconds = 0 }, []string{"silas.search.timeout_seconds", "at least 1"}},
		{"max results zero", func(s *Search) { s.MaxResults = 0 }, []string{"silas.search.max_results", "between 1 and 20"}},
		{"max results above the provider's cap", func(s *Search) { s.MaxResults = 21 }, []string{"silas.search.max_results", "between 1 and 20"}},
		{"max query chars zero", func(s *Search) { s.MaxQueryChars = 0 }, []string{"silas.search.max_query_chars"}},
		{"domain with scheme", func(s *Search) { s.AllowedDomains = []string{"https://example.com"} }, []string{"silas.search.allowed_domains[0]", "bare domain"}},
		{"domain wildcard", func(s *Search) { s.AllowedDomains = []string{"go.dev", "*.example.com"} }, []string{"silas.search.allowed_domains[1]"}},
		{"domain with port", func(s *Search) { s.AllowedDomains = []string{"example.com:443"} }, []string{"silas.search.allowed_domains[0]"}},
		{"empty domain label", func(s *Search) { s.AllowedDomains = []string{"example..com"} }, []string{"silas.search.allowed_domains[0]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mustLoad(t, LoadOptions{Environ: []string{"SEARCH_API_KEY=tvly-1"}})
			c.mutate(&cfg.Search)
			err := cfg.Validate()
			wantErr(t, err, c.want...)
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("err does not wrap ErrInvalid: %v", err)
			}
			if strings.Contains(err.Error(), "tvly-1") {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}

func TestValidateSearchAccepts(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(s *Search)
	}{
		{"defaults without a key", func(s *Search) {}},
		{"no provider: web_search off", func(s *Search) { s.Provider = "" }},
		{"https base url", func(s *Search) { s.BaseURL = "https://search-proxy.example.com/tavily" }},
		{"http to loopback", func(s *Search) { s.BaseURL = "http://127.0.0.1:8089" }},
		{"http to localhost", func(s *Search) { s.BaseURL = "http://localhost:8089" }},
		{"http to ipv6 loopback", func(s *Search) { s.BaseURL = "http://[::1]:8089" }},
		{"max results at the cap", func(s *Search) { s.MaxResults = 20 }},
		{"domains", func(s *Search) {
			s.AllowedDomains = []string{"go.dev", "Docs.Python.org", "xn--bcher-kva.example", "localhost"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mustLoad(t, LoadOptions{})
			c.mutate(&cfg.Search)
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSearchBaseURLLoads(t *testing.T) {
	cfg := mustLoad(t, LoadOptions{Environ: []string{"SEARCH_API_KEY=tvly-1"},
		Overrides: map[string]any{"silas.search.base_url": "http://127.0.0.1:9"}})
	if cfg.Search.BaseURL != "http://127.0.0.1:9" || !cfg.Search.Enabled() {
		t.Fatalf("search %v: want the base url loaded and search enabled", cfg.Search)
	}
	if def := mustLoad(t, LoadOptions{}); def.Search.BaseURL != "" {
		t.Fatalf("default base_url %q, want empty (the provider's)", def.Search.BaseURL)
	}
}
