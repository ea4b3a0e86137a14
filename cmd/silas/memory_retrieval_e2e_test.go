package main

import (
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// A new customer has no indexed memory, so its turns skip the keyword
// search; a memory the proxy stores mid-conversation ends that, and the
// very next turn's auto-retrieval finds it, without a restart.
func TestMemoryStoredMidConversationIsRetrievedNextTurn(t *testing.T) {
	const fact = "The customer ordered a blue teapot, order 4711."
	mock := newMock(t)
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if !strings.Contains(currentMessage(r), "please note") {
			return "", 0, false
		}
		return `{"route":"direct","reason":"a fact to keep","response":{"message":"Noted.","memory_queries":[],` +
			`"memory_ops":[{"op":"store","content":"` + fact + `","memory_id":null,"memory_type":"fact","tags":["order"],"entity_refs":[],"link_to":null,"link_type":null}],` +
			`"plan_action":null,"needs_approval":false},"interaction_register":"status","interaction_mode":"default_and_offer","continuation_of":null,"context_profile":"conversation"}`, 0, true
	})
	cfg := loadConfig(t, overrides(t, mock, t.TempDir()))
	d := startTest(t, cfg)
	cust := mustDial(t, d.Addr(), "/chat")
	cust.next("session")

	cust.answer(cust.say("hello, I have a question about my teapots"))
	reqs := mock.Requests()
	if txt := requestText(&reqs[len(reqs)-1]); strings.Contains(txt, "--- memory |") {
		t.Fatalf("a new customer's first turn retrieved memory:\n%s", txt)
	}
	cust.answer(cust.say("please note my order: a blue teapot"))
	cust.answer(cust.say("which teapot did I order?"))
	reqs = mock.Requests()
	last := requestText(&reqs[len(reqs)-1])
	if !strings.Contains(last, "--- memory |") || !strings.Contains(last, fact) {
		t.Fatalf("the memory stored by the previous turn is not in the model's context:\n%s", last)
	}
}
