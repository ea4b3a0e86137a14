package fakebot

import (
	"fmt"
	"net/http"
	"strings"
)

// RateLimit makes the next n calls of method (for example "sendMessage")
// fail as Telegram's flood control does: HTTP 429 with
// {"ok":false,"error_code":429,"parameters":{"retry_after":retryAfter}}.
// The refused calls have no effect. Calls queue behind failures injected
// earlier for the same method.
func (s *Server) RateLimit(method string, n, retryAfter int) {
	s.Fail(method, n, http.StatusTooManyRequests,
		fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), retryAfter)
}

// Fail makes the next n calls of method fail with HTTP status code and the
// given description (for example 403, "Forbidden: bot was blocked by the
// user"), with parameters.retry_after when retryAfter > 0.
func (s *Server) Fail(method string, n, code int, description string, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(method)
	for range n {
		s.failures[key] = append(s.failures[key], apiError{Code: code, Description: description, RetryAfter: retryAfter})
	}
}

// takeFailure pops the next injected failure for method, if any.
func (s *Server) takeFailure(method string) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(method)
	q := s.failures[key]
	if len(q) == 0 {
		return nil
	}
	f := q[0]
	s.failures[key] = q[1:]
	return &f
}
