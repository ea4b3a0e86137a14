package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/contextmgr"
)

// contextBudget is the context.total_tokens of the context tests: small
// enough that a few dozen turns overflow it.
const contextBudget = 4000

// contextTokens estimates what a proxy request's context window holds: the
// system zone (the system message after the proxy's instructions) and
// every rendered block, delimiters included, as the window counts its
// items.
func contextTokens(r *mockllm.RecordedRequest) int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "system" {
			n += contextmgr.EstimateTokens(strings.TrimPrefix(m.Content, actors.ProxyInstructions))
		}
	}
	for _, block := range strings.Split(r.LastUser(), "--- end ---\n\n") {
		// The window counts a block's delimiters with its content.
		if strings.HasPrefix(block, "--- ") {
			n += contextmgr.EstimateTokens(block + "--- end ---\n\n")
		}
	}
	return n
}

func countSchema(reqs []mockllm.RecordedRequest, schema string) int {
	n := 0
	for i := range reqs {
		if reqs[i].Schema == schema {
			n++
		}
	}
	return n
}

var blockID = regexp.MustCompile(`(?m)^- id=(\S+) \|`)

// teams are the subjects of the facts the long conversation states; each
// fact's words are its own, so keyword retrieval can tell them apart.
var teams = []string{"Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliett",
	"Kilo", "Lima", "Mike", "November", "Oscar", "Papa", "Quebec", "Romeo", "Sierra", "Tango"}

// facts is how many facts the long conversation states.
const facts = 30

func codename(i int) string { return fmt.Sprintf("%sfinch%d", strings.ToLower(teams[i%len(teams)]), i) }

func fact(i int) string {
	return fmt.Sprintf("Fact %d: team %s picked the codename %s for their project; the kickoff is in building %d, "+
		"room %d, and the sponsor is the %s department, which insists on weekly reports written in plain language "+
		"with every risk listed, every open decision named and every deadline stated with its owner.",
		i, teams[i%len(teams)], codename(i), 10+i, 100+i, teams[i%len(teams)])
}

