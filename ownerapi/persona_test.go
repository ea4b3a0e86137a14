package ownerapi

import (
	"fmt"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/personality"
)

func personaOpOf(kind string, trusted bool) actors.PersonaOp {
	return actors.PersonaOp{Kind: kind, Trusted: trusted}
}

func TestPersonaBadInput(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, path, body string
		msg              string // exact, or "" to check only the code
	}{
		{"feedback not JSON", "/persona/feedback", `nope`, ""},
		{"feedback unknown field", "/persona/feedback", `{"type":"too_harsh","x":1}`, ""},
		{"feedback bad type", "/persona/feedback", `{"type":"Too Harsh"}`, `feedback type "Too Harsh": want a lowercase name such as too_harsh or too_wordy`},
		{"preset empty", "/persona/preset", `{"preset":""}`, "preset is empty: name a configured preset such as default, work, chill or review"},
		{"preset no body", "/persona/preset", ``, "the body must be a JSON object of the documented fields: EOF"},
		{"tune empty delta", "/persona/tune", `{"delta":{}}`, `delta is empty: give at least one axis, e.g. {"warmth": 0.1}`},
		{"tune out of range", "/persona/tune", `{"delta":{"warmth":3}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, h.do("POST", tc.path, h.customer, tc.body), fasthttp.StatusBadRequest, messages.CodeBadRequest, tc.msg)
		})
	}
	if calls := h.actors.Calls(); len(calls) != 0 {
		t.Fatalf("bad input reached the actors: %v", calls)
	}
}

func TestPersonaErrors(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		err    error
		status int
		code   messages.Code
	}{
		{fmt.Errorf("scope: %w", personality.ErrRateLimited), fasthttp.StatusTooManyRequests, messages.CodeRateLimited},
		{personality.ErrUnknownFeedback, fasthttp.StatusBadRequest, messages.CodeBadRequest},
		{personality.ErrUnknownPreset, fasthttp.StatusBadRequest, messages.CodeBadRequest},
		{fmt.Errorf("disk on fire"), fasthttp.StatusInternalServerError, messages.CodeInternal},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			h.actors.set(func(f *fakeActors) { f.personaErr = tc.err })
			wantError(t, h.do("POST", "/persona/feedback", h.customer, `{"type":"too_harsh"}`), tc.status, tc.code, tc.err.Error())
		})
	}
}
