package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/contextmgr"
)

// queryMemory answers an agent's memory queries (spec 5.1 step 9) within
// each query's result and token limits. Semantic search needs embeddings,
// which this build does not have, so it falls back to keyword search.
func queryMemory(ctx context.Context, db *persistence.DB, scope string, queries []messages.MemoryQuery) ([]messages.MemoryItem, error) {
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
		var items []messages.MemoryItem
		switch q.Strategy {
		case messages.StrategyTemporal, messages.StrategySession:
			recent, err := db.Memory().Recent(ctx, scope, limit)
			if err != nil {
				return nil, fmt.Errorf("memory query %q: %w", q.Query, err)
			}
			items = recent
		default:
			scored, err := db.Memory().Search(ctx, scope, q.Query, persistence.SearchOptions{Limit: limit})
			if err != nil {
				return nil, fmt.Errorf("memory query %q: %w", q.Query, err)
			}
			for _, s := range scored {
				items = append(items, s.Item)
			}
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

// keywordOnly reports whether every query is answered from the keyword
// index alone (queryMemory's Search branch); the temporal and session
// strategies read the recency index, which holds raw items too.
func keywordOnly(queries []messages.MemoryQuery) bool {
	for _, q := range queries {
		if q.Strategy == messages.StrategyTemporal || q.Strategy == messages.StrategySession {
			return false
		}
	}
	return true
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
