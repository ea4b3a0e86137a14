package actors

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/pipeline"
)

type sent struct {
	text  string
	reset bool
}

func TestStreamRelay(t *testing.T) {
	now := time.Unix(1000, 0)
	var out []sent
	r := newStreamRelay(llm.SchemaRouteDecision, func() time.Time { return now }, func(text string, reset bool) {
		out = append(out, sent{text, reset})
	})
	feed := func(pieces ...string) {
		for _, p := range pieces {
			r.on(llm.Delta{Content: p})
		}
	}
	r.on(llm.Delta{Start: true})
	feed(`{"route":"direct","response":{"message":"He`) // the first piece goes at once
	feed(`llo`, ` wor`)                                 // coalesced: the clock has not moved
	now = now.Add(streamInterval)
	feed(`ld`)
	// The repair call starts over: what was shown is void.
	r.on(llm.Delta{Start: true})
	now = now.Add(streamInterval)
	feed(`{"route":"direct","response":{"message":"Fixed`)
	feed(strings.Repeat("!", streamFlushBytes)) // a full buffer goes out whatever the clock
	feed(`."},"context_profile":"conversation"}`)
	r.flush()
	want := []sent{{"He", false}, {"llo world", false}, {"Fixed", true}, {strings.Repeat("!", streamFlushBytes), false}, {".", false}}
	if fmt.Sprint(out) != fmt.Sprint(want) {
		t.Fatalf("sent %+v\nwant %+v", out, want)
	}

	// A restart after text, then nothing: the reset still goes out, so a
	// client does not keep a stale preview.
	out = nil
	r.on(llm.Delta{Start: true})
	r.flush()
	if fmt.Sprint(out) != fmt.Sprint([]sent{{"", true}}) {
		t.Fatalf("sent %+v, want a lone reset", out)
	}
	// Nothing shown, nothing to reset.
	out = nil
	r.on(llm.Delta{Start: true})
	r.flush()
	if len(out) != 0 {
		t.Fatalf("sent %+v after a restart with nothing shown", out)
	}

	if newStreamRelay(llm.SchemaExecutorAgentOutput, time.Now, nil) != nil || newStreamRelay(llm.SchemaScorerOutput, time.Now, nil) != nil {
		t.Fatal("an executor or scorer answer would stream")
	}
	var nilRelay *streamRelay
	nilRelay.flush() // a call that does not stream
}

func TestStreamAllowedOnlyForAnswersOfUngatedTurns(t *testing.T) {
	call := func(role, schema string) *pipeline.ModelCall { return &pipeline.ModelCall{Role: role, Schema: schema} }
	str := func(s string) *string { return &s }
	inputGuard := messages.Gate{Name: "input_guard", On: messages.TriggerEveryUserMessage, Provider: messages.ProviderGuardrailsAI, Check: str("jailbreak")}
	pii := messages.Gate{Name: "pii_scrub", On: messages.TriggerEveryAgentResponse, Provider: messages.ProviderGuardrailsAI, Check: str("pii")}
	tone := messages.Gate{Name: "tone", On: messages.TriggerEveryAgentResponse, Provider: messages.ProviderLLM, Check: str("is it polite?")}
	promoted := tone
	promoted.PromoteToPolicy = true
	compile := func(system, work []messages.Gate) *pipeline.Turn {
		set, err := gates.Compile(system, work)
		if err != nil {
			t.Fatal(err)
		}
		return &pipeline.Turn{Gates: set}
	}
	tests := []struct {
		name string
		turn *pipeline.Turn
		call *pipeline.ModelCall
		want bool
	}{
		{"no compiled gate set (blocked)", &pipeline.Turn{}, call(pipeline.AgentProxy, llm.SchemaRouteDecision), false},
		{"input gate only: proxy", compile([]messages.Gate{inputGuard}, nil), call(pipeline.AgentProxy, llm.SchemaRouteDecision), true},
		{"input gate only: planner", compile([]messages.Gate{inputGuard}, nil), call(pipeline.AgentPlanner, llm.SchemaAgentResponse), true},
		{"input gate only: scorer", compile([]messages.Gate{inputGuard}, nil), call(pipeline.AgentScorer, llm.SchemaScorerOutput), false},
		{"PII output gate", compile([]messages.Gate{inputGuard, pii}, nil), call(pipeline.AgentProxy, llm.SchemaRouteDecision), false},
		{"PII output gate of the work item", compile([]messages.Gate{inputGuard}, []messages.Gate{pii}), call(pipeline.AgentPlanner, llm.SchemaAgentResponse), false},
		{"quality-lane output gate", compile(nil, []messages.Gate{tone}), call(pipeline.AgentProxy, llm.SchemaRouteDecision), true},
		{"llm output gate promoted to policy", compile(nil, []messages.Gate{promoted}), call(pipeline.AgentProxy, llm.SchemaRouteDecision), false},
	}
	for _, tt := range tests {
		if got := streamAllowed(tt.turn, tt.call); got != tt.want {
			t.Errorf("%s: streamAllowed = %v, want %v", tt.name, got, tt.want)
		}
	}
	blocked := compile(nil, nil)
	blocked.Blocked = true
	if streamAllowed(blocked, call(pipeline.AgentProxy, llm.SchemaRouteDecision)) {
		t.Error("a blocked turn streams")
	}
}
