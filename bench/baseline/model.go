package baseline

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// systemPrompt is the system message of every call: the baseline renders no
// context, persona or memory.
const systemPrompt = "You are a customer support assistant. Answer the customer's message."

// maxModelConns bounds connections to the model: above the bench's largest
// number of turns in flight, so a turn never waits for a connection.
const maxModelConns = 16384

// modelClient makes the one model call of a turn.
type modelClient struct {
	client  *fasthttp.Client
	url     string
	auth    string
	model   string
	timeout time.Duration
}

func newModelClient(o Options) *modelClient {
	return &modelClient{
		client: &fasthttp.Client{
			MaxConnsPerHost: maxModelConns, ReadTimeout: o.ModelTimeout, WriteTimeout: o.ModelTimeout,
			NoDefaultUserAgentHeader: true,
		},
		url:     strings.TrimSuffix(o.ModelURL, "/") + "/chat/completions",
		auth:    "Bearer " + o.APIKey,
		model:   o.Model,
		timeout: o.ModelTimeout,
	}
}

func (m *modelClient) close() { m.client.CloseIdleConnections() }

// The request and response subset of the OpenAI wire format.
type (
	chatRequest struct {
		Model          string         `json:"model"`
		Messages       []chatMessage  `json:"messages"`
		ResponseFormat responseFormat `json:"response_format"`
	}
	chatMessage struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	responseFormat struct {
		Type       string     `json:"type"`
		JSONSchema jsonSchema `json:"json_schema"`
	}
	jsonSchema struct {
		Name   string         `json:"name"`
		Strict bool           `json:"strict"`
		Schema map[string]any `json:"schema"`
	}
	completion struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	// routeDecision is the part of the RouteDecision output the baseline
	// reads: the direct answer.
	routeDecision struct {
		Response struct {
			Message string `json:"message"`
		} `json:"response"`
	}
)

// routeDecisionSchema is a stand-in: the mock reads only the schema's name.
var routeDecisionSchema = map[string]any{"type": "object"}

// errEmptyAnswer means the model's output had no response.message.
var errEmptyAnswer = errors.New("the model's RouteDecision has no response.message")

// answer asks the model about text and returns its direct answer.
func (m *modelClient) answer(text string) (string, error) {
	body, err := json.Marshal(&chatRequest{
		Model:          m.model,
		Messages:       []chatMessage{{Role: "system", Content: systemPrompt}, {Role: "user", Content: text}},
		ResponseFormat: responseFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: "RouteDecision", Strict: true, Schema: routeDecisionSchema}},
	})
	if err != nil {
		return "", fmt.Errorf("encode model request: %w", err)
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer func() {
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
	}()
	req.SetRequestURI(m.url)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.Set(fasthttp.HeaderAuthorization, m.auth)
	req.SetBodyRaw(body)
	if err := m.client.DoTimeout(req, resp, m.timeout); err != nil {
		return "", fmt.Errorf("call the model at %s: %w", m.url, err)
	}
	if code := resp.StatusCode(); code != fasthttp.StatusOK {
		return "", fmt.Errorf("the model answered HTTP %d: %.200s", code, resp.Body())
	}
	var c completion
	if err := json.Unmarshal(resp.Body(), &c); err != nil {
		return "", fmt.Errorf("decode the model's completion: %w", err)
	}
	if len(c.Choices) == 0 {
		return "", errors.New("the model's completion has no choices")
	}
	var rd routeDecision
	if err := json.Unmarshal([]byte(c.Choices[0].Message.Content), &rd); err != nil {
		return "", fmt.Errorf("decode the model's RouteDecision: %w", err)
	}
	if rd.Response.Message == "" {
		return "", errEmptyAnswer
	}
	return rd.Response.Message, nil
}
