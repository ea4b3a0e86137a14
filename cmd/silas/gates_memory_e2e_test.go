package main

import (
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// Step 10: each memory op of an answer passes the on_tool_call policy gates
// (tool "memory_op") before it runs; a blocked op is skipped and audited,
// the others run and the answer is unaffected.
func TestMemoryOpsPassOnToolCallGates(t *testing.T) {
	mock := newMock(t)
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if r.Schema != "RouteDecision" {
			return "", 0, false
		}
		return `{"route":"direct","reason":"test","response":{"message":"Noted.","memory_queries":[],"memory_ops":[` +
			`{"op":"store","content":"The owner likes green tea.","memory_id":null,"memory_type":"fact","tags":[],"entity_refs":[],"link_to":null,"link_type":null},` +
			`{"op":"store","content":"The owner's PIN is 4921.","memory_id":null,"memory_type":"fact","tags":[],"entity_refs":[],"link_to":null,"link_type":null}` +
			`],"plan_action":null,"needs_approval":false},"interaction_register":"status","interaction_mode":"default_and_offer","continuation_of":null,"context_profile":"conversation"}`, 0, true
	})
	dir := t.TempDir()
	d := startTest(t, loadGateConfig(t, mock, dir, `  gates:
    system:
      - name: no_digits_in_memory
        on: on_tool_call
        provider: predicate
        type: regex
        extract: content
        config: { pattern: "^[^0-9]*$" }
        on_block: report
`))
	c := owner(t, d.Addr())

	if got := c.answer(c.say("remember what I like")).str("text"); got != "Noted." {
		t.Fatalf("answer %q, want the agent's answer", got)
	}
	log := waitAudit(t, d, "memory_op_blocked", "no_digits_in_memory")
	if data := string(log[len(log)-1].Data); !strings.Contains(data, `"index":1`) {
		t.Errorf("memory_op_blocked names the wrong op: %s", data)
	}
	log = waitAudit(t, d, "memory_ops_applied", "")
	if data := string(log[len(log)-1].Data); !strings.Contains(data, `"applied":1`) {
		t.Fatalf("memory_ops_applied %s: want only the allowed op applied", data)
	}
}
