package actors

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/go-co-op/gocron/v2"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// Consolidator runs memory consolidation (spec 6.4) every
// memory.consolidation_interval_minutes. gocron owns the timing; its job
// only sends consolidateTick, so Receive never blocks. A pass runs in a
// tracked goroutine and passes never overlap: a tick that comes while one
// runs is dropped.
//
// A pass merges duplicates in every scope: active memories of the same
// type whose content is the same up to case and spacing, with the same
// trust level and taint. The oldest survives, with the tags, entity refs,
// causal refs and access counts of all; the others are deleted. Merging
// never crosses trust levels or taints, so no external-tainted duplicate
// can lend its tags to a verified memory (spec 5.12), and constitutional
// memories are never touched. The other steps of spec 6.4 wait for what
// they need: promotion to verified needs the owner's review cards, pruning
// and "frequently accessed" need access counts that retrieval does not
// record yet, and re-embedding needs embeddings.
//
// A scope may write its memory while a pass runs; a duplicate an agent
// updates meanwhile may come back, and the next pass merges it again.
//
// Supervision: it holds no state worth keeping; a restart schedules anew.
type Consolidator struct {
	d       *shared
	cron    gocron.Scheduler
	running bool
}

// consolidateTick starts a pass. Sender: the gocron job (or a test).
// Receiver: the Consolidator.
type consolidateTick struct{}

// consolidated reports a finished pass. Sender: the pass goroutine.
// Receiver: the Consolidator.
type consolidated struct {
	report consolidationReport
	err    error
}

// consolidationReport counts what one pass did.
type consolidationReport struct {
	Scopes  int `json:"scopes"`
	Merged  int `json:"merged"`  // groups of duplicates merged
	Deleted int `json:"deleted"` // duplicates deleted
}

func newConsolidator(d *shared) *Consolidator { return &Consolidator{d: d} }

// Receive handles the schedule and the passes.
func (c *Consolidator) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		c.schedule(ctx)
	case *consolidateTick:
		c.onTick(ctx)
	case *consolidated:
		c.onDone(m)
	case *actor.Stopping, *actor.Restarting:
		if c.cron != nil {
			if err := c.cron.Shutdown(); err != nil {
				c.d.Log.Warn().Err(err).Msg("stop memory consolidation schedule")
			}
			c.cron = nil
		}
	}
}

func (c *Consolidator) schedule(ctx actor.Context) {
	every := time.Duration(c.d.Config.Memory.ConsolidationIntervalMinutes) * time.Minute
	cron, err := gocron.NewScheduler()
	if err == nil {
		self, root := ctx.Self(), c.d.sys.Root
		_, err = cron.NewJob(gocron.DurationJob(every), gocron.NewTask(func() { root.Send(self, &consolidateTick{}) }))
	}
	if err != nil {
		c.d.Log.Error().Err(err).Msg("memory consolidation not scheduled")
		return
	}
	c.cron = cron
	cron.Start()
}

func (c *Consolidator) onTick(ctx actor.Context) {
	if c.running {
		return
	}
	self, root, db, now := ctx.Self(), c.d.sys.Root, c.d.DB, c.d.now()
	reply := func(m *consolidated) { root.Send(self, m) }
	c.running = c.d.tasks.Go("memory consolidation", func(ctx context.Context) {
		rep, err := consolidateMemory(ctx, db, now)
		reply(&consolidated{report: rep, err: err})
	}, func(err error) { reply(&consolidated{err: err}) })
}

func (c *Consolidator) onDone(m *consolidated) {
	c.running = false
	if m.err != nil {
		c.d.Log.Error().Err(m.err).Msg("memory consolidation failed; the next pass tries again")
	}
	if m.report.Merged == 0 && m.err == nil {
		return
	}
	data := map[string]any{"scopes": m.report.Scopes, "merged": m.report.Merged, "deleted": m.report.Deleted}
	if m.err != nil {
		data["error"] = m.err.Error()
	}
	c.d.sys.Root.Send(c.d.audit, &messages.AuditEvent{Time: c.d.now(), Event: "memory_consolidated", Data: data})
}

