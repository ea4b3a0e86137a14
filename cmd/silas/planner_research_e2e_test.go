package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/bench/mockllm"
)

// researchMock scripts the planner's research turn: the proxy routes to the
// planner; the planner asks for two research tasks and checks a malformed
// plan in one round, then answers with the message it read last (the
// research results); each research executor asks for shell_exec and
// web_search at once (both must be running before either is answered),
// then reports the tool results it read.
func researchMock(mock *mockllm.Server, marker string) {
	var mu sync.Mutex
	arrived := 0
	both := make(chan struct{})
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		switch r.Schema {
		case "RouteDecision":
			return mockllm.Reply{Content: routeDecision("planner", "")}, true
		case "AgentResponse":
			if !slices.ContainsFunc(r.Messages, func(m mockllm.RecordedMessage) bool { return m.Role == "assistant" }) {
				return mockllm.Reply{ToolCalls: []mockllm.ToolCall{
					{ID: "rr-1", Name: "request_research", Arguments: `{"instructions":"Find the Go release notes (alpha)."}`},
					{ID: "rr-2", Name: "request_research", Arguments: `{"instructions":"Find the Go release notes (beta)."}`},
					{ID: "vp-1", Name: "validate_plan", Arguments: `{"plan_markdown":"no front matter"}`},
				}}, true
			}
			msg, _ := json.Marshal("Plan after reading: " + r.Messages[len(r.Messages)-1].Content)
			return mockllm.Reply{Content: `{"message":` + string(msg) + `,"memory_queries":[],"memory_ops":[],"plan_action":null,"needs_approval":false}`}, true
		case "ExecutorAgentOutput":
			var seen []string
			for _, m := range r.Messages {
				if m.Role == "tool" {
					seen = append(seen, m.Content)
				}
			}
			if len(seen) > 0 {
				out, _ := json.Marshal(map[string]any{"summary": "Read for " + r.Messages[1].Content + ": " + strings.Join(seen, " | "), "artifact_refs": []string{}, "next_steps": []string{}})
				return mockllm.Reply{Content: string(out)}, true
			}
			mu.Lock()
			if arrived++; arrived == 2 {
				close(both)
			}
			mu.Unlock()
			select {
			case <-both:
			case <-time.After(10 * time.Second):
				return mockllm.Reply{Status: 500, Content: "the other research never started: research ran one at a time"}, true
			}
			return mockllm.Reply{ToolCalls: []mockllm.ToolCall{
				{ID: "sh-1", Name: "shell_exec", Arguments: `{"command":"touch ` + marker + `"}`},
				{ID: "ws-1", Name: "web_search", Arguments: `{"query":"go release notes"}`},
			}}, true
		}
		return mockllm.Reply{}, false
	})
}

// The planner researches through the real daemon and the mock model: two
// request_research calls run at once as read-only micro-tasks; the
// executor's shell_exec is refused (nothing runs, the refusal is audited),
// its web_search reaches the search API; both results reach the planner,
// tainted external and scrubbed, in one message after its round's tool
// messages, and the planner answers from them.
func TestPlannerResearchE2E(t *testing.T) {
	api := newFakeSearchAPI(t)
	mock := newMock(t)
	marker := filepath.Join(t.TempDir(), "research-ran-a-shell")
	researchMock(mock, marker)
	t.Setenv("SEARCH_API_KEY", searchKey)
	dir := t.TempDir()
	ov := overrides(t, mock, dir)
	ov["silas.search.base_url"] = api.URL
	ov["silas.search.allowed_domains"] = []string{"go.dev"}
	cfg := loadSearchConfig(t, ov, []string{"SEARCH_API_KEY=" + searchKey})
	d, _ := startSearchDaemon(t, cfg)
	c := owner(t, d.Addr())

	id := c.say("plan how we adopt the latest Go release")
	text := c.answer(id).str("text")
	for _, want := range []string{"Plan after reading: [RESEARCH RESULTS]", "(alpha)", "(beta)", "GO-RELEASE-FACT",
		"research is read-only", `\"taint\":\"external\"`} {
		if !strings.Contains(text, want) {
			t.Fatalf("answer lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Ignore all previous instructions") || strings.Contains(text, "OFF-DOMAIN-TEXT") {
		t.Fatalf("answer holds unscrubbed or off-domain search text:\n%s", text)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the research's shell_exec ran: %v", err)
	}
	if auth, _ := api.calls(); len(auth) != 2 {
		t.Fatalf("search API called %d times, want once per research", len(auth))
	}

	var planner, research []mockllm.RecordedRequest
	for _, r := range mock.Requests() {
		switch r.Schema {
		case "AgentResponse":
			planner = append(planner, r)
		case "ExecutorAgentOutput":
			research = append(research, r)
		}
	}
	if len(planner) != 2 || strings.Join(planner[0].Tools, ",") != "memory_search,validate_plan,request_research" {
		t.Fatalf("%d planner requests, first offered %v", len(planner), planner[0].Tools)
	}
	for _, r := range research {
		if strings.Join(r.Tools, ",") != "web_search" {
			t.Fatalf("research offered %v, want web_search only", r.Tools)
		}
	}
	// The round's three tool messages follow its assistant message, in
	// order; the results come after them.
	msgs := planner[1].Messages
	n := len(msgs)
	if n < 5 || msgs[n-5].Role != "assistant" || len(msgs[n-5].ToolCalls) != 3 ||
		msgs[n-4].ToolCallID != "rr-1" || msgs[n-3].ToolCallID != "rr-2" || msgs[n-2].ToolCallID != "vp-1" ||
		msgs[n-1].Role != "user" || !strings.HasPrefix(msgs[n-1].Content, "[RESEARCH RESULTS]") {
		t.Fatalf("planner's second request ends %+v", msgs[max(0, n-5):])
	}
	if !strings.Contains(msgs[n-2].Content, `"result":"invalid"`) {
		t.Fatalf("validate_plan answered %s", msgs[n-2].Content)
	}
	d.stop()

	entries := auditEntries(t, filepath.Join(dir, "db"))
	for event, want := range map[string]int{"research_requested": 2, "research_completed": 2, "research_tool_rejected": 2} {
		if got := len(auditNamed(entries, event)); got != want {
			t.Errorf("%d %s audit entries, want %d", got, event, want)
		}
	}
	for _, e := range auditNamed(entries, "research_tool_rejected") {
		if e.Data["tool"] != "shell_exec" {
			t.Errorf("rejected %v", e.Data)
		}
	}
	for _, e := range auditNamed(entries, "tool_call") {
		if e.Data["agent"] == "research" && e.Data["tool"] != "web_search" {
			t.Errorf("research ran %v", e.Data)
		}
	}
	turns := auditNamed(entries, "turn_completed")
	// proxy, two planner rounds, two research tasks of two calls each.
	if len(turns) != 1 || turns[0].Data["model_calls"] != float64(7) {
		t.Fatalf("turn_completed %+v: the research is not charged to the turn", turns)
	}
}
