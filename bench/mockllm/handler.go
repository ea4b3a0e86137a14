package mockllm

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

var bearer = []byte("Bearer ")

// serve routes one HTTP request.
func (s *Server) serve(ctx *fasthttp.RequestCtx) {
	path := string(ctx.Path())
	switch path {
	case "/v1/chat/completions", "/v1/models", "/v1/embeddings":
	default:
		writeError(ctx, fasthttp.StatusNotFound, "invalid_request_error", "unknown_url", "unknown path "+path)
		return
	}
	if auth := ctx.Request.Header.Peek("Authorization"); !bytes.HasPrefix(auth, bearer) || len(bytes.TrimSpace(auth[len(bearer):])) == 0 {
		s.rec.unauthorized.Add(1)
		writeError(ctx, fasthttp.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
			"You didn't provide an API key. Provide it in the Authorization header as 'Bearer YOUR_KEY'.")
		return
	}
	switch {
	case path == "/v1/models" && ctx.IsGet():
		ctx.SetContentType("application/json")
		ctx.SetBody(s.models)
	case path == "/v1/chat/completions" && ctx.IsPost():
		s.chat(ctx)
	case path == "/v1/embeddings" && ctx.IsPost():
		s.embeddings(ctx)
	default:
		writeError(ctx, fasthttp.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", "method "+string(ctx.Method())+" not allowed on "+path)
	}
}

// chat answers POST /v1/chat/completions.
func (s *Server) chat(ctx *fasthttp.RequestCtx) {
	defer s.rec.enter()()
	var req chatRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		s.rec.badReqs.Add(1)
		writeError(ctx, fasthttp.StatusBadRequest, "invalid_request_error", "invalid_json", "request body is not valid JSON: "+err.Error())
		return
	}
	r := record(&req)
	s.rec.add(r)
	if !s.wait() {
		writeError(ctx, fasthttp.StatusServiceUnavailable, "server_error", "shutting_down", "mock server is shutting down")
		return
	}

	reply, ok := Reply{}, false
	if fn := s.hook.Load(); fn != nil {
		reply, ok = (*fn)(r)
		if ok {
			s.rec.scripted.Add(1)
		}
	}
	if !ok {
		reply = s.inject(r)
	}
	if reply.Status >= 400 {
		if reply.RetryAfter > 0 {
			ctx.Response.Header.Set("Retry-After", retryAfterSeconds(reply.RetryAfter))
		}
		typ, code := "server_error", "server_error"
		switch {
		case reply.Status == fasthttp.StatusTooManyRequests:
			typ, code = "rate_limit_error", "rate_limit_exceeded"
		case reply.Status < 500:
			typ, code = "invalid_request_error", strconv.Itoa(reply.Status)
		}
		writeError(ctx, reply.Status, typ, code, reply.Content)
		return
	}
	if reply.FinishReason == "" {
		reply.FinishReason = "stop"
		if len(reply.ToolCalls) > 0 {
			reply.FinishReason = "tool_calls"
		}
	}
	if req.Stream {
		s.stream(ctx, &req, r, &reply)
		return
	}
	status := reply.Status
	if status == 0 {
		status = fasthttp.StatusOK
	}
	msg := &outMessage{Role: "assistant", ToolCalls: wireCalls(reply.ToolCalls, false)}
	if reply.Content != "" || len(reply.ToolCalls) == 0 {
		msg.Content = &reply.Content
	}
	body, err := json.Marshal(&completion{
		ID:      "chatcmpl-mock-" + strconv.FormatInt(r.Seq, 10),
		Object:  "chat.completion",
		Created: r.Time.Unix(),
		Model:   req.Model,
		Choices: []choice{{Message: msg, FinishReason: &reply.FinishReason}},
		Usage:   usageFor(r, &reply),
	})
	if err != nil {
		writeError(ctx, fasthttp.StatusInternalServerError, "server_error", "encode", err.Error())
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

// inject picks the unscripted answer: a rate limit, an error, malformed
// output, or the default.
func (s *Server) inject(r *RecordedRequest) Reply {
	switch {
	case s.roll(s.opts.RateLimitRate):
		s.rec.rateLimited.Add(1)
		return Reply{Status: fasthttp.StatusTooManyRequests, RetryAfter: s.opts.RetryAfter, Content: "Rate limit reached (injected by mockllm)"}
	case s.roll(s.opts.ErrorRate):
		s.rec.errors.Add(1)
		return Reply{Status: fasthttp.StatusInternalServerError, Content: "The server had an error while processing your request (injected by mockllm)"}
	case r.Schema != "" && s.roll(s.opts.MalformedRate):
		s.rec.malformed.Add(1)
		return Reply{Content: MalformedContent}
	}
	return Reply{Content: defaultContent(r)}
}

// record converts the wire request into its record.
func record(req *chatRequest) *RecordedRequest {
	r := &RecordedRequest{Model: req.Model, Stream: req.Stream, Time: time.Now()}
	if f := req.ResponseFormat; f != nil && f.JSONSchema != nil {
		r.Schema = f.JSONSchema.Name
	}
	r.Messages = make([]RecordedMessage, len(req.Messages))
	for i, m := range req.Messages {
		rm := RecordedMessage{Role: m.Role, Content: string(m.Content), ToolCallID: m.ToolCallID}
		if len(m.ToolCalls) > 0 {
			rm.ToolCalls = make([]ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				rm.ToolCalls[j] = ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
			}
		}
		r.Messages[i] = rm
	}
	if len(req.Tools) > 0 {
		r.Tools = make([]string, len(req.Tools))
		for i, t := range req.Tools {
			r.Tools[i] = t.Function.Name
		}
	}
	return r
}

// usageFor estimates the usage of answering r with reply.
func usageFor(r *RecordedRequest, reply *Reply) *usage {
	in := 0
	for _, m := range r.Messages {
		in += len(m.Content)
	}
	out := len(reply.Content)
	for _, tc := range reply.ToolCalls {
		out += len(tc.Name) + len(tc.Arguments)
	}
	u := &usage{PromptTokens: tokens(in), CompletionTokens: tokens(out)}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	u.Cost = float64(u.PromptTokens)*1e-7 + float64(u.CompletionTokens)*4e-7
	return u
}

// writeError answers an OpenAI error object.
func writeError(ctx *fasthttp.RequestCtx, status int, typ, code, msg string) {
	body, _ := json.Marshal(&apiError{Error: apiErrorBody{Message: msg, Type: typ, Code: &code}}) // strings always marshal
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}
