package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/gates"
)

// RunPolicyGates asks the scope's policy lane to evaluate a gate check. The
// result Value is a gates.PolicyDecision.
type RunPolicyGates struct {
	Check gates.Check
}

// GateApprovalRequest asks the owner to approve what a policy gate holds
// (require_approval, spec 5.1 steps 1, 8 and 10): the caller sends a
// gate_approval event (spec 8.1) to the owner's connections and waits for
// the gate_response. The result Value is a GateApprovalOutcome; a missing
// owner, a timeout or shutdown are outcomes, never a wait.
type GateApprovalRequest struct {
	// Gate is the gate's name and Reason why it asks.
	Gate   string
	Reason string
	// Trigger is what the gate checked.
	Trigger messages.GateTrigger
	// Value is the value the gate checked (GateResult.value).
	Value any
	// Context is the evaluation context the owner decides on.
	Context map[string]any
}

// GateApprovalOutcome is the result of a GateApprovalRequest.
type GateApprovalOutcome struct {
	// Approved is true only when the owner answered approved.
	Approved bool
	// Reason says why it was not approved: "declined", "timeout",
	// "no_owner_connection", "owner_busy", "shutdown".
	Reason string
}

// Answers of the gate stages, shown to the user.
const (
	// BlockedText answers a message or a response that a gate blocked
	// when its escalation sends no message of its own (report, ...).
	BlockedText = "I can't help with that: a safety rule blocked it, and the owner was notified."
	// gateNotApprovedText answers a message whose gate approval was not
	// given; see [GateNotApprovedAnswer].
	gateNotApprovedText = "That needs the owner's approval, and %s, so I did not go on."
)

// GateNotApprovedAnswer is the answer to a message whose gate approval was
// not given, for reason (a GateApprovalOutcome reason).
func GateNotApprovedAnswer(reason string) string {
	why := "the approval could not be obtained (" + reason + "). Try again later"
	switch reason {
	case "declined":
		why = "the owner declined it"
	case "timeout":
		why = "no answer came in time. Send it again to ask once more"
	case "no_owner_connection":
		why = "the owner was not connected to answer. Send it again once the owner is online"
	case "owner_busy":
		why = "too many approvals are waiting for the owner. Try again later"
	case "shutdown":
		why = "Silas shut down while waiting for it. Send it again once it is back"
	}
	return fmt.Sprintf(gateNotApprovedText, why)
}

// rephraseMarker opens the instruction appended to the agent's prompt when
// a gate suppressed its answer (suppress_and_rephrase).
const rephraseMarker = "[GATE FEEDBACK]"

// gatePhase is what the current gate stage awaits.
type gatePhase int

const (
	phaseCheck         gatePhase = iota // a policy decision
	phaseApproval                       // the owner's gate approval
	phaseRephrase                       // the agent's rephrased answer
	phaseMemOp                          // a memory op's policy decision
	phaseMemOpApproval                  // the owner's approval of a memory op
)

// gateFlow is the state of the gate stage in progress (steps 1 and 8,
// whose tail gates step 10's memory ops). A stage starts it afresh.
type gateFlow struct {
	phase   gatePhase
	trigger messages.GateTrigger
	// decision is the policy decision whose approvals are being asked;
	// approval indexes decision.Approvals.
	decision gates.PolicyDecision
	approval int
	// attempts are the re-runs made by the retrying escalation
	// (suppress_and_rephrase, retry) of this stage.
	attempts int
	// rephrase is the escalation whose re-run is awaited, with the gate
	// and reason that caused it.
	rephrase *gates.Plan
	gate     string
	reason   string
	// ops are the memory ops being gated, op the index of the one
	// awaited and kept those allowed so far.
	ops  []messages.MemoryOp
	op   int
	kept []messages.MemoryOp
}

// runCompileGates freezes the turn's active gate set once (spec 5.1 step 0):
// the system gates, then the active work item's.
func runCompileGates(t *Turn, e *Env) Effect {
	t.GateBudget = gates.NewEvalBudget(e.MaxGateEvals)
	set, err := gates.Compile(e.SystemGates, e.WorkGates)
	if err != nil {
		// A gate set that does not compile cannot protect the turn.
		t.block(BlockedText)
		t.audit("gate_set_invalid", map[string]any{"error": err.Error()})
		return next
	}
	t.Gates = set
	return next
}

// runInputGates runs the policy lane on the user's message (step 1).
func runInputGates(t *Turn, e *Env) Effect {
	t.gate = gateFlow{trigger: messages.TriggerEveryUserMessage}
	return t.policy(messages.TriggerEveryUserMessage, gates.InputContext(t.In.Text, t.In.SenderID))
}

