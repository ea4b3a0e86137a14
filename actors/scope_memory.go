package actors

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/contextmgr"
	"github.com/silas-ai/silas/runtime/embed"
	"github.com/silas-ai/silas/runtime/memory"
)

// The memory retriever (spec 6.3). A query's strategy decides which
// rankings it runs and fuses (runtime/memory.Fuse, reciprocal rank fusion,
// bounded by the query's max_results and max_tokens):
//
//   - semantic, the strategy of auto-retrieval (step 4) and of the proxy's
//     memory_search: keyword (BM25) and semantic (the nearest embeddings,
//     above silas.memory.semantic_min_similarity) rankings of the query,
//     and when the query names a time ("yesterday", "last week", "in
//     March", an ISO date; runtime/memory.ParseWindow) the items created
//     then, newest first; each of these admits items. The time phrase is
//     cut from the text the keyword and semantic searches see. The session
//     ranking (the items found, of the scope's session, newest first)
//     re-ranks them at half weight, so that of two equal matches the
//     recent one comes first, without bringing back every recent item
//     whatever the query. Only indexed (active-lane) items are found: the
//     raw lane never comes back on its own (spec 6.1).
//   - keyword: the BM25 ranking only.
//   - temporal: the items created in the window the query names, raw lane
//     included, the rest of the query's words and meaning ranking them;
//     without a window, the newest items.
//   - session: the scope's newest items, raw lane included.
//
// Semantic search needs an embedding model (silas.memory.embedding_model)
// and its vectors; without one, or while the provider fails (the failure
// is logged), the other rankings answer alone and the turn goes on.

// Retrieval tuning.
const (
	// listDepthFactor: each ranking fused reads this many times the
	// results asked for (at least minListDepth), so that agreement
	// between rankings can lift an item that no single one puts first.
	listDepthFactor = 4
	minListDepth    = 20
	// sessionWeight is the weight of the session ranking in the fusion.
	sessionWeight = 0.5
	// queryEmbedTimeout bounds embedding a query: a turn waits for it.
	queryEmbedTimeout = 5 * time.Second
)

// queryMemory answers memory queries (spec 5.1 steps 4 and 9, the proxy's
// memory_search) within each query's result and token limits; items found
// by an earlier query are not repeated. now is the turn's time, from which
// the time a query names is read, in the owner's zone (scheduler.timezone).
func queryMemory(ctx context.Context, d *shared, scope string, now time.Time, queries []messages.MemoryQuery) ([]messages.MemoryItem, error) {
	seen := make(map[string]bool)
	var out []messages.MemoryItem
	for _, q := range queries {
		limit := q.MaxResults
		if limit <= 0 {
			limit = messages.DefaultMemoryQueryResults
		}
		maxTokens := q.MaxTokens
		if maxTokens <= 0 {
			maxTokens = messages.DefaultMemoryQueryTokens
		}
		items, err := retrieve(ctx, d, scope, now, q, limit)
		if err != nil {
			return nil, fmt.Errorf("memory query %q: %w", q.Query, err)
		}
		tokens := 0
		for _, it := range items {
			if seen[it.MemoryID] {
				continue
			}
			if tokens += contextmgr.EstimateTokens(it.Content); tokens > maxTokens {
				break
			}
			seen[it.MemoryID] = true
			out = append(out, it)
		}
	}
	return out, nil
}

