package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		want      Kind
		retryable bool
	}{
		{"nil", nil, KindNone, false},
		{"server error", &APIError{Status: 502, Body: "bad gateway"}, KindTransient, true},
		{"request timeout", &APIError{Status: 408}, KindTransient, true},
		{"rate limit", fmt.Errorf("proxy: %w", &APIError{Status: 429, Body: "slow down"}), KindRateLimited, true},
		{"refused key", &APIError{Status: 401, Body: "invalid api key"}, KindAuth, false},
		{"forbidden", &APIError{Status: 403}, KindAuth, false},
		{"missing key", fmt.Errorf("planner: %w", &missingKeyError{msg: "set OPENAI_API_KEY"}), KindAuth, false},
		{"unknown model", &APIError{Status: 404, Body: "model not found"}, KindBadRequest, false},
		{"bad request", &APIError{Status: 400, Body: "context length exceeded"}, KindBadRequest, false},
		{"no role", fmt.Errorf("route: %w", ErrUnknownRole), KindBadRequest, false},
		{"content filter", &APIError{Status: 400, Body: `{"code":"content_filter"}`}, KindContentFilter, false},
		{"content policy", &APIError{Status: 400, Body: "Your request was rejected: CONTENT_POLICY_VIOLATION"}, KindContentFilter, false},
		{"schema", fmt.Errorf("proxy: %w", ErrStructuredOutputInvalid), KindInvalidOutput, false},
		{"not a completion", ErrInvalidResponse, KindTransient, true},
		{"deadline", fmt.Errorf("call: %w", context.DeadlineExceeded), KindTransient, true},
		{"network", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, KindTransient, true},
		{"canceled", fmt.Errorf("call: %w", context.Canceled), KindCanceled, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := KindOf(tc.err)
			if got != tc.want || got.Retryable() != tc.retryable {
				t.Fatalf("KindOf(%v) = %q (retryable %v), want %q (retryable %v)", tc.err, got, got.Retryable(), tc.want, tc.retryable)
			}
		})
	}
}
