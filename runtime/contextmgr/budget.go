package contextmgr

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/silas-ai/silas/messages"
)

// MaxAllocable is the largest share of the allocable budget a profile may
// give its three zones together (spec 3.5); the rest is headroom.
const MaxAllocable = 0.80

// Budget is the token budget of a window under one profile (spec 3.5): the
// window size, the system-zone cap and the profile's zone shares.
type Budget struct {
	Total        int
	SystemMax    int
	ChroniclePct float64
	MemoryPct    float64
	WorkspacePct float64
}

// Profile is a named zone allocation (spec 3.5 ContextProfile).
type Profile struct {
	ChroniclePct float64
	MemoryPct    float64
	WorkspacePct float64
}

// Validate enforces the ContextProfile rules of spec 3.5: each share in
// [0, 1] and the three together at most [MaxAllocable].
func (p Profile) Validate() error {
	for _, f := range [...]struct {
		name string
		v    float64
	}{{"chronicle_pct", p.ChroniclePct}, {"memory_pct", p.MemoryPct}, {"workspace_pct", p.WorkspacePct}} {
		if f.v < 0 || f.v > 1 {
			return fmt.Errorf("%w: %s = %g, want 0..1", ErrInvalidLimits, f.name, f.v)
		}
	}
	if sum := p.ChroniclePct + p.MemoryPct + p.WorkspacePct; sum > MaxAllocable+1e-9 {
		return fmt.Errorf("%w: zone shares sum to %g, want at most %g", ErrInvalidLimits, sum, MaxAllocable)
	}
	return nil
}

// DefaultTrivialPattern is the trivial-acknowledgment rule of spec 5.7,
// matched case-insensitively against the body of a chronicle message (its
// "[taint] sender: " or "Silas: " prefix removed) that is under
// [TrivialMaxTokens] tokens. It extends the spec's default list
// (ok, thanks, got it, sure, yes, no, 👍) with common spellings of the same
// acknowledgments: okay, k, thank you, thx, ty, cool, great, perfect, yep,
// yeah, nope, 👌 and 🙏.
const DefaultTrivialPattern = `^(ok|okay|k|thanks|thank you|thx|ty|got it|sure|yes|yep|yeah|no|nope|cool|great|perfect|👍|👌|🙏)\s*[.!?]*$`

// TrivialMaxTokens is the size under which a message may be dropped as a
// trivial acknowledgment (spec 5.7: "< 20 tokens").
const TrivialMaxTokens = 20

// Limits are the profile-independent settings of spec 3.5 TokenBudget.
type Limits struct {
	// EvictionThresholdPct is the usage share of Budget.Total above which
	// eviction runs, and below which it stops. Default 0.80.
	EvictionThresholdPct float64
	// ScorerThresholdPct is the usage share above which, after the
	// heuristic tier, the scorer model is asked. Default 0.90.
	ScorerThresholdPct float64
	// SkillMetadataBudgetPct caps unactivated skill metadata as a share of
	// Budget.Total. Default 0.02.
	SkillMetadataBudgetPct float64
	// MaxSubscriptionTokens caps one materialized subscription; a larger
	// one is deactivated with a warning. Default 2000.
	MaxSubscriptionTokens int
	// SubscriptionTTLTurns is how many turns without a reference
	// deactivate a subscription. Default 10.
	SubscriptionTTLTurns int
	// ObservationMaskAfterTurns: tool results with turn_number below
	// current turn minus this are masked. Default 5; 0 masks every tool
	// result of an earlier turn.
	ObservationMaskAfterTurns int
	// TrivialPattern is the trivial-acknowledgment regular expression;
	// empty means DefaultTrivialPattern. It is matched case-insensitively.
	TrivialPattern string
}

// DefaultLimits returns the defaults of spec 3.5.
func DefaultLimits() Limits {
	return Limits{
		EvictionThresholdPct:      0.80,
		ScorerThresholdPct:        0.90,
		SkillMetadataBudgetPct:    0.02,
		MaxSubscriptionTokens:     2000,
		SubscriptionTTLTurns:      10,
		ObservationMaskAfterTurns: 5,
	}
}

// Validate checks the ranges of spec 3.5 and compiles nothing.
func (l Limits) Validate() error {
	switch {
	case l.EvictionThresholdPct <= 0 || l.EvictionThresholdPct > 1:
		return fmt.Errorf("%w: eviction_threshold_pct = %g, want (0, 1]", ErrInvalidLimits, l.EvictionThresholdPct)
	case l.ScorerThresholdPct < l.EvictionThresholdPct || l.ScorerThresholdPct > 1:
		return fmt.Errorf("%w: scorer_threshold_pct = %g, want eviction_threshold_pct..1", ErrInvalidLimits, l.ScorerThresholdPct)
	case l.SkillMetadataBudgetPct < 0 || l.SkillMetadataBudgetPct > 1:
		return fmt.Errorf("%w: skill_metadata_budget_pct = %g, want 0..1", ErrInvalidLimits, l.SkillMetadataBudgetPct)
	case l.MaxSubscriptionTokens < 1:
		return fmt.Errorf("%w: max_subscription_tokens = %d, want at least 1", ErrInvalidLimits, l.MaxSubscriptionTokens)
	case l.SubscriptionTTLTurns < 1:
		return fmt.Errorf("%w: subscription_ttl_turns = %d, want at least 1", ErrInvalidLimits, l.SubscriptionTTLTurns)
	case l.ObservationMaskAfterTurns < 0:
		return fmt.Errorf("%w: observation_mask_after_turns = %d, want at least 0", ErrInvalidLimits, l.ObservationMaskAfterTurns)
	}
	return nil
}

