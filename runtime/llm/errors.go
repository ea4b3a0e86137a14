package llm

import (
	"errors"
	"fmt"
)

// ErrMissingAPIKey means a provider that needs an API key has none. The
// error's text names the environment variable to set; the caller shows it to
// the operator and does not retry until the configuration changes.
var ErrMissingAPIKey = errors.New("llm: missing API key")

// ErrStructuredOutputInvalid means the model's structured output failed to
// decode or validate twice (the first answer and the one repair retry of
// spec 5.1.0). The caller applies the deterministic fallback of its role:
// proxy synthesises a direct RouteDecision, planner a failure AgentResponse,
// executor fails the attempt with "executor_structured_output_invalid", and
// the scorer falls back to heuristic eviction. It must not call again.
var ErrStructuredOutputInvalid = errors.New("llm: structured output invalid after repair retry")

// ErrInvalidResponse means the provider answered with a body that is not a
// chat completion (not JSON, or no choices). The caller treats it like a
// failed call; if it persists, the provider's base_url is probably wrong.
var ErrInvalidResponse = errors.New("llm: provider response is not a chat completion")

// ErrInvalidRequest means the request cannot be sent as it is (no model, no
// messages, nil request). It is a programming error: fix the caller,
// retrying will not help.
var ErrInvalidRequest = errors.New("llm: invalid request")

// ErrUnknownRole means a [Router] was asked for a role it has no model for.
// The caller's configuration lacks that role; fix silas.models and restart.
var ErrUnknownRole = errors.New("llm: no model configured for role")

// ErrScriptExhausted means a [Scripted] provider received more calls than
// its script answers. Tests fail on it: the code under test called the model
// more often than the test expected.
var ErrScriptExhausted = errors.New("llm: scripted provider has no answer left")

// maxErrorBody is how many bytes of a provider's error body an [APIError]
// keeps.
const maxErrorBody = 512

// APIError is a non-2xx answer from a provider. It never contains the API
// key.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Body is the start of the response body, at most 512 bytes.
	Body string
	// Retryable is true for 408, 429 and 5xx: the same request may succeed
	// later. The [Client] has already retried it as configured.
	Retryable bool
}

// Error implements error.
func (e *APIError) Error() string {
	return fmt.Sprintf("provider answered HTTP %d: %s", e.Status, e.Body)
}

// missingKeyError carries the operator-facing message for a missing key and
// unwraps to [ErrMissingAPIKey].
type missingKeyError struct{ msg string }

func (e *missingKeyError) Error() string { return e.msg }
func (e *missingKeyError) Unwrap() error { return ErrMissingAPIKey }

// ErrCircuitOpen means a provider's circuit breaker is open: its recent
// calls failed, so the call was not sent to it and went to the next entry
// of the role's chain. It is transient: after the cool-down one probe call
// tries the provider again.
var ErrCircuitOpen = errors.New("llm: provider circuit open after repeated failures")

// ErrStreamInterrupted means a streamed answer ended before the server's
// "data: [DONE]": the connection dropped or the server gave up mid-answer.
// It is transient: the [Client] retries it as configured, and a consumer of
// [Request.Stream] discards what it received when the next [Delta] with
// Start arrives.
var ErrStreamInterrupted = errors.New("llm: streamed answer ended before [DONE]")
