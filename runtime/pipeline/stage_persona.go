package pipeline

import (
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/personality"
)

// personaCtxID is the id of a scope's persona directives item: one per
// window, replaced every turn.
const personaCtxID = "persona-directives"

// SavePersona asks for the scope's persona state and the turn's persona
// events to be stored. The result carries no value.
type SavePersona struct {
	State  messages.PersonaState
	Events []messages.PersonaEvent
}

// injectPersona renders the scope's persona directives and puts them in the
// system zone before the proxy is asked (spec 5.1 step 7, spec 5.1.4's
// pre-agent hook). A failure falls back to neutral and never blocks a turn.
func injectPersona(t *Turn, e *Env) {
	if e.Persona == nil || e.PersonaState == nil || !e.Persona.Enabled() {
		return
	}
	st, d, memo, err := e.Persona.BeginTurnMemo(*e.PersonaState, personality.Turn{Text: t.In.Text}, t.Now, e.PersonaMemo)
	*e.PersonaState, e.PersonaMemo = st, memo
	if err != nil {
		t.audit("persona_fallback", map[string]any{"error": err.Error()})
	}
	if d.Text == "" {
		return
	}
	it := messages.ContextItem{
		CtxID: personaCtxID, Zone: messages.ZoneSystem, Content: d.Text, CreatedAt: t.Now,
		TurnNumber: t.Number, Source: messages.DirectivesSource, Taint: messages.TaintOwner,
		Kind: messages.KindSystem, Relevance: 1, Pinned: true,
	}
	if !e.Window.Replace(it) {
		e.Window.Add(it)
	}
}

// runPersonaUpdate applies the turn's outcome to the persona's mood (spec
// 5.1 step 15); the state is stored only when an event changed it, since
// decay is recomputed from the elapsed time on every read.
func runPersonaUpdate(t *Turn, e *Env) Effect {
	if e.Persona == nil || e.PersonaState == nil || !e.Persona.Enabled() || !t.Blocked {
		return next
	}
	st, ev, err := e.Persona.ApplyEvent(*e.PersonaState, "blocked", true,
		personality.Cause{EventID: e.NewID(), Source: messages.PersonaSourceRuntime, At: t.Now})
	if err != nil {
		t.audit("persona_event_failed", map[string]any{"event": "blocked", "error": err.Error()})
		return next
	}
	*e.PersonaState = e.Persona.Decay(st, t.Now)
	return Effect{Await: &SavePersona{State: *e.PersonaState, Events: []messages.PersonaEvent{ev}}}
}

func resumePersonaUpdate(t *Turn, _ *Env, r Result) Effect {
	if r.Err != nil {
		t.audit("persona_save_failed", map[string]any{"error": r.Err.Error()})
	}
	return next
}
