package llm

import (
	"context"
	"fmt"
	"slices"
)

// SchemaErrorMarker starts the repair message that [RunStructured] appends
// after a schema validation failure (spec 5.1.0).
const SchemaErrorMarker = "[SCHEMA VALIDATION ERROR]\n"

// maxErrorSummary caps the validation error text sent back to the model.
const maxErrorSummary = 500

// Completer performs one chat completion. It is a function rather than an
// interface so that any [Provider]'s method value (client.Complete) and a
// role-bound router ([Router.Completer]) both fit without adapters.
type Completer func(ctx context.Context, req *Request) (*Response, error)

// Result is the outcome of [RunStructured].
type Result struct {
	// Response is the answer whose content decoded; nil when none did.
	Response *Response
	// Usage is the sum over all calls, successful or not, for budgets.
	Usage Usage
	// Calls is how many calls were made (1 or 2).
	Calls int
	// Models are the "<provider>:<model id>" that answered, one per
	// answered call, in order; a [Router] names them (Response.Ref).
	Models []string
	// Fallbacks are the chain entries that did not answer before one did,
	// over all calls.
	Fallbacks []Fallback
}

// note records an answered call's usage and who answered it.
func (r *Result) note(resp *Response) {
	r.Usage = r.Usage.Add(resp.Usage)
	if resp.Ref != "" {
		r.Models = append(r.Models, resp.Ref)
	}
	r.Fallbacks = append(r.Fallbacks, resp.Fallbacks...)
}

// RunStructured is the structured-output wrapper of spec 5.1.0. It calls
// complete with req and passes the answer's content to decode, which
// unmarshals and validates it. If decode fails, it calls exactly once more
// with the same request (same model, tools and limits) plus a user message
// "[SCHEMA VALIDATION ERROR]\n<error, at most 500 bytes>". If that answer
// fails too, the error wraps [ErrStructuredOutputInvalid] and the caller
// applies its role's fallback.
//
// When req offers tools (and ToolChoice is not [ToolChoiceNone]) an answer
// that asks for tool calls is not decoded: it is returned at once as
// Result.Response, for the caller's tool loop to run the calls and ask
// again. A repair answer that asks for calls is returned the same way.
//
// Errors from complete itself (transport, API, context) are returned as they
// are, without a repair call. The returned Result is non-nil whenever at
// least one call was made, errors included, so that the caller can charge
// Result.Usage to its budget. req is not modified.
func RunStructured(ctx context.Context, complete Completer, req *Request, decode func(content string) error) (*Result, error) {
	res := &Result{}
	resp, err := complete(ctx, req)
	res.Calls++
	if err != nil {
		return res, err
	}
	res.note(resp)
	if callsTools(req, resp) {
		res.Response = resp
		return res, nil
	}
	derr := decode(resp.Content)
	if derr == nil {
		res.Response = resp
		return res, nil
	}

	repair := *req
	repair.Messages = append(slices.Clip(req.Messages), Message{
		Role:    RoleUser,
		Content: SchemaErrorMarker + truncate(derr.Error(), maxErrorSummary),
	})
	resp, err = complete(ctx, &repair)
	res.Calls++
	if err != nil {
		return res, fmt.Errorf("structured output repair call (first answer invalid: %v): %w", derr, err)
	}
	res.note(resp)
	if callsTools(req, resp) {
		res.Response = resp
		return res, nil
	}
	derr2 := decode(resp.Content)
	if derr2 == nil {
		res.Response = resp
		return res, nil
	}
	return res, fmt.Errorf("%w: %s: first answer: %v; repair answer: %w", ErrStructuredOutputInvalid, formatName(req), derr, derr2)
}

// formatName names the requested structured output for error messages.
func formatName(req *Request) string {
	if req.Format != nil && req.Format.Name != "" {
		return req.Format.Name
	}
	return "structured output"
}

// callsTools reports whether resp asks for tool calls that req allows.
func callsTools(req *Request, resp *Response) bool {
	return len(resp.ToolCalls) > 0 && len(req.Tools) > 0 && req.ToolChoice != ToolChoiceNone
}
