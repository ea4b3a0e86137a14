package actors

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/llm"
)

// conceptEmbedder embeds with the mock server's concept table, in process;
// down makes every call fail as an outage would.
type conceptEmbedder struct {
	mu    sync.Mutex
	down  bool
	calls int
}

func (e *conceptEmbedder) Model() string { return "test:concepts/64" }

func (e *conceptEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	if e.down {
		return nil, &llm.APIError{Status: 503, Body: "down", Retryable: true}
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = mockllm.Embedding(t, 64)
	}
	return out, nil
}

func (e *conceptEmbedder) setDown(down bool) {
	e.mu.Lock()
	e.down = down
	e.mu.Unlock()
}

// proxyContexts are the texts of the proxy's requests, oldest first.
func proxyContexts(h *harness) []string {
	var out []string
	for _, r := range proxyRequests(h) {
		var b strings.Builder
		for _, m := range r.Messages {
			b.WriteString(m.Text())
			b.WriteByte('\n')
		}
		out = append(out, b.String())
	}
	return out
}

func ownerFact(id, content string, at time.Time) messages.MemoryItem {
	session := "owner"
	return messages.MemoryItem{
		MemoryID: id, Content: content, MemoryType: messages.MemoryFact, ReingestionTier: messages.TierActive,
		TrustLevel: messages.TrustWorking, Taint: messages.TaintOwner, CreatedAt: at, UpdatedAt: at,
		SessionID: &session, SourceKind: messages.SourceMemoryOp,
	}
}

// waitVectors waits until the vector writer has embedded everything
// pending and the index answers.
func waitVectors(t *testing.T, h *harness) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pend, err := h.db.Memory().PendingVectors(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(pend) == 0 && h.sys.d.vectors.Ready() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("memories still waiting for embeddings: %+v", pend)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A fact stored in other words reaches the proxy's context by meaning
// (auto-retrieval, spec 5.1 step 4), where a keyword search misses it;
// while the embedding provider is down, turns are still answered, by
// keyword memory alone.
func TestAutoRetrievalFindsMemoryByMeaning(t *testing.T) {
	emb := &conceptEmbedder{}
	h := newHarness(t, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		return direct("ok"), nil
	}, nil, func(d *Deps) { d.Embedder = emb })
	ctx := context.Background()
	now := time.Now()
	if err := h.db.Memory().Put(ctx, "owner",
		ownerFact("car", "My car is a red Volvo.", now.Add(-48*time.Hour)),
		ownerFact("tea", "Green tea every morning.", now.Add(-48*time.Hour)),
	); err != nil {
		t.Fatal(err)
	}
	h.sys.d.vectorsChanged() // written outside a turn: the next sweep would find them
	waitVectors(t, h)
	const question = "What vehicle do I drive?"
	if kw, _ := h.db.Memory().Search(ctx, "owner", question, persistence.SearchOptions{Limit: 5}); containsID(kw, "car") {
		t.Fatal("a keyword search finds the fact: the test does not show semantic search")
	}
	c, s := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: question, MessageID: "m1"})
	s.wait(t, "answer", typed("message", "reply_to", "m1"))
	got := proxyContexts(h)
	if !strings.Contains(got[0], "My car is a red Volvo.") {
		t.Fatalf("the fact is not in the proxy's context:\n%s", got[0])
	}
	if strings.Contains(got[0], "green tea") {
		t.Fatalf("an unrelated memory came along:\n%s", got[0])
	}

	// The provider goes down: turns are still answered, and memory is
	// still found by keyword.
	emb.setDown(true)
	if err := h.db.Memory().Put(ctx, "owner", ownerFact("code", "The garage door code is 4711.", now)); err != nil {
		t.Fatal(err)
	}
	emb.mu.Lock()
	calls := emb.calls
	emb.mu.Unlock()
	c.Frame(&messages.Frame{Type: "message", Text: "What is the garage door code?", MessageID: "m2"})
	ev := s.wait(t, "answer", typed("message", "reply_to", "m2"))
	if ev["error"] != nil {
		t.Fatalf("an embedding outage failed the turn: %v", ev)
	}
	if got := proxyContexts(h); !strings.Contains(got[len(got)-1], "The garage door code is 4711.") {
		t.Fatalf("keyword memory lost while the provider is down:\n%s", got[len(got)-1])
	}
	emb.mu.Lock()
	defer emb.mu.Unlock()
	if emb.calls == calls {
		t.Fatal("the turn did not try the embedding provider: the outage was not exercised")
	}
}

// A question naming a day brings back what was stored that day, in the
// owner's zone, and not what was stored another day.
func TestAutoRetrievalReadsTheTimeAQueryNames(t *testing.T) {
	h := newHarness(t, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		return direct("ok"), nil
	}, map[string]any{"silas.scheduler.timezone": "Europe/Vienna"})
	vienna, err := time.LoadLocation("Europe/Vienna")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().In(vienna)
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, vienna)
	if err := h.db.Memory().Put(context.Background(), "owner",
		ownerFact("yesterday", "Lunch with Anna at the harbour.", midnight.Add(-12*time.Hour)),
		ownerFact("last-month", "Dentist appointment booked.", midnight.AddDate(0, 0, -40)),
	); err != nil {
		t.Fatal(err)
	}
	c, s := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: "What did I do yesterday?", MessageID: "m1"})
	s.wait(t, "answer", typed("message", "reply_to", "m1"))
	got := proxyContexts(h)[0]
	if !strings.Contains(got, "Lunch with Anna") || strings.Contains(got, "Dentist") {
		t.Fatalf("the proxy's context for yesterday:\n%s", got)
	}
}

// A memory the proxy stores mid-conversation is embedded off the turn and
// found by meaning on a later turn.
func TestStoredMemoryIsEmbeddedAndFoundByMeaning(t *testing.T) {
	emb := &conceptEmbedder{}
	h := newHarness(t, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Format == nil || req.Format.Name != llm.SchemaRouteDecision {
			return &llm.Response{}, nil
		}
		if strings.Contains(req.Messages[len(req.Messages)-1].Text(), "note this") {
			return &llm.Response{Content: `{"route":"direct","reason":"t","response":{"message":"Noted.","memory_queries":[],` +
				`"memory_ops":[{"op":"store","content":"My dog is called Rex.","memory_id":null,"memory_type":"fact","tags":[],"entity_refs":[],"link_to":null,"link_type":null}],` +
				`"plan_action":null,"needs_approval":false},"interaction_register":"status","interaction_mode":"default_and_offer","continuation_of":null,"context_profile":"conversation"}`}, nil
		}
		return direct("ok"), nil
	}, nil, func(d *Deps) { d.Embedder = emb })
	c, s := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: "note this about my home", MessageID: "m1"})
	s.wait(t, "answer", typed("message", "reply_to", "m1"))
	waitVectors(t, h)
	c.Frame(&messages.Frame{Type: "message", Text: "Do I have a pet?", MessageID: "m2"})
	s.wait(t, "answer", typed("message", "reply_to", "m2"))
	got := proxyContexts(h)
	if last := got[len(got)-1]; !strings.Contains(last, "My dog is called Rex.") {
		t.Fatalf("the stored memory is not found by meaning:\n%s", last)
	}
}

func containsID(hits []persistence.ScoredMemory, id string) bool {
	for _, h := range hits {
		if h.Item.MemoryID == id {
			return true
		}
	}
	return false
}
