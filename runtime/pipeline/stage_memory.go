package pipeline

import (
	"strings"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/contextmgr"
)

// Auto-retrieval limits (spec 5.1 step 4 names none; these match a
// MemoryQuery's defaults).
const (
	autoRetrieveResults = messages.DefaultMemoryQueryResults
	autoRetrieveTokens  = messages.DefaultMemoryQueryTokens
)

// runAutoRetrieve searches memory for the message (spec 5.1 step 4), by
// the retriever's fused strategy (keywords, meaning, the time it names,
// recency; actors/scope_memory.go); the results join the memory zone
// before the proxy is asked.
func runAutoRetrieve(t *Turn, _ *Env) Effect {
	if t.Blocked || strings.TrimSpace(t.In.Text) == "" {
		return next
	}
	return Effect{Await: &QueryMemory{Queries: []messages.MemoryQuery{{
		Strategy: messages.StrategySemantic, Query: t.In.Text,
		MaxResults: autoRetrieveResults, MaxTokens: autoRetrieveTokens,
	}}}}
}

// runMemoryQueries runs the agent's memory queries (spec 5.1 step 9). The
// response was validated, so there are at most three.
func runMemoryQueries(t *Turn, _ *Env) Effect {
	if t.Blocked || t.Response == nil || len(t.Response.MemoryQueries) == 0 {
		return next
	}
	if !t.ToolAllowed(ToolMemorySearch) {
		// The access level does not include memory_search (step 6's
		// FilteredToolset): the agent's queries are not run.
		t.audit("memory_queries_refused", map[string]any{"level": t.Access.Level, "queries": len(t.Response.MemoryQueries)})
		return next
	}
	return Effect{Await: &QueryMemory{Queries: t.Response.MemoryQueries}}
}

// resumeMemoryQueries injects the results into the memory zone, deduplicated
// by memory_id against what the zone already holds.
func resumeMemoryQueries(t *Turn, e *Env, r Result) Effect {
	if r.Err != nil {
		t.audit("memory_query_failed", map[string]any{"error": r.Err.Error()})
		return next
	}
	items, _ := r.Value.([]messages.MemoryItem)
	for i := range items {
		m := &items[i]
		src := "memory:" + m.MemoryID
		if e.Window.HoldsMemory(src) { // also a result listed twice
			continue
		}
		content := m.Content
		if m.Taint == messages.TaintExternal {
			// Stored external content was scrubbed when written; scrub again
			// for items that came in by import or before scrubbing existed.
			content = contextmgr.ScrubInjection(content)
		}
		e.Window.Add(messages.ContextItem{
			CtxID: e.NewID(), Zone: messages.ZoneMemory, Content: content,
			TokenCount: contextmgr.EstimateTokens(content), CreatedAt: m.CreatedAt,
			TurnNumber: t.Number, Source: src, Taint: m.Taint, Kind: messages.KindMemory, Relevance: 1,
		})
	}
	return next
}

// runMemoryOps applies the agent's memory operations within the per-turn
// limit (step 10); ops beyond it are dropped and audited.
func runMemoryOps(t *Turn, e *Env) Effect {
	if t.Blocked || t.Response == nil || len(t.Response.MemoryOps) == 0 {
		return next
	}
	ops := t.Response.MemoryOps
	if limit := e.MaxMemoryOpsPerTurn; limit > 0 && len(ops) > limit {
		t.audit("memory_ops_truncated", map[string]any{"requested": len(ops), "limit": limit})
		ops = ops[:limit]
	}
	// The ops are stored at the taint of what the model saw, not only of
	// the message: an owner turn that read an external tool result writes
	// external memories (spec 5.12).
	derived := t.DerivedTaint()
	if derived != t.Taint {
		t.audit("memory_ops_taint_downgraded", map[string]any{"message_taint": t.Taint, "taint": derived})
	}
	return Effect{Await: &ApplyMemoryOps{Ops: ops, Taint: derived}}
}

// resumeMemoryOps audits what was applied and what was refused; a refused
// op does not fail the turn.
func resumeMemoryOps(t *Turn, _ *Env, r Result) Effect {
	data := map[string]any{"applied": r.Value}
	if r.Err != nil {
		data["refused"] = r.Err.Error()
	}
	t.audit("memory_ops_applied", data)
	return next
}

// runSend builds the answer and asks for the turn to be committed; the
// answer goes out only once the commit is durable (step 13).
func runSend(t *Turn, _ *Env) Effect {
	text := ""
	if t.Response != nil {
		text = t.Response.Message
	}
	if strings.TrimSpace(text) == "" {
		text = "(no answer)"
	}
	t.Answer = &messages.AnswerEvent{
		Type: messages.EventMessage, Text: text, Sender: "silas", Timestamp: t.Now,
		ReplyTo: t.In.MessageID, Register: string(t.Register), Mode: string(t.Mode), Error: t.Failure,
	}
	return Effect{Await: &Commit{}}
}

// resumeSend runs once the commit is durable. A failed commit is never
// resumed: the caller keeps the message journaled and runs the turn again.
func resumeSend(*Turn, *Env, Result) Effect { return next }
