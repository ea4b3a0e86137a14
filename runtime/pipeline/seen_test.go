package pipeline

import (
	"testing"

	"github.com/silas-ai/silas/messages"
)

// TestMemoryOpsTakeTheTaintOfWhatTheModelSaw runs an owner-channel (auth)
// turn whose proxy stores a memory, with external content in the context
// or not, and checks the taint the memory op, the answer's chronicle item
// and its raw memory are written with.
func TestMemoryOpsTakeTheTaintOfWhatTheModelSaw(t *testing.T) {
	const storeRoute = `{"route":"direct","reason":"remember","response":{"message":"Noted.","memory_queries":[{"strategy":"keyword","query":"later lookup","max_results":5,"max_tokens":2000}],"memory_ops":[{"op":"store","content":"the build server is build-7","memory_id":null,"memory_type":"fact","tags":[],"entity_refs":[],"link_to":null,"link_type":null}],"plan_action":null,"needs_approval":false},"interaction_register":"status","interaction_mode":"default_and_offer","continuation_of":null,"context_profile":"conversation"}`
	external := messages.MemoryItem{MemoryID: "m-web", Content: "a web page says build-7", Taint: messages.TaintExternal, CreatedAt: now}
	tests := []struct {
		name string
		// prior is put in the window before the turn, as earlier turns and
		// finished work items leave it.
		prior []messages.ContextItem
		// retrieved is what auto-retrieval (step 4) finds; queried what the
		// agent's own memory queries (step 9) find, after the model call.
		retrieved, queried []messages.MemoryItem
		want               messages.TaintLevel
	}{
		{name: "nothing external", want: messages.TaintAuth},
		{name: "external work result in the chronicle", want: messages.TaintExternal, prior: []messages.ContextItem{{
			CtxID: "w1", Zone: messages.ZoneChronicle, Kind: messages.KindToolResult, Source: `tool:work_item("x")`,
			Taint: messages.TaintExternal, Content: "Work item x finished: done.\nthe page said build-7", TurnNumber: 6,
		}}},
		{name: "masked external tool result still counts", want: messages.TaintExternal, prior: []messages.ContextItem{{
			CtxID: "w1", Zone: messages.ZoneChronicle, Kind: messages.KindToolResult, Source: `tool:web_search("x")`, Masked: true,
			Taint: messages.TaintExternal, Content: "[Result of web_search (SUCCEEDED) — 9 tokens — see memory for details]", TurnNumber: 1,
		}}},
		{name: "owner-tainted work result", want: messages.TaintAuth, prior: []messages.ContextItem{{
			CtxID: "w1", Zone: messages.ZoneChronicle, Kind: messages.KindToolResult, Source: `tool:work_item("x")`,
			Taint: messages.TaintOwner, Content: "Work item x finished: done.", TurnNumber: 6,
		}}},
		{name: "external memory retrieved before the call", want: messages.TaintExternal, retrieved: []messages.MemoryItem{external}},
		{name: "external memory queried after the call", want: messages.TaintAuth, queried: []messages.MemoryItem{external}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, turn := testEnv(), newTurn("remember that the build server is build-7")
			for _, it := range tt.prior {
				env.Window.Add(it)
			}
			m := model{"RouteDecision": {storeRoute}}
			var applied *ApplyMemoryOps
			drive(t, turn, env, func(req any) Result {
				switch r := req.(type) {
				case *QueryMemory:
					if r.Queries[0].Query == "later lookup" {
						return Result{Value: tt.queried}
					}
					return Result{Value: tt.retrieved}
				case *LoadAccess:
					return ownerAccess
				case *ModelCall:
					return m.answer(r)
				case *ApplyMemoryOps:
					applied = r
					return Result{Value: len(r.Ops)}
				case *Commit:
					return Result{}
				}
				t.Fatalf("unexpected request %T", req)
				return Result{}
			})
			if turn.Taint != messages.TaintAuth {
				t.Fatalf("message taint %s, want auth (the turn's own taint is unchanged)", turn.Taint)
			}
			if applied == nil || len(applied.Ops) != 1 {
				t.Fatalf("memory ops = %+v, want the one store", applied)
			}
			if applied.Taint != tt.want || turn.DerivedTaint() != tt.want {
				t.Fatalf("memory ops taint %s, derived %s, want %s", applied.Taint, turn.DerivedTaint(), tt.want)
			}
			answer := turn.Chronicle[len(turn.Chronicle)-1]
			if answer.Source != "agent:proxy" || answer.Taint != tt.want {
				t.Errorf("answer chronicle item %+v, want taint %s", answer, tt.want)
			}
			for _, mem := range turn.Memories {
				want := turn.Taint
				if mem.SourceKind == messages.SourceAgentResponseRaw {
					want = tt.want
				}
				if mem.Taint != want {
					t.Errorf("raw memory %s has taint %s, want %s", mem.SourceKind, mem.Taint, want)
				}
			}
			downgraded := false
			for _, a := range turn.Audit {
				downgraded = downgraded || a.Event == "memory_ops_taint_downgraded"
			}
			if downgraded != (tt.want != messages.TaintAuth) {
				t.Errorf("memory_ops_taint_downgraded audited = %v, want %v", downgraded, tt.want != messages.TaintAuth)
			}
		})
	}
}