// retrieve runs one query's strategy (see above).
func retrieve(ctx context.Context, d *shared, scope string, now time.Time, q messages.MemoryQuery, limit int) ([]messages.MemoryItem, error) {
	mem := d.DB.Memory()
	switch q.Strategy {
	case messages.StrategyKeyword:
		scored, err := mem.Search(ctx, scope, q.Query, persistence.SearchOptions{Limit: limit})
		if err != nil {
			return nil, err
		}
		items := make([]messages.MemoryItem, len(scored))
		for i := range scored {
			items[i] = scored[i].Item
		}
		return items, nil
	case messages.StrategySession:
		return mem.Recent(ctx, scope, limit)
	}
	w, text, timed := memory.ParseWindow(q.Query, now, d.zone())
	if !timed {
		text = q.Query
	}
	if q.Strategy == messages.StrategyTemporal && !timed {
		return mem.Recent(ctx, scope, limit)
	}
	// With more than one ranking to fuse, each reads deeper than the
	// results asked for; the keyword ranking alone is read to the limit.
	depth := limit
	if timed || semanticReady(d) {
		depth = max(limit*listDepthFactor, minListDepth)
	}
	r := ranking{byID: make(map[string]messages.MemoryItem)}
	if timed {
		// Temporal: the window's items, newest first. A temporal query
		// reads the raw lane too; a semantic one only indexed items.
		items, err := mem.Timeline(ctx, scope, persistence.TimelineOptions{From: w.From, To: w.To, Limit: depth,
			IndexedOnly: q.Strategy != messages.StrategyTemporal})
		if err != nil {
			return nil, err
		}
		r.add("temporal", items, 1, true)
	}
	// Keyword and semantic rankings of the words left: for a temporal
	// query they only order the window's items.
	admits := q.Strategy != messages.StrategyTemporal
	if strings.TrimSpace(text) != "" {
		scored, err := mem.Search(ctx, scope, text, persistence.SearchOptions{Limit: depth})
		if err != nil {
			return nil, err
		}
		items := make([]messages.MemoryItem, len(scored))
		for i := range scored {
			items[i] = scored[i].Item
		}
		r.add("keyword", items, 1, admits)
		r.add("semantic", semanticRanking(ctx, d, scope, text, depth), 1, admits)
	}
	if q.Strategy == messages.StrategySemantic {
		r.add("session", r.session(scope), sessionWeight, false)
	}
	fused := memory.Fuse(r.lists, limit)
	out := make([]messages.MemoryItem, len(fused))
	for i, f := range fused {
		out[i] = r.byID[f.ID]
	}
	return out, nil
}

// ranking gathers the lists to fuse and the items they name.
type ranking struct {
	lists []memory.List
	byID  map[string]messages.MemoryItem
}

func (r *ranking) add(name string, items []messages.MemoryItem, weight float64, admits bool) {
	if len(items) == 0 {
		return
	}
	l := memory.List{Name: name, Weight: weight, Admits: admits, IDs: make([]string, len(items))}
	for i := range items {
		l.IDs[i] = items[i].MemoryID
		r.byID[items[i].MemoryID] = items[i]
	}
	r.lists = append(r.lists, l)
}

// session is the session ranking: the items found so far that belong to
// the scope's session (no session id, or this one: every scope is one
// session today), newest first. Ranking the candidates rather than
// reading the scope's newest items costs no read, and gives the same
// order among the items the fusion admits.
func (r *ranking) session(session string) []messages.MemoryItem {
	var out []messages.MemoryItem
	for _, l := range r.lists {
		for _, id := range l.IDs {
			m := r.byID[id]
			if (m.SessionID == nil || *m.SessionID == session) && !slices.ContainsFunc(out, func(o messages.MemoryItem) bool { return o.MemoryID == id }) {
				out = append(out, m)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b messages.MemoryItem) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(a.MemoryID, b.MemoryID))
	})
	return out
}

// semanticReady reports whether semantic search can run.
func semanticReady(d *shared) bool {
	return d.Embedder != nil && d.vectors != nil && d.vectors.Ready()
}

// semanticRanking returns the items nearest in meaning to text, nearest
// first, or nothing when semantic search is off, not ready, or failing: a
// failure is logged and the turn goes on with the other rankings.
func semanticRanking(ctx context.Context, d *shared, scope, text string, depth int) []messages.MemoryItem {
	if !semanticReady(d) {
		return nil
	}
	ectx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	vecs, err := d.Embedder.Embed(ectx, []string{text})
	cancel()
	if err == nil && len(vecs) != 1 {
		err = fmt.Errorf("%d vectors for one query", len(vecs))
	}
	var hits []persistence.VectorHit
	if err == nil {
		hits, err = d.vectors.Search(ctx, scope, vecs[0], depth, d.Config.Memory.SemanticMinSimilarity)
	}
	if err != nil {
		if !errors.Is(err, embed.ErrUnavailable) && ctx.Err() == nil {
			d.Log.Warn().Err(err).Str("scope", scope).Str("model", d.Config.Memory.EmbeddingModel).
				Msg("semantic memory search failed; this turn searches memory by keywords only")
		}
		return nil
	}
	items := make([]messages.MemoryItem, len(hits))
	for i := range hits {
		items[i] = hits[i].Item
	}
	return items
}