// runOutputGates runs the policy lane on the answer (step 8).
func runOutputGates(t *Turn, e *Env) Effect {
	t.gate = gateFlow{trigger: messages.TriggerEveryAgentResponse}
	if t.Blocked || t.Response == nil {
		return next
	}
	if eff := t.policy(messages.TriggerEveryAgentResponse, t.outputContext()); eff.Await != nil {
		return eff
	}
	return t.gateMemoryOps(e)
}

// resumeInputGates and resumeOutputGates route the awaited result to the
// phase that awaited it.
func resumeInputGates(t *Turn, e *Env, r Result) Effect  { return t.resumeGates(e, r) }
func resumeOutputGates(t *Turn, e *Env, r Result) Effect { return t.resumeGates(e, r) }

func (t *Turn) resumeGates(e *Env, r Result) Effect {
	switch t.gate.phase {
	case phaseApproval:
		return t.onApproval(e, r)
	case phaseRephrase:
		return t.onRephrased(e, r)
	case phaseMemOp:
		return t.onMemOpDecision(e, r)
	case phaseMemOpApproval:
		return t.onMemOpApproval(e, r)
	}
	return t.onDecision(e, r)
}

func (t *Turn) outputContext() map[string]any {
	return gates.OutputContext(t.Response.Message, t.In.SenderID)
}

// policy asks for the policy lane on trigger, or, when no policy gate
// fires on it, queues the quality lane and goes on.
func (t *Turn) policy(trigger messages.GateTrigger, ctx map[string]any) Effect {
	t.gate.phase = phaseCheck
	if t.Blocked || t.Gates == nil || len(t.Gates.Matching(messages.LanePolicy, trigger, 0)) == 0 {
		if !t.Blocked && t.Gates != nil {
			t.quality(trigger, ctx)
		}
		return next
	}
	return Effect{Await: &RunPolicyGates{Check: gates.Check{Gates: t.Gates, Trigger: trigger, Context: ctx, Budget: t.GateBudget}}}
}

// decision takes a policy decision out of r and records its audit events
// and budget. A failed lane fails closed: the turn is blocked.
func (t *Turn) decision(r Result, trigger messages.GateTrigger) (gates.PolicyDecision, bool) {
	d, ok := r.Value.(gates.PolicyDecision)
	if r.Err != nil || !ok {
		t.block(BlockedText)
		t.audit("gate_lane_failed", map[string]any{"trigger": string(trigger), "error": fmt.Sprint(r.Err)})
		return d, false
	}
	t.GateBudget = d.Budget
	for _, ev := range d.AuditEvents(t.Scope, trigger, t.In.SenderID, t.Now) {
		t.audit(ev.Event, ev.Data)
	}
	return d, true
}

// onDecision applies the policy decision of step 1 or 8: a block
// escalates, an approval requirement asks the owner, a pass applies the
// allowed rewrites.
func (t *Turn) onDecision(e *Env, r Result) Effect {
	f := &t.gate
	d, ok := t.decision(r, f.trigger)
	if !ok {
		return next
	}
	switch d.Action {
	case messages.GateBlock:
		ev, _ := d.BlockedBy()
		return t.escalate(e, ev.Gate, ev.OnBlock, ev.Result.Reason)
	case messages.GateRequireApproval:
		f.decision, f.approval, f.phase = d, 0, phaseApproval
		return t.askApproval(f.trigger)
	}
	if f.trigger == messages.TriggerEveryUserMessage {
		t.recordInputGates(&d) // for the access update of step 14
	}
	return t.passed(e, d.Context)
}

// askApproval asks the owner about the current approval of f.decision.
func (t *Turn) askApproval(trigger messages.GateTrigger) Effect {
	f := &t.gate
	ev := f.decision.Evaluations[f.decision.Approvals[f.approval]]
	return Effect{Await: &GateApprovalRequest{
		Gate: ev.Gate, Reason: ev.Result.Reason, Trigger: trigger, Value: ev.Result.Value, Context: f.decision.Context,
	}}
}

// approvalOutcome reads a GateApprovalOutcome; anything else is a refusal.
func (t *Turn) approvalOutcome(r Result, gate string) GateApprovalOutcome {
	out, ok := r.Value.(GateApprovalOutcome)
	switch {
	case r.Err != nil:
		out = GateApprovalOutcome{Reason: r.Err.Error()}
	case !ok:
		out = GateApprovalOutcome{Reason: "no approval outcome"}
	}
	if !out.Approved {
		t.audit("gate_approval_denied", map[string]any{"gate": gate, "trigger": string(t.gate.trigger), "reason": out.Reason})
	}
	return out
}

