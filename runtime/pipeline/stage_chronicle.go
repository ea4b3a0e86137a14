package pipeline

import (
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/contextmgr"
)

// runChronicle adds the user message to the chronicle zone (spec 5.1 step 3).
func runChronicle(t *Turn, e *Env) Effect {
	if t.Blocked {
		// A blocked message stays out of the context: it may be an attack.
		return next
	}
	sender := t.In.SenderID
	if sender == "" {
		sender = "user"
	}
	t.addChronicle(e, messages.ContextItem{
		CtxID:   e.NewID(),
		Content: "[" + string(t.Taint) + "] " + sender + ": " + t.In.Text,
		Source:  "channel:" + t.In.Channel,
		Taint:   t.Taint,
	})
	return next
}

// runResponseChronicle adds the answer to the chronicle zone (step 11). The
// answer carries the taint of what it was derived from: the message and
// everything the model was shown (DerivedTaint).
func runResponseChronicle(t *Turn, e *Env) Effect {
	if t.Response == nil || t.Blocked {
		return next
	}
	t.addChronicle(e, messages.ContextItem{
		CtxID:   e.NewID(),
		Content: "Silas: " + t.storedResponse(),
		Source:  "agent:" + t.Agent,
		Taint:   t.DerivedTaint(),
	})
	return next
}

func (t *Turn) addChronicle(e *Env, it messages.ContextItem) {
	it.Zone = messages.ZoneChronicle
	it.Kind = messages.KindMessage
	it.CreatedAt = t.Now
	it.TurnNumber = t.Number
	it.Relevance = 1
	it.TokenCount = contextmgr.EstimateTokens(it.Content)
	t.Chronicle = append(t.Chronicle, it)
	if ev := e.Window.Add(it); len(ev) > 0 {
		// Over the whole window: Add made room at once; keep what it took.
		r := contextmgr.EvictionResult{Evicted: ev}
		t.Memories = append(t.Memories, r.Episodes(e.NewID, t.Scope, t.Now)...)
	}
}

// runRawIngest stores the message in the low-reingestion lane (step 3.5).
func runRawIngest(t *Turn, e *Env) Effect {
	if e.RawIngest && !t.Blocked {
		t.rawMemory(e, t.In.Text, messages.SourceConversationRaw, t.Taint)
	}
	return next
}

// runRawOutputIngest stores the answer in the low-reingestion lane (step 11.5).
func runRawOutputIngest(t *Turn, e *Env) Effect {
	if e.RawIngest && t.Response != nil && !t.Blocked {
		t.rawMemory(e, t.storedResponse(), messages.SourceAgentResponseRaw, t.DerivedTaint())
	}
	return next
}

// storedResponse is the answer as the chronicle and memory keep it. An
// answer to external input, or written after reading external content, may
// echo its injection markers, so it is scrubbed like the input was (spec
// 5.12); the user is sent it as is.
func (t *Turn) storedResponse() string {
	if t.DerivedTaint() == messages.TaintExternal {
		return contextmgr.ScrubInjection(t.Response.Message)
	}
	return t.Response.Message
}

func (t *Turn) rawMemory(e *Env, content, source string, taint messages.TaintLevel) {
	session := t.Scope
	t.Memories = append(t.Memories, messages.MemoryItem{
		MemoryID:        e.NewID(),
		Content:         content,
		MemoryType:      messages.MemoryEpisode,
		ReingestionTier: messages.TierLowReingestion,
		TrustLevel:      messages.TrustWorking,
		Taint:           taint,
		CreatedAt:       t.Now,
		UpdatedAt:       t.Now,
		SessionID:       &session,
		SourceKind:      source,
	})
}

// runTurnCounter closes the turn (step 16); the scope owns the counter and
// advances it when it sees Done.
func runTurnCounter(t *Turn, _ *Env) Effect {
	t.Done = true
	return next
}