// keywordOnly reports whether every query is answered from indexed items
// alone (keyword and semantic: every embedded item is keyword-indexed,
// persistence.Embeddable), so that a scope holding no keyword-indexed item
// can skip them; the temporal and session strategies read the recency
// index, which holds raw items too.
func keywordOnly(queries []messages.MemoryQuery) bool {
	for _, q := range queries {
		if q.Strategy == messages.StrategyTemporal || q.Strategy == messages.StrategySession {
			return false
		}
	}
	return true
}

// hasEmbeddable reports whether storing items gives the vector writer
// work.
func hasEmbeddable(items []messages.MemoryItem) bool {
	for i := range items {
		if persistence.Embeddable(&items[i]) {
			return true
		}
	}
	return false
}

// applyMemoryOps runs an agent's memory operations (spec 5.1 step 10) under
// the trust rules of spec 3.8: constitutional memories never change at
// runtime, verified ones only on the owner's signed word, and content from
// an external source stays at working trust.
func applyMemoryOps(ctx context.Context, db *persistence.DB, scope string, ops []messages.MemoryOp, taint messages.TaintLevel, now time.Time) (int, error) {
	applied := 0
	var errs []error
	for i := range ops {
		if err := applyMemoryOp(ctx, db, scope, &ops[i], taint, now); err != nil {
			errs = append(errs, fmt.Errorf("memory_ops[%d] %s: %w", i, ops[i].Op, err))
			continue
		}
		applied++
	}
	return applied, errors.Join(errs...)
}

func applyMemoryOp(ctx context.Context, db *persistence.DB, scope string, op *messages.MemoryOp, taint messages.TaintLevel, now time.Time) error {
	if err := op.Validate(); err != nil {
		return err
	}
	mem := db.Memory()
	content := ""
	if op.Content != nil {
		content = *op.Content
		if taint == messages.TaintExternal {
			// External-tainted content is scrubbed before it is persisted
			// (spec 5.12); it stays at working trust below.
			content = contextmgr.ScrubInjection(content)
		}
	}
	if op.Op == messages.MemoryOpStore {
		session := scope
		return mem.Put(ctx, scope, messages.MemoryItem{
			MemoryID: uuid.NewString(), Content: content, MemoryType: op.MemoryType,
			ReingestionTier: messages.TierActive, TrustLevel: messages.TrustWorking, Taint: taint,
			CreatedAt: now, UpdatedAt: now, SemanticTags: op.Tags, EntityRefs: op.EntityRefs,
			SessionID: &session, SourceKind: messages.SourceMemoryOp,
		})
	}
	item, err := mem.Get(ctx, scope, *op.MemoryID)
	if err != nil {
		return err
	}
	switch {
	case item.TrustLevel == messages.TrustConstitutional:
		return errors.New("constitutional memories cannot be changed at runtime")
	case item.TrustLevel == messages.TrustVerified && taint != messages.TaintOwner:
		return errors.New("verified memories change only on a message signed by the owner, in a turn whose context held no external content")
	}
	switch op.Op {
	case messages.MemoryOpDelete:
		return mem.Delete(ctx, scope, item.MemoryID)
	case messages.MemoryOpUpdate:
		item.Content = content
		item.Taint = messages.Weakest(item.Taint, taint)
		if item.Taint == messages.TaintExternal {
			item.TrustLevel = messages.TrustWorking
		}
	case messages.MemoryOpLink:
		item.CausalRefs = append(item.CausalRefs, *op.LinkTo)
	}
	item.UpdatedAt = now
	return mem.Put(ctx, scope, item)
}
