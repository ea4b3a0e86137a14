package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/pipeline"
)

// agentCall asks an agent loop for one structured model answer.
// Sender: its Scope. Receiver: the scope's AgentLoop of that role. The reply
// is a *stepDone sent to the scope, tagged with turnID.
type agentCall struct {
	turnID string
	call   *pipeline.ModelCall
	// stream asks for the answer's text as it is written, as streamDelta
	// messages to the scope before the stepDone (scope_stream.go).
	stream bool
}

// AgentLoop is the proxy or planner of one scope (spec 19.3, 19.4). It owns
// the model calls of its role: each runs off the mailbox, with the one repair
// retry of spec 5.1.0, and its result goes back to the scope. A call that
// offers tools (the proxy's tool loop) is one round: tool calls come back
// undecoded, the turn runs them and sends the next round.
//
// Supervision: it holds no state worth keeping; a restart loses nothing.
type AgentLoop struct {
	d     *shared
	scope string
	role  llm.Role
}

func newAgentLoop(d *shared, scope string, role llm.Role) *AgentLoop {
	return &AgentLoop{d: d, scope: scope, role: role}
}

// Receive handles agentCall.
func (a *AgentLoop) Receive(c actor.Context) {
	if m, ok := c.Message().(*agentCall); ok {
		a.onCall(c, m)
	}
}

func (a *AgentLoop) onCall(c actor.Context, m *agentCall) {
	parent, root := c.Parent(), a.d.sys.Root
	reply := func(r pipeline.Result) { root.Send(parent, &stepDone{turnID: m.turnID, result: r}) }
	var relay *streamRelay
	if m.stream {
		relay = newStreamRelay(m.call.Schema, time.Now, forward(root, parent, m.turnID))
	}
	started := a.d.tasks.Go("model call "+string(a.role), func(ctx context.Context) {
		timeout := a.callTimeout()
		if m.call.Timeout > 0 {
			timeout = m.call.Timeout
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		start := time.Now()
		r := a.run(ctx, m.call, relay)
		a.d.metrics.ModelCallSeconds.Observe(time.Since(start).Seconds())
		relay.flush() // the last piece goes out before the result
		reply(r)
	}, func(err error) { reply(pipeline.Result{Err: err}) })
	if !started {
		reply(pipeline.Result{Err: errShuttingDown})
	}
}

// callTimeout bounds one structured call: two attempts, each with the
// client's own retries.
func (a *AgentLoop) callTimeout() time.Duration {
	l := a.d.Config.LLM
	return 2 * time.Duration(l.TimeoutSeconds*(l.MaxRetries+1)) * time.Second
}

// run makes the call; a non-nil relay receives the answer as it streams.
func (a *AgentLoop) run(ctx context.Context, call *pipeline.ModelCall, relay *streamRelay) pipeline.Result {
	msgs := make([]llm.Message, 0, 2+len(call.Transcript))
	msgs = append(msgs, llm.Message{Role: "system", Content: call.System}, llm.Message{Role: "user", Content: call.Prompt, Quoted: call.PromptQuoted})
	req := &llm.Request{
		// The transcript is the proxy's tool loop so far (runtime/pipeline
		// stage_route_tools.go): the loop is turn data, so each round is
		// one call here, and the tools run as requests the scope performs.
		Messages:   append(msgs, call.Transcript...),
		Tools:      call.Tools,
		ToolChoice: call.ToolChoice,
		Format:     a.d.formats[call.Schema],
	}
	if relay != nil {
		req.Stream = relay.on
	}
	var value any
	res, err := llm.RunStructured(ctx, a.d.Models.Completer(a.role), req, func(content string) error {
		v, err := call.Decode(content)
		if err == nil {
			value = v
		}
		return err
	})
	var usage pipeline.Usage
	if res != nil {
		usage = pipeline.Usage{Calls: res.Calls, PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens, CostUSD: res.Usage.CostUSD,
			Models: res.Models, Fallbacks: res.Fallbacks}
	}
	if errors.Is(err, llm.ErrStructuredOutputInvalid) {
		err = fmt.Errorf("%w: %w", pipeline.ErrInvalidOutput, err)
	}
	mr := pipeline.ModelResult{Value: value, Usage: usage}
	if err == nil && value == nil && res.Response != nil && len(res.Response.ToolCalls) > 0 {
		// The model asked for tools it was offered (llm.RunStructured
		// returns such an answer undecoded): the turn runs them.
		mr.ToolCalls, mr.Content = res.Response.ToolCalls, res.Response.Content
	}
	return pipeline.Result{Value: mr, Err: err}
}
