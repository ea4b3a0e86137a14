package pipeline

import "testing"

// FuzzDecodeModelOutputs: the proxy's RouteDecision and the planner's
// AgentResponse, as a model may write them, decode and validate or fail,
// never panic.
func FuzzDecodeModelOutputs(f *testing.F) {
	f.Add(`{"route":"direct","reason":"r","response":{"message":"hi","memory_queries":[],"memory_ops":[],"plan_action":null,"needs_approval":false},"interaction_register":"status","interaction_mode":"default_and_offer","continuation_of":null,"context_profile":"conversation"}`)
	f.Add(`{"route":"planner","reason":"r","response":null}`)
	f.Add(`{"message":"x","plan_markdown":"---\nid: t\n---\n","needs_approval":true}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, content string) {
		if rd, err := decodeRoute(content, &Env{}); err == nil && rd == nil {
			t.Fatal("no route decision and no error")
		}
		if ar, err := decodeAgentResponse(content); err == nil && ar == nil {
			t.Fatal("no agent response and no error")
		}
	})
}
