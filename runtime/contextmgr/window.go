package contextmgr

import (
	"regexp"

	"github.com/silas-ai/silas/messages"
)

// allZones lists the zones in their index order (see zoneIndex).
var allZones = [...]messages.ContextZone{messages.ZoneSystem, messages.ZoneChronicle, messages.ZoneMemory, messages.ZoneWorkspace}

func zoneIndex(z messages.ContextZone) int {
	switch z {
	case messages.ZoneSystem:
		return 0
	case messages.ZoneChronicle:
		return 1
	case messages.ZoneMemory:
		return 2
	case messages.ZoneWorkspace:
		return 3
	}
	return -1
}

// Window is the context of one scope: four zones of items, the scope's
// subscriptions, and the budget they are kept within. It is not safe for
// concurrent use; the scope actor owns it.
type Window struct {
	budget   Budget
	limits   Limits
	trivial  *regexp.Regexp
	profiles map[string]Profile
	profile  string

	zones [len(allZones)][]messages.ContextItem
	// state keeps each zone's totals and rendered blocks (zonestate.go);
	// every change to zones goes through Add, Replace, removeWhere or
	// maskObservations, which keep it current.
	state [len(allZones)]zoneState
	// last remembers the last Render (RenderStats).
	last renderStats
	// turn is the highest turn number seen (Add, EnforceBudget, Materialize).
	turn int

	subs    []*Subscription
	sources Sources
	// matTurn is the turn whose file materializations are cached.
	matTurn int

	// pending is the scorer request EnforceBudget issued and ApplyScores or
	// ApplyAggressive has not answered yet.
	pending *ScoreRequest
}

// New returns an empty window with budget b and the default limits of spec
// 3.5 (see [DefaultLimits]; change them with SetLimits).
func New(b Budget) *Window {
	re, err := compileTrivial("")
	if err != nil {
		panic(err) // DefaultTrivialPattern is a constant that compiles
	}
	return &Window{budget: b, limits: DefaultLimits(), trivial: re, matTurn: -1}
}

// Items returns the items of zone, oldest first. The slice must not be changed.
func (w *Window) Items(zone messages.ContextZone) []messages.ContextItem {
	zi := zoneIndex(zone)
	if zi < 0 {
		return nil
	}
	return w.zones[zi]
}

// Add appends it to its zone, counting its tokens when TokenCount is zero.
// Budget enforcement belongs to EnforceBudget (spec 5.1 step 5), which masks
// and drops before it evicts; Add only acts as a backstop: when the window
// would exceed Budget.Total it evicts, by the aggressive policy and never
// the current turn's chronicle, until usage is back under the eviction
// threshold, and returns those items, oldest first, for the caller to store
// to memory. Pinned items are never evicted.
func (w *Window) Add(it messages.ContextItem) []messages.ContextItem {
	if it.TokenCount == 0 {
		it.TokenCount = EstimateTokens(it.Content)
	}
	zi := zoneIndex(it.Zone)
	if zi < 0 {
		zi = zoneIndex(messages.ZoneWorkspace)
		it.Zone = messages.ZoneWorkspace
	}
	w.zones[zi] = append(w.zones[zi], it)
	w.noteAdded(zi, &w.zones[zi][len(w.zones[zi])-1])
	w.turn = max(w.turn, it.TurnNumber)
	if it.Zone == messages.ZoneSystem || w.Usage() <= w.budget.Total {
		return nil
	}
	var res EvictionResult
	w.aggressive(w.turn, nil, &res)
	return res.Evicted
}

// Replace swaps the item with it.CtxID for it (in its zone) and reports
// whether it was found. Use it for items replaced each turn, such as the
// persona directives of step 7.
func (w *Window) Replace(it messages.ContextItem) bool {
	if it.TokenCount == 0 {
		it.TokenCount = EstimateTokens(it.Content)
	}
	zi := zoneIndex(it.Zone)
	if zi < 0 {
		return false
	}
	for i := range w.zones[zi] {
		if w.zones[zi][i].CtxID == it.CtxID {
			w.noteRemoved(zi, &w.zones[zi][i])
			w.zones[zi][i] = it
			w.noteAdded(zi, &w.zones[zi][i])
			w.changedFrom(zi, i)
			return true
		}
	}
	return false
}

// removeWhere deletes the items of zone for which drop reports true, keeping
// order, and returns them.
func (w *Window) removeWhere(zi int, drop func(*messages.ContextItem) bool) []messages.ContextItem {
	items := w.zones[zi]
	var out []messages.ContextItem
	var removed []int
	kept := items[:0]
	for i := range items {
		if drop(&items[i]) {
			removed = append(removed, i)
			w.noteRemoved(zi, &items[i])
			out = append(out, items[i])
			continue
		}
		kept = append(kept, items[i])
	}
	clear(items[len(kept):])
	w.zones[zi] = kept
	w.removedAt(zi, removed)
	return out
}

// Remove deletes the item with ctxID from zone and reports whether it was
// there. Use it for per-turn items that no longer apply, such as a
// customer's context after their access level dropped.
func (w *Window) Remove(zone messages.ContextZone, ctxID string) bool {
	zi := zoneIndex(zone)
	if zi < 0 {
		return false
	}
	return len(w.removeWhere(zi, func(it *messages.ContextItem) bool { return it.CtxID == ctxID })) > 0
}