// onApproval goes on with the next approval, or with the turn once every
// gate that asked was approved. A refusal stops an input (spec 5.1 step 1)
// and runs the gate's escalation on an output (step 8).
func (t *Turn) onApproval(e *Env, r Result) Effect {
	f := &t.gate
	ev := f.decision.Evaluations[f.decision.Approvals[f.approval]]
	if out := t.approvalOutcome(r, ev.Gate); !out.Approved {
		if f.trigger == messages.TriggerEveryAgentResponse {
			return t.escalate(e, ev.Gate, ev.OnBlock, "the owner's approval was not given: "+out.Reason)
		}
		t.block(GateNotApprovedAnswer(out.Reason))
		return next
	}
	if f.approval++; f.approval < len(f.decision.Approvals) {
		return t.askApproval(f.trigger)
	}
	if f.trigger == messages.TriggerEveryUserMessage {
		t.recordInputGates(&f.decision) // the turn goes on: step 14 sees its gates
	}
	return t.passed(e, f.decision.Context)
}

// passed continues with the context the policy lane produced: the allowed
// rewrite replaces the message (before anything stores it) or the response
// (before it is sent), and the quality lane is queued. After the output
// gates, step 10's memory ops are gated.
func (t *Turn) passed(e *Env, ctx map[string]any) Effect {
	if t.gate.trigger == messages.TriggerEveryUserMessage {
		if s, ok := ctx[gates.KeyMessage].(string); ok {
			t.In.Text = s
		}
		t.quality(t.gate.trigger, ctx)
		return next
	}
	if s, ok := ctx[gates.KeyResponse].(string); ok && s != t.Response.Message {
		t.setResponseText(s)
	}
	t.quality(t.gate.trigger, ctx)
	return t.gateMemoryOps(e)
}

// setResponseText replaces the response's message without changing the
// agent's response value in place (it may be shared).
func (t *Turn) setResponseText(s string) {
	resp := *t.Response
	resp.Message = s
	t.Response = &resp
}

// escalate executes the escalation of the gate that blocked (spec 5.1.1).
func (t *Turn) escalate(e *Env, gate, onBlock, reason string) Effect {
	// The web channel has no live-agent handoff: escalate_human falls
	// back to transfer_to_queue or report.
	plan := gates.ResolveEscalation(onBlock, e.GoalEscalations).ForChannel(false)
	for _, ev := range gates.EscalationEvents(t.Scope, gate, plan, t.Now) {
		t.audit(ev.Event, ev.Data)
	}
	return t.execute(e, plan, gate, reason)
}

// execute runs one escalation plan; the turn's answer is what it decides.
func (t *Turn) execute(e *Env, p *gates.Plan, gate, reason string) Effect {
	f := &t.gate
	switch p.Action {
	case messages.EscalationRespond:
		t.block(orBlocked(p.Message))
	case messages.EscalationTransferToQueue, messages.EscalationEscalateHuman:
		// Queues are channel-specific and the web channel has none to hand
		// over to: the user gets the message and the transfer is audited
		// for the owner to pick up.
		t.block(orBlocked(p.Message))
		t.audit("gate_transfer_requested", map[string]any{"gate": gate, "queue": p.Queue, "action": string(p.Action)})
	case messages.EscalationSuppressAndEscalate:
		eff := t.execute(e, p.Fallback, gate, reason)
		if eff.Await == nil && p.Message != "" {
			// The escalation's own message is what the user sees; a
			// terminal fallback only adds its side effects (and its own
			// message, when it has one).
			fallback := ""
			if p.Fallback != nil {
				fallback = p.Fallback.Message
			}
			t.block(joinText(p.Message, fallback))
		}
		return eff
	case messages.EscalationSuppressAndRephrase, messages.EscalationRetry:
		again, fallback := p.AfterAttempts(f.attempts)
		rephrase := p.Action == messages.EscalationSuppressAndRephrase
		if rephrase && f.trigger != messages.TriggerEveryAgentResponse {
			// There is no answer to rephrase before step 8.
			again, fallback = false, p.Fallback
		}
		if !again {
			t.audit("gate_retries_exhausted", map[string]any{"gate": gate, "escalation": p.Name, "attempts": f.attempts})
			if fallback == nil {
				fallback = &gates.Plan{Name: gates.EscalationReportName, Action: messages.EscalationReport, Source: gates.SourceDefault}
			}
			return t.execute(e, fallback, gate, reason)
		}
		f.attempts++
		t.audit("gate_retry", map[string]any{"gate": gate, "escalation": p.Name, "action": string(p.Action), "attempt": f.attempts})
		if !rephrase {
			// Re-execute the current step: the gate check itself.
			ctx := gates.InputContext(t.In.Text, t.In.SenderID)
			if f.trigger == messages.TriggerEveryAgentResponse {
				ctx = t.outputContext()
			}
			return t.policy(f.trigger, ctx)
		}
		f.phase, f.rephrase, f.gate, f.reason = phaseRephrase, p, gate, reason
		return Effect{Await: t.rephraseCall(e, p.Instruction, gate, reason)}
	default:
		// report, spawn_task and anything unknown: the block is audited
		// (gate_block, gate_escalation) for the owner, the response
		// suppressed.
		if p.Action == messages.EscalationSpawnTask {
			t.audit("gate_fix_task_requested", map[string]any{"gate": gate, "reason": reason, "trigger": string(f.trigger)})
		}
		t.block(orBlocked(p.Message))
	}
	return next
}

