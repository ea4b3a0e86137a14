package contextmgr

import "github.com/silas-ai/silas/messages"

// Taint returns the weakest taint of everything a model is shown by System
// and Render: every item of every zone (an unset taint counts as external)
// and every active, materialized subscription, which counts as external
// because the window does not know who wrote a subscribed file or the
// memories a query returned. What a model writes after reading the window
// (memory ops, its answer) carries no more trust than this (spec 5.12).
func (w *Window) Taint() messages.TaintLevel {
	for _, s := range w.subs {
		if s.Active && s.matTurn >= 0 {
			return messages.TaintExternal
		}
	}
	t := messages.TaintOwner
	for zi := range w.zones {
		for i := range w.zones[zi] {
			switch renderedTaint(w.zones[zi][i].Taint) {
			case messages.TaintExternal:
				return messages.TaintExternal
			case messages.TaintAuth:
				t = messages.TaintAuth
			}
		}
	}
	return t
}
