package actors

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
)

// decodeExecutorOutput checks the executor's final answer against
// ExecutorAgentOutput; its error is what the repair message tells the model.
func decodeExecutorOutput(content string) error {
	var o messages.ExecutorAgentOutput
	if err := json.Unmarshal([]byte(content), &o); err != nil {
		return fmt.Errorf("the answer is not an ExecutorAgentOutput JSON object: %w", err)
	}
	if err := o.Validate(); err != nil {
		return fmt.Errorf("ExecutorAgentOutput: %w", err)
	}
	return nil
}

// spend charges what the model calls of run consumed to the attempt, audits
// the fallbacks that answered in another model's place, and has the
// WorkItem journal the spend, so that a crash does not forget it.
func (a *Attempt) spend(c actor.Context, run *llm.Result) {
	a.out.used.Tokens += run.Usage.PromptTokens + run.Usage.CompletionTokens
	a.out.used.CostUSD += run.Usage.CostUSD
	for _, f := range run.Fallbacks {
		a.audit("model_fallback", map[string]any{"attempt": a.spec.n, "role": string(f.Role), "model": f.Ref, "kind": string(f.Kind), "error": f.Reason, "answered_by": f.To})
	}
	spend := a.out.used
	spend.WallTimeSeconds = time.Since(a.started).Seconds()
	c.Send(c.Parent(), &attemptSpend{attempt: a.spec.n, used: spend})
}