// consolidateMemory runs one pass over every scope. A scope that fails is
// reported and the others still run.
func consolidateMemory(ctx context.Context, db *persistence.DB, now time.Time) (consolidationReport, error) {
	var rep consolidationReport
	scopes, err := db.Memory().Scopes(ctx)
	if err != nil {
		return rep, fmt.Errorf("memory consolidation: %w", err)
	}
	var errs []error
	for _, scope := range scopes {
		merged, deleted, err := consolidateScope(ctx, db, scope, now)
		rep.Scopes++
		rep.Merged += merged
		rep.Deleted += deleted
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

// consolidateScope merges the duplicates of one scope: each survivor is
// written before its duplicates are deleted, so a pass cut short loses
// nothing.
func consolidateScope(ctx context.Context, db *persistence.DB, scope string, now time.Time) (merged, deleted int, err error) {
	mem := db.Memory()
	var items []messages.MemoryItem
	err = mem.All(ctx, scope, func(m messages.MemoryItem) error {
		if m.ReingestionTier == messages.TierActive && m.TrustLevel != messages.TrustConstitutional {
			items = append(items, m)
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("memory consolidation of %s: %w", scope, err)
	}
	for _, g := range planMerges(items, now) {
		if err := mem.Put(ctx, scope, g.keep); err != nil {
			return merged, deleted, fmt.Errorf("memory consolidation of %s: %w", scope, err)
		}
		merged++
		for _, id := range g.drop {
			if err := mem.Delete(ctx, scope, id); err != nil && !errors.Is(err, persistence.ErrNotFound) {
				return merged, deleted, fmt.Errorf("memory consolidation of %s: %w", scope, err)
			}
			deleted++
		}
	}
	return merged, deleted, nil
}

// mergeGroup is one set of duplicates: the item to keep, updated, and the
// ids to delete.
type mergeGroup struct {
	keep messages.MemoryItem
	drop []string
}

// dupKey identifies duplicates: same type, trust level and taint, and the
// same content up to case and spacing.
type dupKey struct {
	typ     messages.MemoryType
	trust   messages.TrustLevel
	taint   messages.TaintLevel
	content string
}

// planMerges groups items into duplicates and returns, for each group of
// two or more, the oldest item (ties: lowest id) carrying the union of the
// group's tags and references and the sum of its access counts, and the
// ids of the others. Groups come in the order of their survivors' ids.
func planMerges(items []messages.MemoryItem, now time.Time) []mergeGroup {
	groups := make(map[dupKey][]messages.MemoryItem)
	for _, m := range items {
		k := dupKey{typ: m.MemoryType, trust: m.TrustLevel, taint: m.Taint, content: strings.Join(strings.Fields(strings.ToLower(m.Content)), " ")}
		groups[k] = append(groups[k], m)
	}
	var out []mergeGroup
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		slices.SortFunc(g, func(a, b messages.MemoryItem) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.MemoryID, b.MemoryID))
		})
		keep := g[0]
		mg := mergeGroup{}
		for _, m := range g[1:] {
			keep.SemanticTags = union(keep.SemanticTags, m.SemanticTags)
			keep.EntityRefs = union(keep.EntityRefs, m.EntityRefs)
			keep.CausalRefs = union(keep.CausalRefs, m.CausalRefs)
			keep.AccessCount += m.AccessCount
			if m.LastAccessed != nil && (keep.LastAccessed == nil || m.LastAccessed.After(*keep.LastAccessed)) {
				keep.LastAccessed = m.LastAccessed
			}
			mg.drop = append(mg.drop, m.MemoryID)
		}
		// The survivor does not refer to itself or to the duplicates it
		// replaces; refs from other items to a duplicate are left dangling,
		// as after any delete.
		keep.CausalRefs = slices.DeleteFunc(keep.CausalRefs, func(id string) bool { return id == keep.MemoryID || slices.Contains(mg.drop, id) })
		keep.UpdatedAt = now
		mg.keep = keep
		out = append(out, mg)
	}
	slices.SortFunc(out, func(a, b mergeGroup) int { return strings.Compare(a.keep.MemoryID, b.keep.MemoryID) })
	return out
}

// union appends the strings of b missing from a, keeping a's order.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
