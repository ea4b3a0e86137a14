package pipeline

import (
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/taint"
)

// Inbound is the user message a turn processes.
type Inbound struct {
	MessageID     string
	Channel       string
	SenderID      string
	Text          string
	Authenticated bool // the sender is a known channel identity (owner token)
	Signature     []byte
	Nonce         string
	Timestamp     string
	ReceivedAt    time.Time
}

// AuditRecord is an audit event a stage asks to record.
type AuditRecord struct {
	Event string
	Data  map[string]any
}

// Usage is what the turn's model calls consumed.
type Usage struct {
	Calls            int
	PromptTokens     int
	CompletionTokens int
	CostUSD          float64
	// Models are the "<provider>:<model id>" that answered, each once, in
	// the order they first answered: with a fallback chain, not always
	// the first one configured.
	Models []string
	// Fallbacks are the chain entries that did not answer a call before
	// another entry did (a provider down, timing out, or its circuit open).
	Fallbacks []llm.Fallback
}

// Turn is the state of one turn as it moves through the stages.
type Turn struct {
	ID     string
	Scope  string
	Number int
	In     Inbound
	Now    time.Time

	Taint          messages.TaintLevel
	KeyID          string
	classification taint.Result
	// seen is the weakest taint of what the turn's model calls were shown
	// (see DerivedTaint); empty before the first call.
	seen messages.TaintLevel

	Route    *messages.RouteDecision
	Response *messages.AgentResponse
	// Failure is set when a model call the answer depended on failed: the
	// answer then apologises, and carries this.
	Failure  *messages.TurnError
	Agent    string // "proxy" or "planner": who wrote Response
	Register messages.InteractionRegister
	Mode     messages.InteractionMode
	Profile  string

	// Writes the turn commits atomically before it answers.
	Chronicle []messages.ContextItem
	Memories  []messages.MemoryItem

	// Gates is the turn's frozen active gate set (step 0) and GateBudget
	// what is left of limits.max_gate_evals_per_turn.
	Gates      *gates.ActiveSet
	GateBudget gates.EvalBudget
	// Blocked is set when a gate stopped the turn; Response then holds the
	// escalation's answer.
	Blocked bool
	// Quality holds advisory checks for the scope to run off the turn's
	// path; the scope empties it after every step.
	Quality []gates.Check
	// gate is the state of the gate stage in progress (approvals asked,
	// rephrase attempts, memory ops being gated).
	gate gateFlow
	// tools is the proxy's tool loop in progress (step 7).
	tools toolLoop
	// planner is the planner's tool loop and research in progress (step
	// 7, route "planner").
	planner planLoop

	// InputGateResults are the step-1 policy results of a turn that went
	// on; Access is the access view of step 6. Step 14 reads both.
	InputGateResults []messages.GateResult
	Access           AccessView

	// Plan is the work item parsed from the planner's plan_action (step
	// 12), nil when the turn proposed none.
	Plan *messages.WorkItem

	Answer *messages.AnswerEvent
	Audit  []AuditRecord
	Usage  Usage

	// Done is set once the last stage ran.
	Done bool

	cursor int
}

// Stage returns the name of the stage the turn is at, for logs and metrics.
func (t *Turn) Stage() string {
	if t.cursor >= len(stages) {
		return "done"
	}
	return stages[t.cursor].Name
}

func (t *Turn) audit(event string, data map[string]any) {
	t.Audit = append(t.Audit, AuditRecord{Event: event, Data: data})
}