// defaultTrivial is DefaultTrivialPattern compiled once: a Regexp is safe
// for concurrent use and holds no state of its own, so every window shares
// it instead of holding about 6 KB of compiled program per scope.
var defaultTrivial = regexp.MustCompile("(?i)" + DefaultTrivialPattern)

func compileTrivial(pattern string) (*regexp.Regexp, error) {
	if pattern == "" || pattern == DefaultTrivialPattern {
		return defaultTrivial, nil
	}
	re, err := regexp.Compile("(?i)" + pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: trivial pattern: %w", ErrInvalidLimits, err)
	}
	return re, nil
}

// SetLimits replaces the profile-independent settings. On error the window
// keeps its previous limits.
func (w *Window) SetLimits(l Limits) error {
	if err := l.Validate(); err != nil {
		return err
	}
	re := w.trivial
	if re == nil || l.TrivialPattern != w.limits.TrivialPattern {
		// Compiling is the costly part of a new scope's window: skip it
		// when the pattern did not change.
		var err error
		if re, err = compileTrivial(l.TrivialPattern); err != nil {
			return err
		}
	}
	changed := re != w.trivial
	w.limits, w.trivial = l, re
	if changed {
		w.recount(chronicleZone) // what counts as trivial changed
	}
	return nil
}

// Limits returns the window's profile-independent settings.
func (w *Window) Limits() Limits { return w.limits }

// SetProfiles installs the profile registry (config context.profiles) that
// [Window.SetProfile] selects from. Every profile is validated; on error the
// previous registry stays.
func (w *Window) SetProfiles(profiles map[string]Profile) error {
	names := make([]string, 0, len(profiles))
	for name := range profiles {
		names = append(names, name)
	}
	sort.Strings(names)
	reg := make(map[string]Profile, len(profiles))
	for _, name := range names {
		if err := profiles[name].Validate(); err != nil {
			return fmt.Errorf("profile %q: %w", name, err)
		}
		reg[name] = profiles[name]
	}
	w.profiles = reg
	return nil
}

// SetProfile switches the zone shares to the registered profile name (spec
// 5.7 set_profile, called after routing at step 7). Total and SystemMax are
// kept. A zone that shrank below its usage is brought back by the next
// [Window.EnforceBudget]. It returns the name of the previous profile for the
// audit record; for an unknown name it returns [ErrUnknownProfile] and
// changes nothing.
func (w *Window) SetProfile(name string) (previous string, err error) {
	p, ok := w.profiles[name]
	if !ok {
		return w.profile, fmt.Errorf("set profile %q: %w", name, ErrUnknownProfile)
	}
	previous = w.profile
	w.profile = name
	w.budget.ChroniclePct, w.budget.MemoryPct, w.budget.WorkspacePct = p.ChroniclePct, p.MemoryPct, p.WorkspacePct
	return previous, nil
}

// Profile returns the name of the profile last selected with SetProfile,
// or "" when the budget was set directly.
func (w *Window) Profile() string { return w.profile }

// Budget returns the window's current budget.
func (w *Window) Budget() Budget { return w.budget }

// SetBudget switches the window to another profile's budget; the next
// EnforceBudget brings the zones within it. It clears the profile name.
func (w *Window) SetBudget(b Budget) {
	w.budget = b
	w.profile = ""
}

// ZoneBudget returns the token budget of zone under the headroom math of
// spec 3.5: zones share what the system zone leaves of the total,
// floor(allocable * pct). The system zone's budget is SystemMax.
func (w *Window) ZoneBudget(zone messages.ContextZone) int {
	if zone == messages.ZoneSystem {
		return w.budget.SystemMax
	}
	pct := 0.0
	switch zone {
	case messages.ZoneChronicle:
		pct = w.budget.ChroniclePct
	case messages.ZoneMemory:
		pct = w.budget.MemoryPct
	case messages.ZoneWorkspace:
		pct = w.budget.WorkspacePct
	}
	return int(float64(w.allocable()) * pct)
}

// allocable is spec 3.5 step 2: max(total - min(system, system_max), 0).
func (w *Window) allocable() int {
	system := min(w.ZoneTokens(messages.ZoneSystem), w.budget.SystemMax)
	return max(w.budget.Total-system, 0)
}

// Headroom is spec 3.5 step 4: what the allocable budget keeps beyond the
// three zone budgets.
func (w *Window) Headroom() int {
	return w.allocable() - w.ZoneBudget(messages.ZoneChronicle) - w.ZoneBudget(messages.ZoneMemory) - w.ZoneBudget(messages.ZoneWorkspace)
}

// ZoneTokens returns the tokens zone holds now, active subscriptions
// included (deactivated ones cost zero).
func (w *Window) ZoneTokens(zone messages.ContextZone) int {
	zi := zoneIndex(zone)
	if zi < 0 {
		return 0
	}
	n := w.state[zi].tokens
	for _, s := range w.subs {
		if s.Active && s.Zone == zone {
			n += s.TokenCount
		}
	}
	return n
}

// Usage returns the tokens the whole window holds, all four zones.
func (w *Window) Usage() int {
	n := 0
	for _, z := range allZones {
		n += w.ZoneTokens(z)
	}
	return n
}

// threshold is floor(total * pct).
func (w *Window) threshold(pct float64) int { return int(float64(w.budget.Total) * pct) }

// EvictionThreshold is the usage in tokens above which eviction runs.
func (w *Window) EvictionThreshold() int { return w.threshold(w.limits.EvictionThresholdPct) }

// ScorerThreshold is the usage in tokens above which, after the heuristic
// tier, the scorer is asked.
func (w *Window) ScorerThreshold() int { return w.threshold(w.limits.ScorerThresholdPct) }
