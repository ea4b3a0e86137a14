package actors

import (
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/pipeline"
)

// Streaming answers (beyond the spec): while the proxy or the planner
// writes its answer, the text of the answer's message is sent to the
// scope's connections as `message_delta` events, and the `message` event
// that follows the commit is unchanged.
//
// Only a turn whose gate set has no policy-lane gate on
// every_agent_response streams: such a gate must see the whole answer
// before the user sees any of it (it may block it, rewrite it or hold it
// for approval), and no gate kind today can judge a prefix (a PII or
// secret check can match across the cut; an llm, script or approval gate
// judges the answer as a whole). Quality-lane output gates are advisory
// and never change the answer, so they do not stop a stream. The default
// system gates include pii_scrub, so by default nothing streams and the
// channels show their typing indicator until the answer.
//
// Where the streamed text and the answer differ, the answer wins: a
// client replaces the preview with the `message`. That happens when a
// model call starts over (a retry of a dropped stream, the next model of
// a fallback chain, the repair call of an invalid structured answer): the
// next delta carries reset, and the new answer streams from its start.

// streamDelta carries the next piece of the answer a turn's agent loop is
// streaming. Sender: the AgentLoop, from its model call's goroutine.
// Receiver: its Scope, which relays it as a `message_delta` event. No
// reply. Pieces of one call arrive in order, before the call's stepDone.
type streamDelta struct {
	turnID string
	text   string
	reset  bool
}

// Coalescing: the model sends a chunk every few characters; the relay
// sends at most one delta per streamInterval (or when streamFlushBytes
// wait), so that a slow client's send queue is not filled with events.
const (
	streamInterval   = 50 * time.Millisecond
	streamFlushBytes = 1024
)

// answerPath is where the user-facing text sits in a structured answer of
// schema; nil for schemas that are no answer to the user.
func answerPath(schema string) []string {
	switch schema {
	case llm.SchemaRouteDecision:
		return []string{"response", "message"}
	case llm.SchemaAgentResponse:
		return []string{"message"}
	}
	return nil
}

// streamAllowed reports whether call's answer may be shown to the user as
// the model writes it: an answer of the proxy or the planner, in a turn
// that no gate has blocked, whose gate set holds no policy-lane output
// gate. A turn without a compiled gate set (it did not compile, and the
// turn is blocked) does not stream.
func streamAllowed(t *pipeline.Turn, call *pipeline.ModelCall) bool {
	if call.Role != pipeline.AgentProxy && call.Role != pipeline.AgentPlanner {
		return false
	}
	return answerPath(call.Schema) != nil && streamableTurn(t)
}

func streamableTurn(t *pipeline.Turn) bool {
	return !t.Blocked && t.Gates != nil && !holdsOutput(t.Gates)
}

// holdsOutput reports whether a policy-lane gate checks every agent
// response: the answer must then be whole before anyone sees it.
func holdsOutput(g *gates.ActiveSet) bool {
	return len(g.Matching(messages.LanePolicy, messages.TriggerEveryAgentResponse, 0)) > 0
}

// onStreamDelta relays a piece of the current turn's answer to the
// connections attached (or, when none is, to the sender's), as the
// tell_user interim does. The gate check is repeated here, where the text
// leaves: a delta of a turn that may not stream is dropped, as is one
// that comes after the turn left the route stage.
func (s *Scope) onStreamDelta(m *streamDelta) {
	r := s.current
	if r == nil || r.turn.ID != m.turnID || r.turn.Stage() != "route" || !streamableTurn(r.turn) {
		return
	}
	ev := &messages.MessageDeltaEvent{Type: messages.EventMessageDelta, ReplyTo: r.turn.In.MessageID, Delta: m.text, Reset: m.reset}
	for _, sink := range s.sinks {
		sink.Send(ev)
	}
	if len(s.sinks) == 0 && r.msg.Sink != nil {
		r.msg.Sink.Send(ev)
	}
}

// streamRelay turns the Deltas of one agent call's model calls into
// streamDelta messages: it extracts the answer's text from the structured
// JSON being written, coalesces it, and marks a reset when a model call
// starts over after text was shown. It runs on the call's goroutine only.
type streamRelay struct {
	x    *llm.TextExtractor
	send func(text string, reset bool)
	now  func() time.Time

	pending strings.Builder
	reset   bool // a reset waits to go out with the next text
	shown   bool // text went out since the last reset
	last    time.Time
}

// newStreamRelay returns a relay for answers of schema, or nil when schema
// is no answer to the user.
func newStreamRelay(schema string, now func() time.Time, send func(text string, reset bool)) *streamRelay {
	path := answerPath(schema)
	if path == nil {
		return nil
	}
	return &streamRelay{x: llm.NewTextExtractor(path...), send: send, now: now}
}

// on is the request's llm.Request.Stream.
func (r *streamRelay) on(d llm.Delta) {
	if d.Start {
		r.x.Reset()
		r.pending.Reset()
		if r.shown {
			r.reset, r.shown = true, false
		}
		return
	}
	r.pending.WriteString(r.x.Write(d.Content))
	if r.pending.Len() == 0 {
		return
	}
	if r.pending.Len() >= streamFlushBytes || r.now().Sub(r.last) >= streamInterval {
		r.flush()
	}
}

// flush sends what waits; the agent loop calls it when the call ends, so
// that the deltas add up to the whole answer before its result goes out.
func (r *streamRelay) flush() {
	if r == nil || (r.pending.Len() == 0 && !r.reset) {
		return
	}
	r.send(r.pending.String(), r.reset)
	r.shown = r.shown || r.pending.Len() > 0
	r.reset = false
	r.pending.Reset()
	r.last = r.now()
}

// forward returns the Scope-bound sender of a relay for the agent call m.
func forward(root *actor.RootContext, scope *actor.PID, turnID string) func(string, bool) {
	return func(text string, reset bool) {
		root.Send(scope, &streamDelta{turnID: turnID, text: text, reset: reset})
	}
}
