package executor

import "context"

// scopeKey is the context key of the scope a call runs for.
type scopeKey struct{}

// WithScope returns ctx carrying the id of the scope whose agent makes the
// call. Executors with per-scope limits (web_search's calls per minute,
// silas.limits.web_search_calls_per_minute_per_scope) count against it;
// calls without a scope share one budget, so a caller that forgets to set
// it is limited, never unlimited.
func WithScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, scopeKey{}, scope)
}

// scopeOf returns the scope of ctx, "" when none was set.
func scopeOf(ctx context.Context) string {
	s, _ := ctx.Value(scopeKey{}).(string)
	return s
}
