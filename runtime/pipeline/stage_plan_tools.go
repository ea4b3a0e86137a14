package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/contextmgr"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/plan"
	"github.com/silas-ai/silas/runtime/taint"
)

// The planner's tool loop (spec 19.4). Before its AgentResponse the planner
// may call memory_search (where the access level allows it), validate_plan
// (the plan parser, pure) and, in the owner's scope, request_research:
// read-only research micro-tasks run by the executor model (spec 19.5.1).
//
// Like the proxy's loop (stage_route_tools.go) it is turn data and the
// pipeline performs no IO: each round is one ModelCall; memory_search awaits
// a QueryMemory; request_research awaits a StartResearch, which the scope
// answers at once after starting the micro-task off its mailbox, so the
// tool's result only says that the research started. Research is
// non-blocking: the requests of a round run in parallel with each other and
// with the round's other calls, and the scope keeps serving while they run.
//
// The research state machine (spec 19.4.1, researchLoop in
// stage_plan_research.go) decides when the planner is asked again: once the
// round's calls are answered and research is in flight, the loop is
// awaiting_research and the turn awaits AwaitResearch, once per outcome,
// until none is in flight; the outcomes then reach the planner as one user
// message after the round's tool messages (every tool call keeps its tool
// message right after the assistant message that made it), and the next
// round starts. When a cap is spent the loop is ready_to_finalize, or
// expired when a request got no result in time: the next call forbids tools
// (tool_choice none) and the planner must answer.

// Tool names of the planner's loop besides ToolMemorySearch.
const (
	ToolValidatePlan    = "validate_plan"
	ToolRequestResearch = "request_research"
)

// DefaultMaxPlannerRounds is how many rounds of tool calls the planner may
// make before it must answer: enough for MaxResearchRounds rounds of
// research and a few of memory searches and plan checks.
const DefaultMaxPlannerRounds = 8

