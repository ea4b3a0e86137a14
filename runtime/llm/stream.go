package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Delta is one piece of a streamed answer ([Request.Stream]).
type Delta struct {
	// Start marks the beginning of an answer: it comes first in every HTTP
	// attempt that streams, with no content. Whatever an earlier attempt
	// of the same call streamed (a retry after a dropped stream, the next
	// entry of a fallback chain, the repair call of [RunStructured]) is
	// void, and a consumer discards it.
	Start bool
	// Content is the next piece of the answer's content, in order.
	Content string
}

// maxStreamLine caps one line of a streamed answer; a chunk is one line.
const maxStreamLine = 1 << 20

// wireStreamOptions asks for a last chunk that carries the usage.
type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// wireChunk is one chat.completion.chunk of a streamed answer.
type wireChunk struct {
	Model   string            `json:"model"`
	Choices []wireChunkChoice `json:"choices"`
	Usage   *wireUsage        `json:"usage"`
	Error   *wireError        `json:"error"`
}

type wireChunkChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type wireDelta struct {
	Content   *string             `json:"content"`
	ToolCalls []wireToolCallDelta `json:"tool_calls"`
}

// wireToolCallDelta is a piece of a tool call: the first piece of a call
// carries its id and name, later ones more of its arguments.
type wireToolCallDelta struct {
	Index    *int         `json:"index"`
	ID       string       `json:"id"`
	Function wireFunction `json:"function"`
}

// streamAcc accumulates the chunks of one streamed answer.
type streamAcc struct {
	resp    Response
	content strings.Builder
	calls   []ToolCall
	args    []strings.Builder
}

// readStream reads a 2xx answer to a streamed request: server-sent events
// whose data are chat.completion.chunk objects, ended by "data: [DONE]".
// Each piece of content goes to onDelta as it is read, after a Delta with
// Start. A server that ignored "stream" and answered one JSON document is
// accepted: its content arrives as a single piece. A stream that ends
// before [DONE] is an [ErrStreamInterrupted] transport error (retried); an
// error object inside the stream is an *APIError.
func readStream(hres *http.Response, onDelta func(Delta)) (*Response, error) {
	body := io.LimitReader(hres.Body, maxResponseBody+1)
	if mt, _, _ := mime.ParseMediaType(hres.Header.Get("Content-Type")); mt != "text/event-stream" {
		data, err := io.ReadAll(body)
		if err != nil {
			return nil, &transportError{err: fmt.Errorf("read response: %w", err)}
		}
		if len(data) > maxResponseBody {
			return nil, fmt.Errorf("%w: body larger than %d bytes", ErrInvalidResponse, maxResponseBody)
		}
		resp, err := decodeResponse(data)
		if err != nil {
			return nil, err
		}
		onDelta(Delta{Start: true})
		if resp.Content != "" {
			onDelta(Delta{Content: resp.Content})
		}
		return resp, nil
	}
	onDelta(Delta{Start: true})
	acc := &streamAcc{}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4096), maxStreamLine)
	var data []byte // the data of the event being read
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 { // an event ends at a blank line
			if len(data) == 0 {
				continue
			}
			done, err := acc.event(data, onDelta)
			if err != nil || done {
				return acc.finish(err)
			}
			data = data[:0]
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" { // comments (": keep-alive"), event, id, retry
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if len(data) > 0 {
			data = append(data, '\n')
		}
		data = append(data, value...)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%w: a streamed chunk is larger than %d bytes", ErrInvalidResponse, maxStreamLine)
	} else if err != nil {
		return nil, &transportError{err: fmt.Errorf("read streamed answer: %w", err)}
	}
	if len(data) > 0 && bytes.Equal(data, []byte("[DONE]")) {
		// The last event's blank line is missing; [DONE] still ends it.
		return acc.finish(nil)
	}
	return nil, &transportError{err: ErrStreamInterrupted}
}

// event handles one event's data; done is true at [DONE].
func (a *streamAcc) event(data []byte, onDelta func(Delta)) (done bool, err error) {
	if bytes.Equal(data, []byte("[DONE]")) {
		return true, nil
	}
	var ch wireChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return false, fmt.Errorf("%w: streamed chunk: %v", ErrInvalidResponse, err)
	}
	if ch.Error != nil {
		return false, embeddedError(ch.Error)
	}
	if ch.Model != "" {
		a.resp.Model = ch.Model
	}
	a.resp.setUsage(ch.Usage)
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if c.Index != 0 {
			continue // only the first choice is asked for and kept
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			a.resp.FinishReason = *c.FinishReason
		}
		if c.Delta.Content != nil && *c.Delta.Content != "" {
			a.content.WriteString(*c.Delta.Content)
			onDelta(Delta{Content: *c.Delta.Content})
		}
		for _, tc := range c.Delta.ToolCalls {
			if err := a.toolCall(tc); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

// toolCall adds a piece of a tool call. A piece without an index belongs
// to a new call when it has an id, else to the last one.
func (a *streamAcc) toolCall(tc wireToolCallDelta) error {
	i := len(a.calls) - 1
	switch {
	case tc.Index != nil:
		i = *tc.Index
	case tc.ID != "" || i < 0:
		i = len(a.calls)
	}
	if i < 0 || i > len(a.calls) || i >= 128 {
		return fmt.Errorf("%w: streamed tool call index %d out of order", ErrInvalidResponse, i)
	}
	if i == len(a.calls) {
		a.calls = append(a.calls, ToolCall{})
		a.args = append(a.args, strings.Builder{})
	}
	if tc.ID != "" {
		a.calls[i].ID = tc.ID
	}
	if tc.Function.Name != "" {
		a.calls[i].Name = tc.Function.Name
	}
	a.args[i].WriteString(tc.Function.Arguments)
	return nil
}

// finish returns the accumulated answer, or err.
func (a *streamAcc) finish(err error) (*Response, error) {
	if err != nil {
		return nil, err
	}
	resp := a.resp
	resp.Content = a.content.String()
	for i := range a.calls {
		a.calls[i].Arguments = a.args[i].String()
	}
	resp.ToolCalls = a.calls
	return &resp, nil
}
