package main

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/sandbox/executor"
)

// searchOptions maps silas.search and the web_search rate limit onto the
// executor's options. With no provider or no key web_search is not
// registered (spec 9.2): no model is offered it and no prompt lists it.
func searchOptions(cfg *config.Config) executor.SearchOptions {
	s := cfg.Search
	return executor.SearchOptions{
		Provider: s.Provider, APIKey: s.APIKey, BaseURL: s.BaseURL,
		Timeout:    time.Duration(s.TimeoutSeconds) * time.Second,
		MaxResults: s.MaxResults, MaxQueryChars: s.MaxQueryChars,
		AllowedDomains:         s.AllowedDomains,
		CallsPerMinutePerScope: cfg.Limits.WebSearchCallsPerMinutePerScope,
	}
}

// logSearch says at start whether web_search is on, and if not, how to turn
// it on. It never logs the key.
func logSearch(cfg *config.Config, execs *executor.Registry, log zerolog.Logger) {
	if _, ok := execs.Get(executor.WebSearch); ok {
		log.Info().Str("provider", cfg.Search.Provider).Int("max_results", cfg.Search.MaxResults).
			Strs("allowed_domains", cfg.Search.AllowedDomains).
			Int("calls_per_minute_per_scope", cfg.Limits.WebSearchCallsPerMinutePerScope).Msg("web_search enabled")
		return
	}
	log.Info().Msg("web_search off: set SEARCH_API_KEY (and silas.search.provider) to let the agents search the web")
}
