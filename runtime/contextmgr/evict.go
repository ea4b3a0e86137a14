package contextmgr

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
)

// Tier says which eviction tier decided a result.
type Tier int

// Eviction tiers.
const (
	// TierNone: usage was under the eviction threshold after masking and
	// dropping; nothing was evicted.
	TierNone Tier = iota
	// TierHeuristic: the zone policies of spec 5.7 (oldest chronicle first,
	// lowest-relevance memory first, completed workspace first) evicted.
	TierHeuristic
	// TierScorer: the scorer's evict groups were applied (ApplyScores), or
	// EnforceBudget is waiting for them (Score is set).
	TierScorer
	// TierAggressive: the scorer fallback of spec 5.1.0 (ApplyAggressive).
	TierAggressive
)

// String returns the tier's audit name.
func (t Tier) String() string {
	switch t {
	case TierHeuristic:
		return "heuristic"
	case TierScorer:
		return "scorer"
	case TierAggressive:
		return "aggressive"
	}
	return "none"
}

// EvictionResult is what one eviction call did to the window.
type EvictionResult struct {
	// Turn is the turn the call ran for.
	Turn int
	// Tier is the tier that decided the evictions.
	Tier Tier
	// UsageBefore, UsageHeuristic and UsageAfter are the window's tokens
	// when the call began, after masking, dropping and expiring
	// subscriptions, and when it returned.
	UsageBefore, UsageHeuristic, UsageAfter int
	// Masked are the originals of the tool results masked by this call; the
	// window now holds their placeholders. Store them (Episodes).
	Masked []messages.ContextItem
	// Dropped are trivial acknowledgments removed; they are not worth
	// storing.
	Dropped []messages.ContextItem
	// Evicted are the items removed from the window, in eviction order.
	// Store them (Episodes).
	Evicted []messages.ContextItem
	// Deactivated are the ids of subscriptions deactivated (TTL, size cap,
	// or eviction); they cost zero tokens and can be reactivated.
	Deactivated []string
	// Unknown are block ids the scorer named that were not offered to it.
	Unknown []string
	// Score is set when the heuristic tier was not enough: usage stays above
	// the scorer threshold. The caller asks the scorer model (Prompt, schema
	// ScorerOutput, ScorerTimeout) if its Breaker allows, then calls
	// ApplyScores with the answer or ApplyAggressive on failure.
	Score *ScoreRequest
}

// SourceContextEvicted is the MemoryItem.SourceKind of episodes made from
// evicted or masked context.
const SourceContextEvicted = "context_evicted"

// Episodes turns the masked originals and the evicted items into memory
// episodes (spec 5.7): trust "working", taint preserved, external-tainted
// content passed through ScrubInjection, tagged "context_evicted" and the
// item's kind so memory_search finds them. Memory-zone items whose source is
// "memory:<id>" are already in memory and are skipped, as are subscriptions
// (deactivated, not lost).
func (r *EvictionResult) Episodes(newID func() string, scope string, now time.Time) []messages.MemoryItem {
	var out []messages.MemoryItem
	add := func(it *messages.ContextItem) {
		if strings.HasPrefix(it.Source, "memory:") || it.Kind == messages.KindSubscription {
			return
		}
		content := it.Content
		if it.Taint == messages.TaintExternal {
			content = ScrubInjection(content)
		}
		created := it.CreatedAt
		if created.IsZero() {
			created = now
		}
		session := scope
		out = append(out, messages.MemoryItem{
			MemoryID:        newID(),
			Content:         content,
			MemoryType:      messages.MemoryEpisode,
			ReingestionTier: messages.TierActive,
			TrustLevel:      messages.TrustWorking,
			Taint:           it.Taint,
			CreatedAt:       created,
			UpdatedAt:       now,
			SemanticTags:    []string{SourceContextEvicted, it.Kind},
			SessionID:       &session,
			SourceKind:      SourceContextEvicted,
		})
	}
	for i := range r.Masked {
		add(&r.Masked[i])
	}
	for i := range r.Evicted {
		add(&r.Evicted[i])
	}
	return out
}

