package llm

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
)

// Kind says what sort of failure a model call had. The escalation ladder
// and the text the user reads depend on it: a transient failure or a rate
// limit may pass if the same request is sent later; a refused key, a bad
// request or a content filter will not, and retrying only spends attempts
// and the owner's patience.
type Kind string

// The kinds of model-call failure.
const (
	KindNone          Kind = ""               // no error
	KindTransient     Kind = "transient"      // 5xx, 408, a timeout, the network, a body that is not a completion, an open circuit
	KindRateLimited   Kind = "rate_limited"   // 429
	KindAuth          Kind = "auth"           // no key, or the provider refused it (401, 403)
	KindBadRequest    Kind = "bad_request"    // the provider refused the request (400, 404, 422), or no model is configured
	KindContentFilter Kind = "content_filter" // the provider's content policy refused the prompt or the answer
	KindInvalidOutput Kind = "invalid_output" // the answer broke its schema, also after the repair retry
	KindCanceled      Kind = "canceled"       // the caller gave up (shutdown, deadline of the caller)
)

// Retryable reports whether the same call may succeed if it is made again
// later, unchanged.
func (k Kind) Retryable() bool {
	return k == KindTransient || k == KindRateLimited
}

// KindOf classifies err, an error of a model call.
func KindOf(err error) Kind {
	var api *APIError
	var netErr net.Error
	switch {
	case err == nil:
		return KindNone
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.Is(err, ErrMissingAPIKey):
		return KindAuth
	case errors.Is(err, ErrUnknownRole), errors.Is(err, ErrInvalidRequest):
		return KindBadRequest
	case errors.Is(err, ErrStructuredOutputInvalid):
		return KindInvalidOutput
	case errors.As(err, &api):
		return apiKind(api)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrInvalidResponse), errors.Is(err, ErrCircuitOpen), errors.As(err, &netErr):
		return KindTransient
	}
	return KindTransient
}

// apiKind classifies a provider's non-2xx answer. Content filters answer
// 400 with a code in the body (OpenAI and Azure "content_filter", OpenAI
// images "content_policy_violation"), so the body decides before the status.
func apiKind(e *APIError) Kind {
	body := strings.ToLower(e.Body)
	switch {
	case strings.Contains(body, "content_filter"), strings.Contains(body, "content_policy"):
		return KindContentFilter
	case e.Status == http.StatusTooManyRequests:
		return KindRateLimited
	case e.Status == http.StatusUnauthorized, e.Status == http.StatusForbidden:
		return KindAuth
	case e.Status == http.StatusRequestTimeout, e.Status >= 500:
		return KindTransient
	case e.Status >= 400:
		return KindBadRequest
	}
	return KindTransient
}
