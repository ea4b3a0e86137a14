package pipeline

import (
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
)

// Result is the outcome of an awaited request, handed back through Resume.
type Result struct {
	Value any
	Err   error
}

// ConsumeNonce asks the actor to record a message nonce as used.
// The result Value is a bool: true when the nonce was fresh.
type ConsumeNonce struct {
	Nonce string
}

// Agent roles that a ModelCall addresses.
const (
	AgentProxy   = "proxy"
	AgentPlanner = "planner"
)

// ModelCall asks the agent loop of Role for one structured answer.
// Decode parses and validates the model's content; the loop retries once with
// the validation error (spec 5.1.0). The result Value is what Decode returned
// and Usage what the calls consumed; Err wraps llm.ErrStructuredOutputInvalid
// when both attempts were invalid.
type ModelCall struct {
	Role   string
	Schema string
	System string
	Prompt string
	// PromptQuoted, when set, is the prompt encoded as a JSON string, in
	// pieces, kept encoded by the window between turns (contextmgr
	// RenderEncoded), and Prompt is empty: the agent loop hands the pieces
	// to the model client so that a long context is neither joined nor
	// encoded again on every call. PromptText decodes them.
	PromptQuoted []string
	// PromptBytes is the length of the text PromptQuoted encodes.
	PromptBytes int
	// PromptStable is how many leading bytes of the prompt repeat the
	// window's previous render (contextmgr RenderStats), for the
	// prompt-cache metrics.
	PromptStable int
	Decode       func(content string) (any, error)
	// Tools are offered to the model (the proxy's tool loop, spec 19.3);
	// an answer that calls them comes back as ModelResult.ToolCalls,
	// undecoded. Transcript is the loop so far, sent after the prompt: the
	// assistant's tool calls and the tool results. ToolChoice is
	// llm.ToolChoiceNone for the loop's forced final answer.
	Tools      []llm.Tool
	Transcript []llm.Message
	ToolChoice string
	// Timeout bounds the whole call when set (the scorer's 2 s); zero
	// means the role's usual bound.
	Timeout time.Duration
}

// ModelResult is the Value of a successful ModelCall.
type ModelResult struct {
	Value any
	Usage Usage
	// ToolCalls are the calls the model asked for instead of answering
	// (only when the call offered Tools); Value is then nil and Content
	// is whatever text came with the calls.
	ToolCalls []llm.ToolCall
	Content   string
}

// QueryMemory asks for the memory queries of an agent response to run in
// the turn's scope. The result Value is []messages.MemoryItem, ranked.
type QueryMemory struct {
	Queries []messages.MemoryQuery
}

// ApplyMemoryOps asks for memory operations to run in the turn's scope with
// Taint, the turn's DerivedTaint: the weakest of the message and of what the
// model saw. The result Value is an int: how many ops were applied.
type ApplyMemoryOps struct {
	Ops   []messages.MemoryOp
	Taint messages.TaintLevel
}

// Commit asks for the turn's writes (chronicle, memories, answer, processed
// marker) to be made durable in one atomic write before the answer is sent.
type Commit struct{}

// ApprovalRequest asks the owner to approve the parsed plan Work (spec 5.1.2).
// The result Value is an ApprovalOutcome.
type ApprovalRequest struct {
	Work *messages.WorkItem
}

// ApprovalOutcome is the result of an ApprovalRequest.
type ApprovalOutcome struct {
	// Approved is true when the owner approved and a verified token was
	// attached; the work item then runs in the background.
	Approved bool
	// Reason says why the plan did not run: "declined", "timeout",
	// "no_owner_connection", "unavailable" or an error text.
	Reason string
	// Scheduled is the schedule of an approved goal: it runs on it, with
	// its standing approval, instead of running once.
	Scheduled string
}
