package contextmgr

import (
	"strconv"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
)

// ScorerSchema is the structured-output name of the scorer call; its JSON
// schema is runtime/llm/schemas/ScorerOutput.json.
const ScorerSchema = "ScorerOutput"

// ScorerTimeout is the hard timeout of one scorer call (spec 5.7). The
// caller enforces it; on expiry it calls Breaker.Failure and ApplyAggressive.
const ScorerTimeout = 2 * time.Second

// ScorerGroup is one group of blocks the scorer keeps or evicts together.
type ScorerGroup struct {
	Reason   string   `json:"reason"`
	BlockIDs []string `json:"block_ids"`
}

// ScorerOutput is the scorer model's structured answer (spec 5.7). Its
// shape is exactly the ScorerOutput schema: both lists are required.
type ScorerOutput struct {
	KeepGroups  []ScorerGroup `json:"keep_groups"`
	EvictGroups []ScorerGroup `json:"evict_groups"`
}

// ScoreBlock is one context block offered to the scorer.
type ScoreBlock struct {
	// ID is the block id the scorer answers with: a ctx_id, or a sub_id
	// for a subscription.
	ID     string
	Zone   messages.ContextZone
	Kind   string
	Turn   int
	Tokens int
	// Preview is the first line of the content, at most PreviewBytes
	// long; external-tainted content is passed through ScrubInjection.
	Preview string
}

// ScoreGroup is a set of blocks that belong together in the harness's view
// (one turn of the chronicle; one memory; one workspace item), offered as a
// hint: the scorer may group differently.
type ScoreGroup struct {
	Label  string
	Blocks []ScoreBlock
}

// PreviewBytes caps a block preview.
const PreviewBytes = 160

// recentTurns is how many of the latest turns the scorer prompt quotes.
const recentTurns = 3

// ScoreRequest asks the caller to run the scorer model over the evictable
// blocks of a window whose usage the heuristic tier could not bring under
// the scorer threshold. It is a value: the window keeps its own copy and
// acts on it in ApplyScores.
type ScoreRequest struct {
	// Turn is the turn EnforceBudget ran for.
	Turn int
	// Goal is the current goal (spec 5.7 current_goal); empty unless the
	// caller sets it before Prompt.
	Goal string
	// Usage is the window's tokens; Target the eviction threshold to get
	// under.
	Usage, Target int
	// Recent are the chronicle blocks of the last three turns, rendered.
	Recent string
	// Groups are the evictable blocks, chronicle by turn (oldest first),
	// then memory, then workspace.
	Groups []ScoreGroup
}

// Prompt renders the scorer prompt of spec 5.7 for the request.
func (r *ScoreRequest) Prompt() string {
	var b strings.Builder
	b.WriteString("You are a context relevance scorer. Given the current conversation goal\n")
	b.WriteString("and recent turns, identify which context groups are least valuable.\n\n")
	b.WriteString("Current goal: ")
	if r.Goal == "" {
		b.WriteString("(not stated)")
	} else {
		b.WriteString(r.Goal)
	}
	b.WriteString("\nRecent turns (last 2-3):\n")
	b.WriteString(r.Recent)
	b.WriteString("\nThe context holds ")
	b.WriteString(strconv.Itoa(r.Usage))
	b.WriteString(" tokens and must shrink below ")
	b.WriteString(strconv.Itoa(r.Target))
	b.WriteString(".\n\nContext blocks to evaluate:\n")
	for _, g := range r.Groups {
		b.WriteString("## ")
		b.WriteString(g.Label)
		b.WriteByte('\n')
		for _, bl := range g.Blocks {
			b.WriteString("- id=")
			b.WriteString(bl.ID)
			b.WriteString(" | ")
			b.WriteString(string(bl.Zone))
			b.WriteString(" | ")
			b.WriteString(bl.Kind)
			b.WriteString(" | turn ")
			b.WriteString(strconv.Itoa(bl.Turn))
			b.WriteString(" | ")
			b.WriteString(strconv.Itoa(bl.Tokens))
			b.WriteString(" tokens | ")
			b.WriteString(strconv.Quote(bl.Preview))
			b.WriteByte('\n')
		}
	}
	b.WriteString(`
Output two lists (schema-enforced by ` + "`ScorerOutput`" + `):
- "keep_groups": [{"reason": "...", "block_ids": ["...", ...]}, ...]
- "evict_groups": [{"reason": "...", "block_ids": ["...", ...]}, ...]

Group related blocks together. A block that gives meaning to other blocks
should stay with them. Prefer evicting coherent groups over orphaning blocks.
List evict_groups least valuable first.
`)
	return b.String()
}

