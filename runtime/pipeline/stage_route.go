package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/interaction"
	"github.com/silas-ai/silas/runtime/llm"
)

// ErrInvalidOutput marks a model call whose output stayed invalid after the
// one repair retry of spec 5.1.0; the stage applies the role's fallback.
var ErrInvalidOutput = errors.New("structured output invalid after repair retry")

// Fallback texts of spec 5.1.0, shown to the user.
const (
	ProxyFallbackText   = "Sorry, I could not produce a valid answer just now: the model's output did not match the expected format twice. Please send your message again."
	PlannerFallbackText = "Sorry, planning failed: the planner's output did not match the expected plan format twice, so no plan was made. Please rephrase the request or try again."
)

// runRoute asks the proxy for a RouteDecision (spec 5.1 step 7).
func runRoute(t *Turn, e *Env) Effect {
	if t.Blocked {
		return next
	}
	injectPersona(t, e)
	t.tools = toolLoop{offered: proxyTools(t, e)}
	return Effect{Await: t.proxyCall(e)}
}

// decodeRoute decodes and validates the proxy's RouteDecision.
func decodeRoute(content string, e *Env) (*messages.RouteDecision, error) {
	var rd messages.RouteDecision
	if err := strictUnmarshal(content, &rd); err != nil {
		return nil, err
	}
	if err := rd.Validate(e.Profiles); err != nil {
		return nil, err
	}
	return &rd, nil
}

// decodeAgentResponse decodes and validates the planner's AgentResponse.
func decodeAgentResponse(content string) (any, error) {
	var ar messages.AgentResponse
	if err := strictUnmarshal(content, &ar); err != nil {
		return nil, err
	}
	if err := ar.Validate(); err != nil {
		return nil, err
	}
	return &ar, nil
}

func resumeRoute(t *Turn, e *Env, r Result) Effect {
	if t.tools.phase != toolIdle {
		return t.onToolResult(e, r)
	}
	if t.Route == nil {
		return t.routed(e, r)
	}
	if t.planner.phase != planIdle {
		return t.onPlannerResult(e, r)
	}
	return t.planned(e, r)
}

// routed handles the proxy's answer: tool calls run (stage_route_tools.go)
// and the proxy is asked again, a direct answer ends the stage, a planner
// route asks the planner.
func (t *Turn) routed(e *Env, r Result) Effect {
	t.addUsage(r)
	if mr, ok := r.Value.(ModelResult); ok && r.Err == nil && len(mr.ToolCalls) > 0 {
		if len(t.tools.offered) > 0 && !t.tools.final {
			return t.toolRound(e, mr)
		}
		// Calls where none may be made: an answer that is not a
		// RouteDecision.
		r.Err = fmt.Errorf("%w: the proxy called tools where it had to answer", ErrInvalidOutput)
	}
	switch {
	case errors.Is(r.Err, ErrInvalidOutput):
		t.Route = proxyFallback(e)
		t.audit("structured_output_fallback", map[string]any{"agent": AgentProxy, "error": r.Err.Error()})
	case r.Err != nil:
		t.Route = proxyFallback(e)
		t.Route.Response.Message = modelErrorText(e, AgentProxy, r.Err)
		t.failed(AgentProxy, r.Err)
	default:
		t.Route = r.Value.(ModelResult).Value.(*messages.RouteDecision)
	}
	t.applyRoute(e)
	if t.Route.Route == messages.RouteDirect {
		t.Response, t.Agent = t.Route.Response, AgentProxy
		return next
	}
	return t.startPlanner(e) // its tool loop: stage_plan_tools.go
}

// planned handles the planner's answer: tool calls run
// (stage_plan_tools.go) and the planner is asked again; an AgentResponse
// ends the stage.
func (t *Turn) planned(e *Env, r Result) Effect {
	t.addUsage(r)
	t.Agent = AgentPlanner
	if mr, ok := r.Value.(ModelResult); ok && r.Err == nil && len(mr.ToolCalls) > 0 {
		if eff, ok := t.plannerToolCalls(e, mr); ok {
			return eff
		}
		r.Err = fmt.Errorf("%w: the planner called tools where it had to answer", ErrInvalidOutput)
	}
	switch {
	case errors.Is(r.Err, ErrInvalidOutput):
		t.Response = &messages.AgentResponse{Message: PlannerFallbackText}
		t.audit("structured_output_fallback", map[string]any{"agent": AgentPlanner, "error": r.Err.Error()})
	case r.Err != nil:
		t.Response = &messages.AgentResponse{Message: modelErrorText(e, AgentPlanner, r.Err)}
		t.failed(AgentPlanner, r.Err)
	default:
		t.Response = r.Value.(ModelResult).Value.(*messages.AgentResponse)
	}
	return next
}

