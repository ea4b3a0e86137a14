package executor

import "errors"

// Sentinel errors of the executors. A result's error field carries the same
// text; the Go error wraps these for errors.Is.
var (
	// ErrUnknownAction means no executor of that name is registered (web_search
	// is registered only with a valid search configuration). Use one of
	// Registry.Names.
	ErrUnknownAction = errors.New("executor: unknown action")

	// ErrInvalidArgs means the envelope's args do not fit the action; the
	// message names the argument to fix.
	ErrInvalidArgs = errors.New("executor: invalid arguments")

	// ErrInvalidEnvelope means the envelope failed validation.
	ErrInvalidEnvelope = errors.New("executor: invalid envelope")

	// ErrDuplicate means two executors share a name; rename one.
	ErrDuplicate = errors.New("executor: duplicate executor name")

	// ErrFailed means the execution ran and failed (non-zero exit, timeout,
	// signal, provider error); the result holds the detail.
	ErrFailed = errors.New("executor: execution failed")

	// ErrSearchProvider means the search provider could not answer; retry
	// later or check the provider's key and quota.
	ErrSearchProvider = errors.New("executor: search provider failed")

	// ErrRateLimited means the scope made more web searches in the last
	// minute than silas.limits.web_search_calls_per_minute_per_scope
	// allows; the call did not run. Use the results already found or wait.
	ErrRateLimited = errors.New("executor: rate limit reached")
)
