package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// This file holds the OpenAI chat-completions wire format.

type wireRequest struct {
	Model          string              `json:"model"`
	Messages       []wireMessage       `json:"messages"`
	Tools          []wireTool          `json:"tools,omitempty"`
	ToolChoice     string              `json:"tool_choice,omitempty"`
	ResponseFormat *wireResponseFormat `json:"response_format,omitempty"`
	MaxTokens      int                 `json:"max_tokens,omitempty"`
	Temperature    *float64            `json:"temperature,omitempty"`
	Stream         bool                `json:"stream,omitempty"`
	StreamOptions  *wireStreamOptions  `json:"stream_options,omitempty"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is null for an assistant message that only calls tools.
	Content    *string        `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string          `json:"type"`
	Function wireFunctionDef `json:"function"`
}

type wireFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type wireResponseFormat struct {
	Type       string         `json:"type"`
	JSONSchema wireJSONSchema `json:"json_schema"`
}

type wireJSONSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

type wireResponse struct {
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Error   *wireError   `json:"error"`
}

type wireChoice struct {
	Message      wireMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type wireUsage struct {
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	TotalTokens      int      `json:"total_tokens"`
	Cost             *float64 `json:"cost"`
}

// wireError is the OpenAI error object. OpenRouter may send it with HTTP 200
// when an upstream fails after the response started.
type wireError struct {
	Message string          `json:"message"`
	Code    json.RawMessage `json:"code"`
}

// encodeBody renders req as an OpenAI chat-completions body.
func encodeBody(req *Request) (requestBody, error) {
	w := wireRequest{
		Model:       req.Model,
		Messages:    make([]wireMessage, len(req.Messages)),
		MaxTokens:   req.MaxTokens,
		Temperature: req.Temperature,
	}
	if req.Stream != nil {
		w.Stream, w.StreamOptions = true, &wireStreamOptions{IncludeUsage: true}
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		wm := wireMessage{Role: m.Role, ToolCallID: m.ToolCallID, Name: m.Name}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			wm.Content = &m.Content
		}
		if len(m.ToolCalls) > 0 {
			wm.ToolCalls = make([]wireToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				wm.ToolCalls[j] = wireToolCall{ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments}}
			}
		}
		w.Messages[i] = wm
	}
	if len(req.Tools) > 0 {
		w.Tools = make([]wireTool, len(req.Tools))
		for i, t := range req.Tools {
			w.Tools[i] = wireTool{Type: "function", Function: wireFunctionDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}}
		}
		w.ToolChoice = req.ToolChoice
	}
	if req.Format != nil && req.Format.wire == nil {
		w.ResponseFormat = formatWire(req.Format)
	}
	var tail []string
	if req.Format != nil && req.Format.wire != nil {
		// The pre-encoded response_format goes in before the closing brace.
		tail = []string{`,"response_format":`, string(req.Format.wire)}
	}
	b, err := marshalRequest(&w, req.Messages, tail)
	if err != nil {
		return requestBody{}, fmt.Errorf("encode chat completion request: %w", err)
	}
	return b, nil
}

// marshalRequest encodes w, then tail before its closing brace. The
// contents of messages that arrive encoded (Message.Quoted) are not encoded
// again, nor copied: the body holds them as they are, between the pieces of
// the rest of the encoding, so a long prompt costs no allocation per call.
func marshalRequest(w *wireRequest, msgs []Message, tail []string) (requestBody, error) {
	quoted := false
	for i := range msgs {
		quoted = quoted || msgs[i].Quoted != nil
	}
	if !quoted && tail == nil {
		b, err := json.Marshal(w)
		return requestBody{raw: b, size: len(b)}, err
	}
	// Encode with an empty content in place of each quoted one, then
	// replace each "content":"" of those messages, in order.
	empty := ""
	for i := range msgs {
		if msgs[i].Quoted != nil {
			w.Messages[i].Content = &empty
		}
	}
	raw, err := json.Marshal(w)
	if err != nil {
		return requestBody{}, err
	}
	b := string(raw)
	var body requestBody
	// Message starts are the only {"role": of the encoding before the
	// tools and the response format (inside strings a quote is escaped).
	copied, from := 0, 0
	for i := range msgs {
		at := strings.Index(b[from:], `{"role":`)
		if at < 0 {
			return requestBody{}, fmt.Errorf("message %d not found in the encoded request", i)
		}
		at += from
		from = at + len(`{"role":`)
		if msgs[i].Quoted == nil {
			continue
		}
		c := strings.Index(b[at:], `,"content":""`)
		if c < 0 {
			return requestBody{}, fmt.Errorf("content of message %d not found in the encoded request", i)
		}
		c += at + len(`,"content":`)
		body.add(b[copied:c])
		for _, q := range msgs[i].Quoted {
			body.add(q)
		}
		copied = c + len(`""`)
		from = copied
	}
	body.add(b[copied : len(b)-1])
	for _, t := range tail {
		body.add(t)
	}
	body.add("}")
	return body, nil
}

func formatWire(f *ResponseFormat) *wireResponseFormat {
	return &wireResponseFormat{
		Type:       "json_schema",
		JSONSchema: wireJSONSchema{Name: f.Name, Strict: true, Schema: f.Schema},
	}
}

// decodeResponse parses a 2xx chat-completions body. An embedded error
// object becomes an *APIError.
func decodeResponse(body []byte) (*Response, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidResponse, err)
	}
	if w.Error != nil && len(w.Choices) == 0 {
		return nil, embeddedError(w.Error)
	}
	if len(w.Choices) == 0 {
		return nil, fmt.Errorf("%w: no choices", ErrInvalidResponse)
	}
	c := &w.Choices[0]
	resp := &Response{Model: w.Model, FinishReason: c.FinishReason}
	if c.Message.Content != nil {
		resp.Content = *c.Message.Content
	}
	if len(c.Message.ToolCalls) > 0 {
		resp.ToolCalls = make([]ToolCall, len(c.Message.ToolCalls))
		for i, tc := range c.Message.ToolCalls {
			resp.ToolCalls[i] = ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		}
	}
	resp.setUsage(w.Usage)
	return resp, nil
}

// embeddedError turns an error object sent with HTTP 200 into an
// *APIError, its status taken from the object's code when that is one.
func embeddedError(e *wireError) *APIError {
	status := 502
	var code int
	if json.Unmarshal(e.Code, &code) == nil && code >= 400 && code < 600 {
		status = code
	}
	return &APIError{Status: status, Body: truncate(e.Message, maxErrorBody), Retryable: retryableStatus(status)}
}

// setUsage records a reported usage; nil leaves resp's usage as it is.
func (resp *Response) setUsage(u *wireUsage) {
	if u == nil {
		return
	}
	resp.Usage = Usage{
		PromptTokens:     u.PromptTokens,
		CompletionTokens: u.CompletionTokens,
		TotalTokens:      u.TotalTokens,
	}
	resp.CostReported = false
	if u.Cost != nil {
		resp.Usage.CostUSD, resp.CostReported = *u.Cost, true
	}
	if resp.Usage.TotalTokens == 0 {
		resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	}
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i]
}