func orBlocked(s string) string {
	if strings.TrimSpace(s) == "" {
		return BlockedText
	}
	return s
}

// rephraseCall asks the agent that wrote the suppressed answer for a new
// one, with the escalation's instruction and the gate's feedback appended
// (spec 5.1.1 suppress_and_rephrase). The suppressed answer itself is not
// shown again.
func (t *Turn) rephraseCall(e *Env, instruction, gate, reason string) *ModelCall {
	feedback := fmt.Sprintf("\n\n%s Your previous answer was withheld from the user: gate %q blocked it (%s). %s\nWrite a new answer that satisfies this rule.",
		rephraseMarker, gate, reason, strings.TrimSpace(instruction))
	if t.Agent == AgentPlanner {
		return &ModelCall{
			Role: AgentPlanner, Schema: "AgentResponse",
			System: e.PlannerInstructions + e.Window.System(), Prompt: e.Window.Render() + feedback,
			Decode: decodeAgentResponse,
		}
	}
	return &ModelCall{
		Role: AgentProxy, Schema: "RouteDecision",
		System: e.ProxyInstructions + e.Window.System(), Prompt: e.Window.Render() + feedback,
		Decode: func(content string) (any, error) {
			rd, err := decodeRoute(content, e)
			if err != nil {
				return nil, err
			}
			if rd.Response == nil {
				return nil, errors.New("a rephrased answer must be a direct response")
			}
			return rd.Response, nil
		},
	}
}

// onRephrased checks the new answer with the output gates again; a failed
// re-run counts as an attempt that did not pass.
func (t *Turn) onRephrased(e *Env, r Result) Effect {
	f := &t.gate
	t.addUsage(r)
	if r.Err != nil {
		t.audit("gate_rephrase_failed", map[string]any{"gate": f.gate, "error": r.Err.Error()})
		return t.execute(e, f.rephrase, f.gate, f.reason)
	}
	mr, _ := r.Value.(ModelResult)
	resp, ok := mr.Value.(*messages.AgentResponse)
	if !ok || resp == nil {
		t.audit("gate_rephrase_failed", map[string]any{"gate": f.gate, "error": "no answer"})
		return t.execute(e, f.rephrase, f.gate, f.reason)
	}
	// The plan of the suppressed answer does not survive the rewrite
	// unless the new answer proposes it again.
	t.Response = resp
	return t.policy(f.trigger, t.outputContext())
}

// gateMemoryOps runs the on_tool_call policy gates on each of the
// response's memory ops before step 10 applies them (spec 5.1 step 10,
// tool "memory_op"). A blocked op is skipped and audited as
// memory_op_blocked; the answer is not affected.
func (t *Turn) gateMemoryOps(e *Env) Effect {
	f := &t.gate
	if t.Blocked || t.Response == nil || len(t.Response.MemoryOps) == 0 || t.Gates == nil {
		return next
	}
	if len(t.Gates.Matching(messages.LanePolicy, messages.TriggerOnToolCall, 0)) == 0 {
		if len(t.Gates.Matching(messages.LaneQuality, messages.TriggerOnToolCall, 0)) == 0 {
			return next
		}
		for _, op := range t.Response.MemoryOps {
			if args, err := opArgs(op); err == nil {
				t.quality(messages.TriggerOnToolCall, gates.ToolCallContext("memory_op", args, t.In.SenderID))
			}
		}
		return next
	}
	f.ops, f.op, f.kept = t.Response.MemoryOps, 0, nil
	return t.checkMemOp()
}