// plannerToolDefs are the planner's tools in the order they are offered.
var plannerToolDefs = []llm.Tool{
	proxyToolDef(ToolMemorySearch),
	{Name: ToolValidatePlan, Description: "Check plan markdown (YAML front matter and briefing, spec 7.2) with the same parser that reads your final plan; returns \"valid\" or every error to fix. It runs nothing.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"plan_markdown":{"type":"string","description":"the whole plan: front matter between --- lines, then the briefing"}},"required":["plan_markdown"],"additionalProperties":false}`)},
	{Name: ToolRequestResearch, Description: "Ask a research executor to find facts for the plan (read-only: it may search the web when that is configured, and never runs code or changes anything). It returns at once that the research started; the result arrives in a later message before your next step. Up to 3 at once; never ask for the same research twice.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"instructions":{"type":"string","description":"self-contained instructions: what to find out and what to report back"}},"required":["instructions"],"additionalProperties":false}`)},
}

// proxyToolDef is the proxy's definition of the tool name, which the
// planner shares.
func proxyToolDef(name string) llm.Tool {
	for _, t := range proxyToolDefs {
		if t.Name == name {
			return t
		}
	}
	return llm.Tool{Name: name}
}

// plannerLimitText tells the planner its tool rounds are spent.
const plannerLimitText = "[TOOL LIMIT] You have used all your tool calls for this request. Answer now with the AgentResponse, from what you have."

// planPhase is what the planner's loop awaits.
type planPhase int

const (
	planIdle     planPhase = iota // a model answer, or nothing
	planTool                      // the request of the current call
	planResearch                  // the next research outcome (AwaitResearch)
)

// planLoop is the state of the planner's tool loop in one turn.
type planLoop struct {
	offered    []llm.Tool
	transcript []llm.Message
	rounds     int
	calls      []llm.ToolCall
	next       int
	phase      planPhase
	// final is set once the planner must answer: the next call forbids
	// tools.
	final    bool
	research researchLoop
}

// plannerTools are the tools the planner is offered: memory_search where
// the access level allows it, validate_plan always (it only parses),
// request_research in the owner's scope only: research spends the owner's
// model and search budget, and a customer's plans are never run.
func plannerTools(t *Turn, e *Env) []llm.Tool {
	var out []llm.Tool
	for _, tool := range plannerToolDefs {
		switch tool.Name {
		case ToolMemorySearch:
			if !t.ToolAllowed(tool.Name) {
				continue
			}
		case ToolRequestResearch:
			if !e.OwnerScope {
				continue
			}
		}
		out = append(out, tool)
	}
	return out
}

// startPlanner asks the planner for its first round (step 7, route
// "planner").
func (t *Turn) startPlanner(e *Env) Effect {
	t.planner = planLoop{offered: plannerTools(t, e), research: researchLoop{state: ResearchPlanning}}
	return Effect{Await: t.plannerCall(e)}
}

// plannerCall is the planner's model call: the rendered window, then the
// tool loop so far.
func (t *Turn) plannerCall(e *Env) *ModelCall {
	quoted, size := e.Window.RenderEncoded()
	stable, _ := e.Window.RenderStats()
	c := &ModelCall{
		Role:         AgentPlanner,
		Schema:       "AgentResponse",
		System:       e.PlannerInstructions + e.Window.System(),
		PromptQuoted: quoted,
		PromptBytes:  size,
		PromptStable: stable,
		Decode:       decodeAgentResponse,
	}
	if l := &t.planner; len(l.offered) > 0 {
		c.Tools = l.offered
		c.Transcript = slices.Clip(l.transcript)
		if l.final {
			c.ToolChoice = llm.ToolChoiceNone
		}
	}
	return c
}

// plannerToolCalls starts a round of the planner's calls; ok is false when
// the planner may not call tools now (none offered, or it must answer).
func (t *Turn) plannerToolCalls(e *Env, mr ModelResult) (eff Effect, ok bool) {
	l := &t.planner
	if len(l.offered) == 0 || l.final {
		return Effect{}, false
	}
	l.rounds++
	l.research.roundStarted = false
	l.transcript = append(l.transcript, llm.Message{Role: llm.RoleAssistant, Content: mr.Content, ToolCalls: mr.ToolCalls})
	l.calls, l.next = mr.ToolCalls, 0
	return t.nextPlannerTool(e), true
}

// nextPlannerTool runs the round's calls from l.next until one awaits a
// request; once all are answered, it waits for the research in flight or
// asks the planner again.
func (t *Turn) nextPlannerTool(e *Env) Effect {
	l := &t.planner
	for ; l.next < len(l.calls); l.next++ {
		if eff := t.startPlannerTool(e, l.calls[l.next]); eff.Await != nil {
			return eff
		}
	}
	l.calls, l.next = nil, 0
	if eff := t.awaitResearch(); eff.Await != nil {
		return eff
	}
	return t.nextPlannerRound(e, "")
}

// nextPlannerRound asks the planner again, note (research results) first
// in the transcript; once a cap is spent or research expired, it must
// answer.
func (t *Turn) nextPlannerRound(e *Env, note string) Effect {
	l := &t.planner
	l.phase = planIdle
	why := t.finalizeReason()
	if why != "" {
		l.final = true
		note = joinText(note, finalizeText(why))
		t.audit("planner_finalize_forced", map[string]any{"reason": why, "rounds": l.rounds, "research_rounds": l.research.rounds})
	}
	if note != "" {
		l.transcript = append(l.transcript, llm.Message{Role: llm.RoleUser, Content: note})
	}
	return Effect{Await: t.plannerCall(e)}
}

// finalizeReason says why the planner must answer now ("" when it may go
// on), and moves the research state machine to its end state.
func (t *Turn) finalizeReason() string {
	l := &t.planner
	r := &l.research
	switch {
	case r.state == ResearchExpired:
		return "research_expired"
	case r.rounds >= MaxResearchRounds:
		r.setState(ResearchReadyToFinalize)
		return "research_rounds"
	case l.rounds >= DefaultMaxPlannerRounds:
		r.setState(ResearchReadyToFinalize)
		return "tool_rounds"
	}
	r.setState(ResearchPlanning)
	return ""
}

func finalizeText(why string) string {
	switch why {
	case "research_expired":
		return fmt.Sprintf("[RESEARCH EXPIRED] Research you requested gave no result within %d seconds. Answer now with the AgentResponse, from what you have, and say what could not be found out.", int(ResearchTimeout.Seconds()))
	case "research_rounds":
		return fmt.Sprintf("[RESEARCH LIMIT] You have used all %d research rounds. Answer now with the AgentResponse, from what you have.", MaxResearchRounds)
	}
	return plannerLimitText
}

// startPlannerTool answers tc at once, or returns the request it awaits.
func (t *Turn) startPlannerTool(e *Env, tc llm.ToolCall) Effect {
	l := &t.planner
	t.audit("tool_call", map[string]any{"agent": AgentPlanner, "tool": tc.Name})
	if l.next >= MaxToolCallsPerRound {
		t.plannerToolError(tc, fmt.Sprintf("not run: at most %d tool calls per step; make fewer calls at once", MaxToolCallsPerRound))
		return next
	}
	if !slices.ContainsFunc(l.offered, func(o llm.Tool) bool { return o.Name == tc.Name }) {
		// Not offered, so not allowed: nothing runs, whatever the name.
		t.audit("tool_call_rejected", map[string]any{"agent": AgentPlanner, "tool": tc.Name, "reason": "not offered"})
		t.plannerToolError(tc, fmt.Sprintf("%q is not one of your tools, so the call did not run; your tools: %s", tc.Name, toolNamesOf(l.offered)))
		return next
	}
	switch tc.Name {
	case ToolValidatePlan:
		t.plannerToolResult(tc, validatePlan(tc))
		return next
	case ToolMemorySearch:
		q, err := memorySearchQuery(tc)
		if err != nil {
			t.plannerToolError(tc, err.Error())
			return next
		}
		l.phase = planTool
		return Effect{Await: q}
	case ToolRequestResearch:
		return t.requestResearch(tc)
	}
	t.plannerToolError(tc, fmt.Sprintf("%q cannot run here", tc.Name))
	return next
}

// onPlannerResult takes the result of what the planner's loop awaited.
func (t *Turn) onPlannerResult(e *Env, r Result) Effect {
	l := &t.planner
	phase := l.phase
	l.phase = planIdle
	if phase == planResearch {
		return t.onResearchOutcome(e, r)
	}
	tc := l.calls[l.next]
	switch tc.Name {
	case ToolMemorySearch:
		content, level, found, err := memorySearchResult(r)
		if err != nil {
			t.audit("memory_query_failed", map[string]any{"agent": AgentPlanner, "error": err.Error()})
			t.plannerToolError(tc, "the memory search failed; plan without it")
			break
		}
		if found {
			t.sawTool(level)
		}
		t.plannerToolResult(tc, content)
	case ToolRequestResearch:
		t.onResearchStarted(tc, r)
	}
	l.next++
	return t.nextPlannerTool(e)
}

// validatePlan runs the plan parser on the call's plan_markdown, with the
// checks step 12 applies to a plan before it asks for approval (a
// project's tasks, a scheduled goal's rules). It is pure: nothing is
// stored or run.
func validatePlan(tc llm.ToolCall) string {
	var a struct {
		PlanMarkdown string `json:"plan_markdown"`
	}
	if err := toolArgs(tc, &a); err != nil {
		return mustJSON(map[string]string{"error": err.Error()})
	}
	if strings.TrimSpace(a.PlanMarkdown) == "" {
		return mustJSON(map[string]string{"error": "validate_plan needs the plan's markdown in plan_markdown"})
	}
	w, err := plan.Parse(a.PlanMarkdown)
	if err == nil && w.Type == messages.WorkProject {
		_, err = plan.Tasks(w)
	}
	if err == nil && w.Type == messages.WorkGoal && w.Schedule != nil && *w.Schedule != messages.ScheduleAlwaysOn {
		err = plan.CheckGoal(w)
	}
	if err != nil {
		out := map[string]any{"result": "invalid", "errors": err.Error()}
		if errors.Is(err, plan.ErrOwnerOnlyGate) {
			out["note"] = "a plan from you cannot declare this gate: remove it, it will not be accepted however it is written"
		}
		return mustJSON(out)
	}
	return mustJSON(map[string]any{"result": "valid", "id": w.ID, "type": w.Type, "title": w.Title})
}

// memorySearchResult is what a model sees of a memory_search: the items
// found, scrubbed, each with its taint, and their weakest taint (found is
// false when there were none).
func memorySearchResult(r Result) (content string, level messages.TaintLevel, found bool, err error) {
	if r.Err != nil {
		return "", "", false, r.Err
	}
	items, _ := r.Value.([]messages.MemoryItem)
	hits, level := memoryHits(items)
	view := map[string]any{"results": hits}
	if len(items) > 0 {
		view["taint"] = level
	}
	return mustJSON(view), level, len(items) > 0, nil
}

// memoryHits are the items as a model sees them, scrubbed, and their
// weakest taint ("" for none).
func memoryHits(items []messages.MemoryItem) ([]memoryHit, messages.TaintLevel) {
	hits := make([]memoryHit, 0, len(items))
	levels := make([]messages.TaintLevel, 0, len(items))
	for i := range items {
		m := &items[i]
		hits = append(hits, memoryHit{MemoryID: m.MemoryID, Content: contextmgr.ScrubInjection(m.Content), MemoryType: m.MemoryType, Taint: m.Taint, CreatedAt: m.CreatedAt})
		levels = append(levels, m.Taint)
	}
	if len(items) == 0 {
		return hits, ""
	}
	return hits, taint.Derived(messages.TaintOwner, levels...)
}

func (t *Turn) plannerToolResult(tc llm.ToolCall, content string) {
	t.planner.transcript = append(t.planner.transcript, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: content})
}

func (t *Turn) plannerToolError(tc llm.ToolCall, msg string) {
	t.plannerToolResult(tc, mustJSON(map[string]string{"error": msg}))
}

func toolNamesOf(tools []llm.Tool) string {
	names := make([]string, len(tools))
	for i, o := range tools {
		names[i] = o.Name
	}
	return strings.Join(names, ", ")
}
