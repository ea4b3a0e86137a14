package config

import (
	"strings"
)

// searchProviders are the search.provider values this build implements
// (sandbox/executor holds the providers themselves).
var searchProviders = []string{"tavily"}

// maxSearchResults is the most results one search may ask for: Tavily's own
// cap on max_results.
const maxSearchResults = 20

// validate checks the search section. A missing key is not an error (spec
// 11: web_search is then simply not loaded), but every setting that is
// present must do what it says, whether or not a key is set today.
func (s Search) validate(p *problems) {
	if s.Provider != "" {
		p.oneOf("search.provider", s.Provider, searchProviders...)
	}
	if strings.ContainsFunc(s.APIKey, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		p.add("search.api_key", "contains whitespace or control characters; set SEARCH_API_KEY to the key alone")
	}
	if why := checkSearchBaseURL(s.BaseURL); why != "" {
		p.add("search.base_url", "%s", why)
	}
	p.atLeast("search.timeout_seconds", s.TimeoutSeconds, 1)
	if s.MaxResults < 1 || s.MaxResults > maxSearchResults {
		p.add("search.max_results", "must be between 1 and %d (the provider's cap), got %d", maxSearchResults, s.MaxResults)
	}
	p.atLeast("search.max_query_chars", s.MaxQueryChars, 1)
	for i, d := range s.AllowedDomains {
		if !isBareDomain(d) {
			p.add(indexed("search.allowed_domains", i), "%q is not a bare domain; write it like example.com (subdomains are included)", d)
		}
	}
}

// checkSearchBaseURL returns what is wrong with a search API base URL, ""
// when nothing is ("" itself means the provider's public API). The key
// travels in every request, so plain http is allowed only to loopback.
func checkSearchBaseURL(s string) string {
	if s == "" {
		return ""
	}
	return checkSecretURL(s, "https://api.tavily.com", "search API key")
}

// isBareDomain reports whether d is a host name such as example.com: dot
// separated labels of letters, digits and inner hyphens, no scheme, port,
// path or wildcard.
func isBareDomain(d string) bool {
	if d == "" || len(d) > 253 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}
