package main

import (
	"context"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/persistence"
)

// semanticOverrides configure the mock as the embedding provider too.
func semanticOverrides(t *testing.T, mock *mockllm.Server, dataDir string) map[string]any {
	ov := overrides(t, mock, dataDir)
	ov["silas.memory.embedding_model"] = "openrouter:test/embedder"
	return ov
}

// storeFactReply makes the proxy store fact when the message says "keep
// this in mind".
func storeFactReply(fact string) func(r *mockllm.RecordedRequest) (string, int, bool) {
	return func(r *mockllm.RecordedRequest) (string, int, bool) {
		if !strings.Contains(currentMessage(r), "keep this in mind") {
			return "", 0, false
		}
		return `{"route":"direct","reason":"a fact to keep","response":{"message":"Noted.","memory_queries":[],` +
			`"memory_ops":[{"op":"store","content":"` + fact + `","memory_id":null,"memory_type":"fact","tags":[],"entity_refs":[],"link_to":null,"link_type":null}],` +
			`"plan_action":null,"needs_approval":false},"interaction_register":"status","interaction_mode":"default_and_offer","continuation_of":null,"context_profile":"conversation"}`, 0, true
	}
}

// memoryZoneOf is the memory blocks of the last proxy request since
// before.
func memoryZoneOf(t *testing.T, mock *mockllm.Server, before int) string {
	t.Helper()
	reqs := mock.Requests()[before:]
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Schema == "RouteDecision" {
			txt := requestText(&reqs[i])
			if at := strings.Index(txt, "--- memory |"); at >= 0 {
				return txt[at:]
			}
			return ""
		}
	}
	t.Fatal("no proxy request")
	return ""
}

// Acceptance (issue 14): a fact stored with different wording is found by
// meaning (the mock's embeddings make the two texts close, and a keyword
// search misses it), also after a restart.
func TestMemoryFoundByMeaningAlsoAfterRestart(t *testing.T) {
	const (
		fact     = "My car is a red Volvo."
		question = "What vehicle do I drive?"
	)
	mock := newMock(t)
	mock.Handle(storeFactReply(fact))
	cfg := loadConfig(t, semanticOverrides(t, mock, t.TempDir()))
	d := startTest(t, cfg)
	o := owner(t, d.Addr())
	o.answerTo(o.say("keep this in mind: what I drive"))

	// The fact is committed with the turn; its vector follows, off the
	// turn, from the mock's /v1/embeddings.
	mem := d.in.db.Memory()
	checkFor(t, waitLimit, func() bool {
		pend, err := mem.PendingVectors(context.Background(), 1)
		return err == nil && len(pend) == 0 && mock.EmbeddedTexts() > 0
	}, "the stored fact's embedding")
	kw, err := mem.Search(context.Background(), "owner", question, persistence.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range kw {
		if s.Item.Content == fact {
			t.Fatal("a keyword search finds the fact: the test would not show semantic search")
		}
	}

	before := len(mock.Requests())
	o.answerTo(o.say(question))
	if zone := memoryZoneOf(t, mock, before); !strings.Contains(zone, fact) {
		t.Fatalf("the fact is not in the proxy's memory zone:\n%s", zone)
	}

	d.stop()
	embedded := mock.EmbeddedTexts()
	d = startTest(t, cfg)
	o = owner(t, d.Addr())
	before = len(mock.Requests())
	o.answerTo(o.say("Remind me, which automobile is mine?"))
	if zone := memoryZoneOf(t, mock, before); !strings.Contains(zone, fact) {
		t.Fatalf("after a restart, the fact is not found by meaning:\n%s", zone)
	}
	// The vector was stored, not made again: after the restart only the
	// question was embedded.
	if n := mock.EmbeddedTexts() - embedded; n != 1 {
		t.Fatalf("%d texts embedded after the restart, want the question only", n)
	}
}

// An embedding outage never fails a turn: memories are stored and found by
// keyword meanwhile, and embedded once the provider answers again.
func TestEmbeddingOutageDegradesToKeywords(t *testing.T) {
	const fact = "The garage door code is 4711."
	mock := newMock(t)
	mock.Handle(storeFactReply(fact))
	mock.FailEmbeddings(503)
	cfg := loadConfig(t, semanticOverrides(t, mock, t.TempDir()))
	d := startTest(t, cfg)
	o := owner(t, d.Addr())
	if ev := o.answerTo(o.say("keep this in mind: the garage")); ev["error"] != nil {
		t.Fatalf("the turn failed: %v", ev)
	}
	before := len(mock.Requests())
	if ev := o.answerTo(o.say("What is the garage door code?")); ev["error"] != nil {
		t.Fatalf("the turn failed: %v", ev)
	}
	if zone := memoryZoneOf(t, mock, before); !strings.Contains(zone, fact) {
		t.Fatalf("keyword memory lost during the outage:\n%s", zone)
	}
	if mock.EmbeddingRequests() == 0 {
		t.Fatal("the embedding provider was never called: the outage was not exercised")
	}
	pend, err := d.in.db.Memory().PendingVectors(context.Background(), 10)
	if err != nil || len(pend) != 1 {
		t.Fatalf("pending during the outage: %v %v", pend, err)
	}

	// The provider is back: a restart (or the writer's retry) embeds it.
	mock.FailEmbeddings(0)
	d.stop()
	d = startTest(t, cfg)
	checkFor(t, waitLimit, func() bool {
		pend, err := d.in.db.Memory().PendingVectors(context.Background(), 1)
		return err == nil && len(pend) == 0
	}, "the embedding after the outage")
}
