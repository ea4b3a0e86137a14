package pipeline

import (
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/taint"
)

// await is every request a stage hands the caller. Before a model call it
// records the taint of the context the model is shown, so that what the
// model writes back carries no more trust than what it read (spec 5.12).
func (t *Turn) await(e *Env, req any) any {
	if _, ok := req.(*ModelCall); ok {
		seen := e.Window.Taint()
		if t.seen != "" {
			seen = taint.Derived(t.seen, seen)
		}
		t.seen = seen
	}
	return req
}

// DerivedTaint is the taint of what the turn's agents wrote (memory ops,
// the answer): the weakest of the message's taint and of everything every
// model call of the turn was shown, tool and work results, memories and
// subscriptions included. An owner-signed message whose context held an
// external tool result yields external content.
func (t *Turn) DerivedTaint() messages.TaintLevel {
	if t.seen == "" {
		return t.Taint
	}
	return taint.Derived(t.Taint, t.seen)
}