// applyRoute resolves the turn's mode through the single resolver and
// switches the context profile (step 7, after routing). The decision is
// audited with the turn's completion, in one entry per turn.
func (t *Turn) applyRoute(e *Env) {
	rd := t.Route
	t.Register = rd.InteractionRegister
	proxyMode := rd.InteractionMode
	t.Mode = interaction.Resolve(interaction.Inputs{
		ProxyMode:             &proxyMode,
		InitiativeLevel:       e.Initiative,
		Register:              rd.InteractionRegister,
		HighInitiativeMin:     e.HighInitiativeMin,
		DefaultModeByRegister: e.DefaultModes,
	})
	t.Profile = rd.ContextProfile
	if _, err := e.Window.SetProfile(t.Profile); err != nil {
		// Validate checked the name against the registry, so this only
		// happens if the window's registry differs from the config's.
		t.audit("context_profile_unknown", map[string]any{"profile": t.Profile})
		_, _ = e.Window.SetProfile(e.DefaultProfile)
	}
}

func proxyFallback(e *Env) *messages.RouteDecision {
	return &messages.RouteDecision{
		Route:               messages.RouteDirect,
		Reason:              "structured output fallback",
		Response:            &messages.AgentResponse{Message: ProxyFallbackText},
		InteractionRegister: messages.RegisterStatus,
		InteractionMode:     messages.ModeConfirmOnlyWhenRequired,
		ContextProfile:      e.DefaultProfile,
	}
}

// CustomerModelErrorText is what a customer reads when a model call fails.
// A provider's error can carry its URL, an internal host name or the body
// of its answer; a customer sees none of it. The detail is in the audit
// entry "model_error" and the daemon's log.
const CustomerModelErrorText = "Sorry, I can't answer right now. Please try again in a moment."

// modelErrorText is the answer to a turn whose model call failed: the
// owner reads the provider's error, to fix a key or a URL; a customer reads
// CustomerModelErrorText.
func modelErrorText(e *Env, agent string, err error) string {
	if !e.OwnerScope {
		return CustomerModelErrorText
	}
	msg := fmt.Sprintf("Sorry, I could not reach my %s model: %v", agent, err)
	switch llm.KindOf(err) {
	case llm.KindAuth:
		msg += ". The provider refused the API key or none is set: set a valid key in the environment variable silas.providers.<name>.api_key_env names, and restart Silas."
	case llm.KindBadRequest:
		msg += ". Sending it again will fail the same way: check silas.models and the provider's model names."
	case llm.KindRateLimited:
		msg += ". The provider is limiting requests: wait a minute and send it again."
	case llm.KindContentFilter:
		msg += ". The provider's content filter refused it: rephrase the message."
	case llm.KindTransient:
		msg += ". It may be a passing failure: send it again in a moment."
	}
	return msg
}

// failed records the failure of the agent's model call: its kind goes to
// the audit entry "model_error" and rides on the answer.
func (t *Turn) failed(agent string, err error) {
	kind := llm.KindOf(err)
	t.Failure = &messages.TurnError{Kind: string(kind), Retryable: kind.Retryable()}
	t.audit("model_error", map[string]any{"agent": agent, "error": err.Error(), "kind": string(kind)})
}

func (t *Turn) addUsage(r Result) {
	if mr, ok := r.Value.(ModelResult); ok {
		t.Usage.Calls += mr.Usage.Calls
		t.Usage.PromptTokens += mr.Usage.PromptTokens
		t.Usage.CompletionTokens += mr.Usage.CompletionTokens
		t.Usage.CostUSD += mr.Usage.CostUSD
		for _, m := range mr.Usage.Models {
			if !slices.Contains(t.Usage.Models, m) {
				t.Usage.Models = append(t.Usage.Models, m)
			}
		}
		// Each model that did not answer, and the one that did instead,
		// for the operator (the reason may name the provider's URL).
		for _, f := range mr.Usage.Fallbacks {
			t.Usage.Fallbacks = append(t.Usage.Fallbacks, f)
			t.audit("model_fallback", map[string]any{"role": string(f.Role), "model": f.Ref, "kind": string(f.Kind), "error": f.Reason, "answered_by": f.To})
		}
	}
}

// strictUnmarshal decodes content, refusing fields the schema does not have,
// so that a model drifting from the schema is repaired rather than misread.
func strictUnmarshal(content string, v any) error {
	dec := json.NewDecoder(strings.NewReader(content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return errors.New("decode: trailing data after the JSON object")
	}
	return nil
}