// EnforceBudget runs the two-tier eviction of spec 5.7 for turn (step 5).
//
// Tier 1 always runs: it masks tool results older than
// observation_mask_after_turns turns, drops trivial acknowledgments of
// earlier turns and deactivates subscriptions not referenced for
// subscription_ttl_turns turns. Then:
//
//   - if usage is still above the scorer threshold, the heuristics were not
//     enough: it returns a ScoreRequest (res.Score, res.Tier == TierScorer)
//     and changes nothing more until ApplyScores or ApplyAggressive;
//   - otherwise it applies the zone policies: every zone is brought within
//     its budget, and if usage is still above the eviction threshold the
//     aggressive order continues until it is not (TierHeuristic).
//
// Pinned items and the chronicle of the current turn are never evicted.
// A scorer request pending from an earlier call is discarded.
func (w *Window) EnforceBudget(turn int) EvictionResult {
	w.turn = max(w.turn, turn)
	w.pending = nil
	res := EvictionResult{Turn: turn, UsageBefore: w.Usage()}
	w.maskObservations(turn, &res)
	w.dropTrivial(turn, &res)
	w.expireSubscriptions(turn, &res)
	res.UsageHeuristic = w.Usage()
	if res.UsageHeuristic > w.ScorerThreshold() {
		if req := w.scoreRequest(turn, res.UsageHeuristic); len(req.Groups) > 0 {
			w.pending = req
			res.Score = req
			res.Tier = TierScorer
			res.UsageAfter = res.UsageHeuristic
			return res
		}
	}
	if w.zonePolicies(turn, &res) {
		res.Tier = TierHeuristic
	}
	if w.aggressive(turn, nil, &res) {
		res.Tier = TierHeuristic
	}
	res.UsageAfter = w.Usage()
	return res
}

// PendingScore returns the scorer request awaiting an answer, or nil.
func (w *Window) PendingScore() *ScoreRequest { return w.pending }

// ApplyScores takes the scorer's answer to the pending request: it evicts
// the evict groups in the scorer's order, a group at a time, until usage is
// under the eviction threshold. Only blocks that were offered are evicted (a
// named id that was not offered is reported in Unknown); a block also named
// in a keep group stays. The zone policies then bring every zone within its
// budget and, if usage is still above the threshold, the aggressive order
// continues, sparing kept blocks as long as it can.
func (w *Window) ApplyScores(out ScorerOutput) (EvictionResult, error) {
	req := w.pending
	if req == nil {
		return EvictionResult{}, ErrNoScoreRequest
	}
	w.pending = nil
	res := EvictionResult{Turn: req.Turn, Tier: TierScorer, UsageBefore: w.Usage()}
	res.UsageHeuristic = res.UsageBefore
	offered := make(map[string]bool)
	for _, g := range req.Groups {
		for _, b := range g.Blocks {
			offered[b.ID] = true
		}
	}
	keep := make(map[string]bool)
	for _, g := range out.KeepGroups {
		for _, id := range g.BlockIDs {
			keep[id] = true
		}
	}
	target := w.EvictionThreshold()
	for _, g := range out.EvictGroups {
		if w.Usage() <= target {
			break
		}
		ids := make(map[string]bool, len(g.BlockIDs))
		for _, id := range g.BlockIDs {
			switch {
			case !offered[id]:
				res.Unknown = append(res.Unknown, id)
			case !keep[id]:
				ids[id] = true
			}
		}
		w.evictIDs(ids, &res)
	}
	w.zonePolicies(req.Turn, &res)
	w.aggressive(req.Turn, keep, &res)
	res.UsageAfter = w.Usage()
	return res, nil
}

// ApplyAggressive is the scorer fallback of spec 5.1.0 and 5.7: when the
// scorer timed out, failed, returned invalid output twice, or its breaker is
// open, it skips model eviction and evicts deterministically (zone policies,
// then oldest chronicle, lowest-relevance memory and completed workspace,
// from the zone furthest over its budget) until usage is under the eviction
// threshold. It answers the pending request, if any.
func (w *Window) ApplyAggressive() EvictionResult {
	turn := w.turn
	if w.pending != nil {
		turn = w.pending.Turn
	}
	w.pending = nil
	res := EvictionResult{Turn: turn, Tier: TierAggressive, UsageBefore: w.Usage()}
	res.UsageHeuristic = res.UsageBefore
	w.zonePolicies(turn, &res)
	w.aggressive(turn, nil, &res)
	res.UsageAfter = w.Usage()
	return res
}

// candidate is one evictable block: an item of zone zi or a subscription.
type candidate struct {
	zi     int
	id     string
	sub    *Subscription
	tokens int
}

// candidates returns the evictable blocks of zone zi in its policy order
// (spec 5.7): chronicle oldest first, sparing the current turn; memory
// lowest relevance first, then oldest; workspace completed results first,
// then active subscriptions, then the rest (plans), each oldest first.
// Pinned items and blocks in spare are left out.
func (w *Window) candidates(zi, turn int, spare map[string]bool) []candidate {
	if zi == 0 {
		return nil
	}
	items := w.zones[zi]
	var out []candidate
	for i := range items {
		it := &items[i]
		if it.Pinned || spare[it.CtxID] || (zi == 1 && it.TurnNumber >= turn) {
			continue
		}
		out = append(out, candidate{zi: zi, id: it.CtxID, tokens: cost(it)})
	}
	for _, s := range w.subs {
		if s.Active && zoneIndex(s.Zone) == zi && !spare[s.ID] {
			out = append(out, candidate{zi: zi, id: s.ID, sub: s, tokens: s.TokenCount})
		}
	}
	switch zi {
	case 2: // memory: lowest relevance first; stable keeps oldest first
		rel := make(map[string]float64, len(items))
		for i := range items {
			rel[items[i].CtxID] = items[i].Relevance
		}
		slices.SortStableFunc(out, func(a, b candidate) int { return cmp.Compare(rel[a.id], rel[b.id]) })
	case 3: // workspace: completed, then subscriptions, then active
		rank := make(map[string]int, len(items))
		for i := range items {
			switch items[i].Kind {
			case messages.KindExecutionResult, messages.KindToolResult:
				rank[items[i].CtxID] = 0
			default:
				rank[items[i].CtxID] = 2
			}
		}
		slices.SortStableFunc(out, func(a, b candidate) int {
			ra, rb := rank[a.id], rank[b.id]
			if a.sub != nil {
				ra = 1
			}
			if b.sub != nil {
				rb = 1
			}
			return cmp.Compare(ra, rb)
		})
	}
	return out
}