// A long conversation in a small context window stays within its budget:
// the heuristic tier evicts old turns to memory as episodes with their
// taint, keyword retrieval brings them back, trivial acknowledgements are
// dropped, and the scorer model is asked only for the one turn the
// heuristics cannot handle.
func TestLongConversationStaysWithinBudget(t *testing.T) {
	mock := newMock(t)
	var lookup atomic.Value // the codename the agent's memory query asks for
	lookup.Store("")
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if r.Schema == "RouteDecision" && strings.Contains(currentMessage(r), "Please search your memory") {
			return `{"route":"direct","reason":"lookup","response":{"message":"Looking it up.","memory_queries":[{"strategy":"keyword","query":"` + lookup.Load().(string) + `","max_results":3,"max_tokens":500}],` +
				`"memory_ops":[],"plan_action":null,"needs_approval":false},"interaction_register":"status","interaction_mode":"default_and_offer","continuation_of":null,"context_profile":"conversation"}`, 0, true
		}
		if r.Schema != "ScorerOutput" {
			return "", 0, false
		}
		// Evict every block offered, as one group.
		var ids []string
		for _, m := range blockID.FindAllStringSubmatch(r.LastUser(), -1) {
			ids = append(ids, `"`+m[1]+`"`)
		}
		return `{"keep_groups":[],"evict_groups":[{"reason":"old turns","block_ids":[` + strings.Join(ids, ",") + `]}]}`, 0, true
	})
	dir := t.TempDir()
	ov := overrides(t, mock, dir)
	ov["silas.context.total_tokens"] = contextBudget
	ov["silas.context.system_max"] = 1000
	// A long conversation in one minute: lift the per-scope rate limits.
	ov["silas.limits.llm_calls_per_minute_per_scope"] = 1000
	ov["silas.limits.ws_messages_per_minute_per_scope"] = 1000
	cfg := loadConfig(t, ov)
	d := startTest(t, cfg)
	c := owner(t, d.Addr())

	proxyRequests := func(reqs []mockllm.RecordedRequest) []mockllm.RecordedRequest {
		var out []mockllm.RecordedRequest
		for _, r := range reqs {
			if r.Schema == "RouteDecision" {
				out = append(out, r)
			}
		}
		return out
	}
	within := func(reqs []mockllm.RecordedRequest) {
		t.Helper()
		for i := range reqs {
			if n := contextTokens(&reqs[i]); n > contextBudget {
				t.Fatalf("a proxy request holds about %d context tokens, over the budget of %d:\n%s", n, contextBudget, requestText(&reqs[i]))
			}
		}
	}

	// 1. Thirty long facts overflow the chronicle's share of the window;
	// the heuristic tier evicts the oldest turns, no scorer call needed.
	for i := range facts {
		c.answer(c.say(fact(i)))
	}
	// 2. Trivial acknowledgements are dropped once their turn is over.
	c.answer(c.say("ok"))
	c.answer(c.say("thanks!"))
	c.answer(c.say("Fact 30: the weekly report template lives in the shared drive."))

	reqs := mock.Requests()
	if n := countSchema(reqs, "ScorerOutput"); n != 0 {
		t.Fatalf("the scorer was called %d times while the heuristics sufficed", n)
	}
	proxy := proxyRequests(reqs)
	within(proxy)
	last := proxy[len(proxy)-1]
	if txt := last.LastUser(); strings.Contains(txt, "owner: ok\n") || strings.Contains(txt, "owner: thanks!\n") {
		t.Fatalf("trivial acknowledgements still in context:\n%s", txt)
	}
	if strings.Contains(last.LastUser(), "--- turn 1 | user | live ---\n") {
		t.Fatalf("the oldest turn is still in the chronicle after %d turns:\n%s", len(proxy), last.LastUser())
	}

	// 3. The evicted turns are episodes in memory, taint preserved.
	ctx := t.Context()
	var episodes []messages.MemoryItem
	err := d.in.db.Memory().All(ctx, cfg.OwnerID, func(m messages.MemoryItem) error {
		if m.SourceKind == contextmgr.SourceContextEvicted {
			episodes = append(episodes, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var first *messages.MemoryItem
	for i := range episodes {
		if strings.Contains(episodes[i].Content, "Fact 0:") {
			first = &episodes[i]
		}
	}
	if first == nil {
		t.Fatalf("the evicted first turn is not in memory; episodes: %+v", episodes)
	}
	if first.MemoryType != messages.MemoryEpisode || first.Taint != messages.TaintAuth || first.TrustLevel != messages.TrustWorking ||
		!slices.Contains(first.SemanticTags, contextmgr.SourceContextEvicted) || first.ReingestionTier != messages.TierActive {
		t.Fatalf("evicted turn stored as %+v, want an active working episode with the message's auth taint", *first)
	}

	// 4. Keyword retrieval finds it again for a question about it.
	before := len(mock.Requests())
	c.answer(c.say("Which codename did team Alpha pick?"))
	got := proxyRequests(requestsSince(mock, before))
	if len(got) == 0 {
		t.Fatal("the question made no proxy request")
	}
	if !strings.Contains(got[0].LastUser(), "--- memory |") || !strings.Contains(got[0].LastUser(), "alphafinch0") {
		t.Fatalf("the evicted fact was not retrieved into the memory zone:\n%s", got[0].LastUser())
	}
	within(got)

	// 4b. The agent's own memory_queries (the memory_search tool) find an
	// evicted turn too: the results join the memory zone of the next turn.
	// The fact looked up is one evicted and not in the context right now.
	target := ""
	for i := range facts {
		name := codename(i)
		evicted := slices.ContainsFunc(episodes, func(m messages.MemoryItem) bool { return strings.Contains(m.Content, name) })
		if evicted && !strings.Contains(got[0].LastUser(), name) {
			target = name
			break
		}
	}
	if target == "" {
		t.Fatalf("every evicted fact is still in context; nothing to look up:\n%s", got[0].LastUser())
	}
	lookup.Store(target)
	c.answer(c.say("Please search your memory for the third team."))
	before = len(mock.Requests())
	c.answer(c.say("Noted."))
	got = proxyRequests(requestsSince(mock, before))
	if len(got) == 0 {
		t.Fatal("the turn after the lookup made no proxy request")
	}
	if !strings.Contains(got[0].LastUser(), target) {
		t.Fatalf("the agent's memory query did not bring the evicted fact back:\n%s", got[0].LastUser())
	}
	within(got)

	// 5. One message too large for the heuristics: the scorer is asked,
	// once, and the window is back within budget afterwards.
	sys := 0
	for _, m := range got[0].Messages {
		if m.Role == "system" {
			sys = contextmgr.EstimateTokens(strings.TrimPrefix(m.Content, actors.ProxyInstructions))
		}
	}
	base := contextTokens(&got[0]) + contextmgr.EstimateTokens("Silas: "+mockllm.Echo("Which codename did team Alpha pick?"))
	// Land between the scorer threshold (90%) and the whole budget, where
	// only the scorer (or its fallback) can make room.
	want := contextBudget*95/100 - base
	per100 := contextmgr.EstimateTokens(strings.Repeat("xylophone ", 100))
	big := strings.TrimSpace(strings.Repeat("xylophone ", want*100/per100))
	if n := contextmgr.EstimateTokens("[auth] owner: " + big); n < want-10 || n > want+10 {
		t.Fatalf("filler estimates %d tokens, want %d (sys %d)", n, want, sys)
	}
	before = len(mock.Requests())
	c.answer(c.say(big))
	c.answer(c.say("Fact 21: the sponsor approved the budget."))
	after := requestsSince(mock, before)
	if n := countSchema(after, "ScorerOutput"); n != 1 {
		t.Fatalf("scorer calls for the oversized turn = %d, want 1", n)
	}
	within(proxyRequests(after))
}