func (t *Turn) checkMemOp() Effect {
	f := &t.gate
	f.phase = phaseMemOp
	args, err := opArgs(f.ops[f.op])
	if err != nil {
		t.audit("memory_op_blocked", map[string]any{"index": f.op, "reason": err.Error()})
		return t.nextMemOp(nil)
	}
	ctx := gates.ToolCallContext("memory_op", args, t.In.SenderID)
	return Effect{Await: &RunPolicyGates{Check: gates.Check{Gates: t.Gates, Trigger: messages.TriggerOnToolCall, Context: ctx, Budget: t.GateBudget}}}
}

func (t *Turn) onMemOpDecision(e *Env, r Result) Effect {
	f := &t.gate
	d, ok := r.Value.(gates.PolicyDecision)
	if r.Err != nil || !ok {
		t.audit("memory_op_blocked", map[string]any{"index": f.op, "reason": "gate lane failed: " + fmt.Sprint(r.Err)})
		return t.nextMemOp(nil)
	}
	t.GateBudget = d.Budget
	for _, ev := range d.AuditEvents(t.Scope, messages.TriggerOnToolCall, t.In.SenderID, t.Now) {
		t.audit(ev.Event, ev.Data)
	}
	switch d.Action {
	case messages.GateBlock:
		ev, _ := d.BlockedBy()
		t.audit("memory_op_blocked", map[string]any{"index": f.op, "gate": ev.Gate, "op": string(f.ops[f.op].Op)})
		return t.nextMemOp(nil)
	case messages.GateRequireApproval:
		f.decision, f.approval, f.phase = d, 0, phaseMemOpApproval
		return t.askApproval(messages.TriggerOnToolCall)
	}
	return t.nextMemOp(d.Context)
}

func (t *Turn) onMemOpApproval(e *Env, r Result) Effect {
	f := &t.gate
	ev := f.decision.Evaluations[f.decision.Approvals[f.approval]]
	if out := t.approvalOutcome(r, ev.Gate); !out.Approved {
		t.audit("memory_op_blocked", map[string]any{"index": f.op, "gate": ev.Gate, "reason": "approval " + out.Reason})
		return t.nextMemOp(nil)
	}
	if f.approval++; f.approval < len(f.decision.Approvals) {
		return t.askApproval(messages.TriggerOnToolCall)
	}
	return t.nextMemOp(f.decision.Context)
}

// nextMemOp keeps the current op as the gates left it (nil ctx: skipped)
// and moves on; after the last op the response carries only the kept ops.
func (t *Turn) nextMemOp(ctx map[string]any) Effect {
	f := &t.gate
	if ctx != nil {
		op, err := opFromArgs(ctx[gates.KeyToolArgs])
		if err != nil {
			t.audit("memory_op_blocked", map[string]any{"index": f.op, "reason": "rewritten op is invalid: " + err.Error()})
		} else {
			f.kept = append(f.kept, op)
			t.quality(messages.TriggerOnToolCall, ctx)
		}
	}
	if f.op++; f.op < len(f.ops) {
		return t.checkMemOp()
	}
	resp := *t.Response
	resp.MemoryOps = f.kept
	t.Response = &resp
	return next
}

// opArgs renders a memory op as the tool arguments gates see.
func opArgs(op messages.MemoryOp) (map[string]any, error) {
	b, err := json.Marshal(op)
	if err != nil {
		return nil, fmt.Errorf("encode memory op: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("encode memory op: %w", err)
	}
	return m, nil
}

// opFromArgs reads a memory op back from (possibly rewritten) arguments.
func opFromArgs(v any) (messages.MemoryOp, error) {
	var op messages.MemoryOp
	b, err := json.Marshal(v)
	if err != nil {
		return op, err
	}
	if err := strictUnmarshal(string(b), &op); err != nil {
		return op, err
	}
	return op, op.Validate()
}

// block ends the turn's work with text as the answer; the stages that
// remain skip their work, and the answer is committed and sent.
func (t *Turn) block(text string) {
	t.Blocked = true
	t.Response = &messages.AgentResponse{Message: text}
	t.Agent = "runtime"
}

// quality queues the advisory lane for the scope to run after the policy
// lane; it never delays or changes the turn.
func (t *Turn) quality(trigger messages.GateTrigger, ctx map[string]any) {
	if t.Gates == nil || len(t.Gates.Matching(messages.LaneQuality, trigger, 0)) == 0 {
		return
	}
	t.Quality = append(t.Quality, gates.Check{Gates: t.Gates, Trigger: trigger, Context: ctx, Budget: t.GateBudget})
}
