package llm

import (
	"context"
	"encoding/json"
)

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message.
type Message struct {
	// Role is system, user, assistant or tool.
	Role string
	// Content is the text of the message.
	Content string
	// Quoted, when set, is Content already encoded as a JSON string,
	// quotes included, as encoding/json would encode it, in pieces sent
	// one after the other. A caller whose prompt grows by appending keeps
	// it encoded between calls (the context window does), and the client
	// sends it as it is instead of encoding Content again. Content may
	// then be empty: Text decodes Quoted.
	Quoted []string
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string
	// Name is the optional participant or tool name.
	Name string
}

// Tool is a function the model may call.
type Tool struct {
	// Name is the function name, e.g. "shell_exec".
	Name string
	// Description tells the model what the tool does.
	Description string
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage
}

// ToolCall is one function call requested by the model.
type ToolCall struct {
	// ID identifies the call; the tool message answering it repeats it.
	ID string
	// Name is the function name.
	Name string
	// Arguments is the JSON arguments object as the model wrote it.
	Arguments string
}

// ToolChoiceNone is the [Request.ToolChoice] that forbids tool calls.
const ToolChoiceNone = "none"

// ResponseFormat asks for structured output matching a JSON Schema. It is
// always sent with strict mode on.
type ResponseFormat struct {
	// Name is the schema's name: RouteDecision, AgentResponse,
	// ExecutorAgentOutput or ScorerOutput.
	Name string
	// Schema is the JSON Schema.
	Schema json.RawMessage

	// wire is the encoded response_format object, computed once by Format:
	// encoding/json re-validates a raw schema on every request, which cost
	// more than the rest of the request body together.
	wire []byte
}

// Request is one chat completion request.
type Request struct {
	// Model is the provider's model id, e.g. "anthropic/claude-sonnet-4".
	// A [Router] fills it from the role.
	Model string
	// Messages is the conversation, oldest first.
	Messages []Message
	// Tools are the functions the model may call.
	Tools []Tool
	// ToolChoice is sent as tool_choice with Tools: "" leaves the choice
	// to the model, ToolChoiceNone asks for an answer without calls (a
	// tool loop's forced final answer, whose history holds tool calls and
	// so must still declare the tools).
	ToolChoice string
	// Format requests structured output; nil means free text.
	Format *ResponseFormat
	// MaxTokens caps the completion; 0 leaves it to the provider.
	MaxTokens int
	// Temperature is the sampling temperature; nil leaves it to the provider.
	Temperature *float64
	// Stream, when set, asks for the answer as server-sent events
	// ("stream": true, with usage) and is called with each piece as it
	// arrives, on the calling goroutine; Complete still returns the whole
	// Response at the end. nil sends the request unstreamed. See [Delta]
	// for what a consumer must do when a retry, a fallback or a repair
	// call starts the answer again.
	Stream func(Delta)
}

// Usage is what a call consumed.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	// CostUSD is the provider-reported cost (OpenRouter's usage.cost); 0
	// when the provider does not report one.
	CostUSD float64
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
		CostUSD:          u.CostUSD + o.CostUSD,
	}
}

// Response is the first choice of a chat completion.
type Response struct {
	// Content is the assistant's text (the JSON document for structured
	// output).
	Content string
	// ToolCalls are the function calls the model asked for.
	ToolCalls []ToolCall
	// Usage is what the call consumed.
	Usage Usage
	// Model is the model that answered, as the provider names it.
	Model string
	// FinishReason is "stop", "length", "tool_calls", ... as reported.
	FinishReason string
	// CostReported is true when the provider stated the call's cost itself
	// (OpenRouter's usage.cost), even as 0. When it did not, a [Router]
	// prices the call from its provider's price table, so that budgets in
	// USD hold on every provider.
	CostReported bool
	// Ref is the "<provider>:<model id>" of the chain entry that answered,
	// as configured in silas.models; a [Router] sets it. The usage and the
	// audit name it.
	Ref string
	// Fallbacks are the chain entries that failed or were skipped before
	// Ref answered, in order; empty when the first entry answered.
	Fallbacks []Fallback
}

// Provider completes chat requests. Implementations are safe for concurrent
// use.
type Provider interface {
	// Complete sends req and returns the first choice. It does not modify
	// req.
	Complete(ctx context.Context, req *Request) (*Response, error)
}