// evictionSlackPct is the share of a zone's budget that zone-policy
// eviction frees beyond what brings the zone within its budget. A full
// chronicle that evicted just enough would evict its oldest turn on every
// turn, and each eviction changes the start of the rendered context:
// providers' prompt caches would miss on every turn, and the window would
// render and store a sliver of episodes every turn. Evicting a share of
// the budget at once keeps the rendered prefix byte-stable for the many
// turns it takes to fill that room again. A fifth, not a tenth: with each
// block's delimiters counted (a short chat turn costs about 48 tokens), a
// tenth refilled in some 18 turns and the stable share of the rendered
// prompt at a full window fell to about 78% (BenchmarkTurnHistory); a
// fifth keeps it near 87%, at the price of a chronicle between 80 and 100%
// of its budget.
const evictionSlackPct = 0.20

// zonePolicies is tier-1 step 4: every zone over its budget evicts by its
// policy until within it, and a further evictionSlackPct of its budget.
// It reports whether anything was evicted.
func (w *Window) zonePolicies(turn int, res *EvictionResult) bool {
	evicted := false
	for zi := 1; zi < len(allZones); zi++ {
		limit := w.ZoneBudget(allZones[zi])
		used := w.ZoneTokens(allZones[zi])
		if used <= limit {
			continue
		}
		target := limit - int(float64(limit)*evictionSlackPct)
		ids := make(map[string]bool)
		for _, c := range w.candidates(zi, turn, nil) {
			if used <= target {
				break
			}
			used -= c.tokens
			ids[c.id] = true
		}
		if len(ids) > 0 {
			w.evictIDs(ids, res)
			evicted = true
		}
	}
	return evicted
}

// aggressive evicts until usage is under the eviction threshold, always
// from the zone whose usage is furthest over its budget (ties: chronicle,
// memory, workspace), taking that zone's next candidate. Blocks in spare
// are taken only when nothing else is left. It reports whether anything was
// evicted.
func (w *Window) aggressive(turn int, spare map[string]bool, res *EvictionResult) bool {
	target := w.EvictionThreshold()
	usage := w.Usage()
	if usage <= target {
		return false
	}
	var used, budget [len(allZones)]int
	var queue [len(allZones)][]candidate
	for zi := 1; zi < len(allZones); zi++ {
		used[zi] = w.ZoneTokens(allZones[zi])
		budget[zi] = w.ZoneBudget(allZones[zi])
		queue[zi] = w.candidates(zi, turn, spare)
	}
	ids := make(map[string]bool)
	for usage > target {
		best, bestRatio := -1, math.Inf(-1)
		for zi := 1; zi < len(allZones); zi++ {
			if len(queue[zi]) == 0 {
				continue
			}
			ratio := math.Inf(1)
			if budget[zi] > 0 {
				ratio = float64(used[zi]) / float64(budget[zi])
			}
			if ratio > bestRatio {
				best, bestRatio = zi, ratio
			}
		}
		if best < 0 {
			break
		}
		c := queue[best][0]
		queue[best] = queue[best][1:]
		ids[c.id] = true
		used[best] -= c.tokens
		usage -= c.tokens
	}
	if len(ids) > 0 {
		w.evictIDs(ids, res)
	}
	if usage > target && len(spare) > 0 {
		w.aggressive(turn, nil, res)
	}
	return len(ids) > 0
}

// evictIDs removes the items with those ids from every non-system zone
// (pinned items excepted) into res.Evicted and deactivates the
// subscriptions with those ids.
func (w *Window) evictIDs(ids map[string]bool, res *EvictionResult) {
	if len(ids) == 0 {
		return
	}
	for zi := 1; zi < len(allZones); zi++ {
		res.Evicted = append(res.Evicted, w.removeWhere(zi, func(it *messages.ContextItem) bool {
			return ids[it.CtxID] && !it.Pinned
		})...)
	}
	for _, s := range w.subs {
		if s.Active && ids[s.ID] {
			s.Active = false
			res.Deactivated = append(res.Deactivated, s.ID)
		}
	}
}