// preview is the first line of content, cut at PreviewBytes on a rune
// boundary, scrubbed when external.
func preview(content string, taint messages.TaintLevel) string {
	if taint == messages.TaintExternal {
		content = ScrubInjection(content)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(content), "\n")
	return truncate(line, PreviewBytes)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut
// with an ellipsis.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func runeStart(c byte) bool { return c&0xC0 != 0x80 }

// scoreRequest builds the request for the current evictable blocks.
func (w *Window) scoreRequest(turn, usage int) *ScoreRequest {
	req := &ScoreRequest{Turn: turn, Usage: usage, Target: w.EvictionThreshold()}
	var recent strings.Builder
	chron := w.zones[zoneIndex(messages.ZoneChronicle)]
	for i := range chron {
		if chron[i].TurnNumber > turn-recentTurns {
			writeBlock(&recent, &chron[i])
		}
	}
	req.Recent = recent.String()

	byID := make(map[string]*messages.ContextItem)
	for zi := 1; zi < len(allZones); zi++ {
		for i := range w.zones[zi] {
			byID[w.zones[zi][i].CtxID] = &w.zones[zi][i]
		}
	}
	for zi := 1; zi < len(allZones); zi++ {
		var turnGroup *ScoreGroup
		for _, c := range w.candidates(zi, turn, nil) {
			var bl ScoreBlock
			label := ""
			if c.sub != nil {
				bl = ScoreBlock{ID: c.sub.ID, Zone: c.sub.Zone, Kind: "subscription:" + c.sub.Type, Turn: c.sub.TurnCreated, Tokens: c.tokens, Preview: truncate(c.sub.Target, PreviewBytes)}
				label = "subscription " + c.sub.Target
			} else {
				it := byID[c.id]
				bl = ScoreBlock{ID: it.CtxID, Zone: it.Zone, Kind: it.Kind, Turn: it.TurnNumber, Tokens: cost(it), Preview: preview(it.Content, it.Taint)}
				label = string(it.Zone) + " " + it.Kind + " | turn " + strconv.Itoa(it.TurnNumber)
			}
			if zi == zoneIndex(messages.ZoneChronicle) && c.sub == nil {
				// The chronicle is offered a turn at a time (candidates are
				// oldest first, so a turn's blocks are adjacent).
				if turnGroup == nil || turnGroup.Blocks[0].Turn != bl.Turn {
					req.Groups = append(req.Groups, ScoreGroup{Label: "turn " + strconv.Itoa(bl.Turn)})
					turnGroup = &req.Groups[len(req.Groups)-1]
				}
				turnGroup.Blocks = append(turnGroup.Blocks, bl)
				continue
			}
			turnGroup = nil
			req.Groups = append(req.Groups, ScoreGroup{Label: label, Blocks: []ScoreBlock{bl}})
		}
	}
	return req
}

// Circuit breaker settings of spec 5.7.
const (
	// BreakerThreshold is how many consecutive scorer failures open the
	// breaker.
	BreakerThreshold = 3
	// BreakerCooldown is how long an open breaker refuses scorer calls.
	BreakerCooldown = 5 * time.Minute
)

// Breaker is the scorer's circuit breaker (spec 5.7), a value the scope
// keeps: it opens after BreakerThreshold consecutive failures or timeouts
// and refuses calls for BreakerCooldown. After the cool-down one call is let
// through (half-open): a success closes the breaker, a failure opens it for
// another cool-down. The zero value is closed.
type Breaker struct {
	failures  int
	openUntil time.Time
}

// Allow reports whether a scorer call may be made at now. When it returns
// false the caller applies ApplyAggressive instead.
func (b *Breaker) Allow(now time.Time) bool {
	return b.failures < BreakerThreshold || !now.Before(b.openUntil)
}

// Success records a valid scorer answer and closes the breaker.
func (b *Breaker) Success() {
	b.failures = 0
	b.openUntil = time.Time{}
}

// Failure records a failed, timed-out or invalid scorer call at now.
func (b *Breaker) Failure(now time.Time) {
	b.failures++
	if b.failures >= BreakerThreshold {
		b.openUntil = now.Add(BreakerCooldown)
	}
}

// Open reports whether the breaker refuses calls at now.
func (b *Breaker) Open(now time.Time) bool { return !b.Allow(now) }
