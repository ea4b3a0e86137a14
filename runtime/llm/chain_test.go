package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/runtime/llm"
)

// fakeProvider is an OpenAI-compatible server over real HTTP whose answers
// a test scripts; it records the model and Authorization of each request.
type fakeProvider struct {
	srv *httptest.Server

	mu     sync.Mutex
	answer func(r *http.Request) (status int, body string)
	models []string
	auths  []string
}

func newFake(t *testing.T, answer func(r *http.Request) (int, string)) *fakeProvider {
	t.Helper()
	f := &fakeProvider{answer: answer}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	f.models = append(f.models, req.Model)
	f.auths = append(f.auths, r.Header.Get("Authorization"))
	answer := f.answer
	f.mu.Unlock()
	status, body := answer(r)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// set replaces the server's answers.
func (f *fakeProvider) set(answer func(r *http.Request) (int, string)) {
	f.mu.Lock()
	f.answer = answer
	f.mu.Unlock()
}

// calls returns the model of each request the server received.
func (f *fakeProvider) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.models...)
}

// client is a keyless client for f that never retries, so that each call
// is one request.
func (f *fakeProvider) client(name string, timeout time.Duration) *llm.Client {
	return llm.NewClient(llm.ClientOptions{Name: name, BaseURL: f.srv.URL + "/v1", MaxRetries: -1, Timeout: timeout})
}

// completion is a chat completion body; cost < 0 leaves usage.cost out.
func completion(content string, prompt, completionTokens int, cost float64) string {
	usage := map[string]any{"prompt_tokens": prompt, "completion_tokens": completionTokens}
	if cost >= 0 {
		usage["cost"] = cost
	}
	b, _ := json.Marshal(map[string]any{
		"model":   "served-model",
		"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
		"usage":   usage,
	})
	return string(b)
}

func answers(content string) func(*http.Request) (int, string) {
	return func(*http.Request) (int, string) { return http.StatusOK, completion(content, 10, 5, 0.001) }
}

func fails(status int, body string) func(*http.Request) (int, string) {
	return func(*http.Request) (int, string) { return status, `{"error":{"message":"` + body + `"}}` }
}

// hangs answers only when the request is abandoned.
func hangs(r *http.Request) (int, string) {
	<-r.Context().Done()
	return http.StatusGatewayTimeout, `{}`
}

// clock is a settable fake clock for the breakers.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func ask() *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
}

// chainOf builds a router whose proxy chain is "a:model-a" then
// "b:model-b".
func chainOf(t *testing.T, a, b llm.Provider, o llm.RouterOptions) *llm.Router {
	t.Helper()
	r, err := llm.NewChainRouter(map[string]llm.Provider{"a": a, "b": b},
		map[llm.Role][]string{llm.RoleProxy: {"a:model-a", "b:model-b"}}, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestChainFallsBackToTheNextProvider(t *testing.T) {
	tests := []struct {
		name     string
		first    func(*http.Request) (int, string)
		closed   bool // the first provider's server is gone
		wantKind llm.Kind
	}{
		{name: "server error", first: fails(500, "upstream exploded"), wantKind: llm.KindTransient},
		{name: "bad gateway", first: fails(502, "bad gateway"), wantKind: llm.KindTransient},
		{name: "timeout", first: hangs, wantKind: llm.KindTransient},
		{name: "connection refused", first: answers("never"), closed: true, wantKind: llm.KindTransient},
		{name: "not a completion", first: func(*http.Request) (int, string) { return 200, `<html>` }, wantKind: llm.KindTransient},
		{name: "rate limited", first: fails(429, "slow down"), wantKind: llm.KindRateLimited},
		{name: "refused key", first: fails(401, "invalid api key"), wantKind: llm.KindAuth},
		{name: "unknown model", first: fails(404, "no such model"), wantKind: llm.KindBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newFake(t, tt.first), newFake(t, answers("from b"))
			ca := a.client("a", 100*time.Millisecond)
			if tt.closed {
				a.srv.Close()
			}
			r := chainOf(t, ca, b.client("b", time.Minute), llm.RouterOptions{})
			req := ask()
			resp, err := r.Complete(context.Background(), llm.RoleProxy, req)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Content != "from b" || resp.Ref != "b:model-b" {
				t.Fatalf("answer %q by %q, want \"from b\" by b:model-b", resp.Content, resp.Ref)
			}
			if got := b.calls(); len(got) != 1 || got[0] != "model-b" {
				t.Errorf("b saw models %v, want [model-b]", got)
			}
			if len(resp.Fallbacks) != 1 {
				t.Fatalf("fallbacks %+v, want one", resp.Fallbacks)
			}
			f := resp.Fallbacks[0]
			if f.Ref != "a:model-a" || f.Kind != tt.wantKind || f.To != "b:model-b" || f.Role != llm.RoleProxy || f.Reason == "" {
				t.Errorf("fallback %+v, want a:model-a, %s, to b:model-b", f, tt.wantKind)
			}
			if req.Model != "" {
				t.Errorf("the caller's request was modified: model %q", req.Model)
			}
		})
	}
}

func TestChainDoesNotFallBack(t *testing.T) {
	t.Run("content filter", func(t *testing.T) {
		a, b := newFake(t, fails(400, "content_filter: refused")), newFake(t, answers("from b"))
		r := chainOf(t, a.client("a", time.Minute), b.client("b", time.Minute), llm.RouterOptions{})
		_, err := r.Complete(context.Background(), llm.RoleProxy, ask())
		if llm.KindOf(err) != llm.KindContentFilter {
			t.Fatalf("err = %v (kind %s), want the content filter", err, llm.KindOf(err))
		}
		if n := len(b.calls()); n != 0 {
			t.Errorf("b was called %d times: a refused content must not be sent elsewhere", n)
		}
	})
	t.Run("caller gave up", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		a := newFake(t, func(r *http.Request) (int, string) {
			cancel()
			return hangs(r)
		})
		b := newFake(t, answers("from b"))
		r := chainOf(t, a.client("a", time.Minute), b.client("b", time.Minute), llm.RouterOptions{CircuitFailures: 1})
		_, err := r.Complete(ctx, llm.RoleProxy, ask())
		if !errors.Is(err, context.Canceled) || llm.KindOf(err) != llm.KindCanceled {
			t.Fatalf("err = %v, want canceled", err)
		}
		if n := len(b.calls()); n != 0 {
			t.Errorf("b was called %d times after the caller gave up", n)
		}
		// A canceled call says nothing about a: its circuit stays closed.
		a.set(answers("from a"))
		if resp, err := r.Complete(context.Background(), llm.RoleProxy, ask()); err != nil || resp.Ref != "a:model-a" {
			t.Errorf("next call answered by %v, %v; want a (a cancel must not open its circuit)", resp, err)
		}
	})
}

func TestChainEveryEntryFails(t *testing.T) {
	tests := []struct {
		name     string
		a, b     func(*http.Request) (int, string)
		wantKind llm.Kind
		status   int
	}{
		{"both down", fails(500, "a down"), fails(503, "b down"), llm.KindTransient, 503},
		{"refused key then down: worth trying again", fails(401, "bad key"), fails(500, "b down"), llm.KindTransient, 500},
		{"down then refused key", fails(500, "a down"), fails(403, "forbidden"), llm.KindTransient, 500},
		{"both refuse the request", fails(400, "too long"), fails(422, "bad schema"), llm.KindBadRequest, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newFake(t, tt.a), newFake(t, tt.b)
			r := chainOf(t, a.client("a", time.Minute), b.client("b", time.Minute), llm.RouterOptions{})
			_, err := r.Complete(context.Background(), llm.RoleProxy, ask())
			var ce *llm.ChainError
			if !errors.As(err, &ce) || len(ce.Entries) != 2 {
				t.Fatalf("err = %v, want a ChainError of two entries", err)
			}
			for _, s := range []string{"all 2 models of role proxy failed", "a:model-a", "b:model-b"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
			var api *llm.APIError
			if llm.KindOf(err) != tt.wantKind || !errors.As(err, &api) || api.Status != tt.status {
				t.Errorf("kind %s, api error %v; want %s and HTTP %d", llm.KindOf(err), api, tt.wantKind, tt.status)
			}
		})
	}
}

func TestChainOfOneReturnsTheProviderError(t *testing.T) {
	a := newFake(t, fails(500, "down"))
	r, err := llm.NewRouter(map[string]llm.Provider{"a": a.client("a", time.Minute)}, map[llm.Role]string{llm.RoleProxy: "a:m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Complete(context.Background(), llm.RoleProxy, ask())
	var ce *llm.ChainError
	var api *llm.APIError
	if errors.As(err, &ce) || !errors.As(err, &api) || api.Status != 500 {
		t.Fatalf("err = %v, want the provider's HTTP 500 as it is", err)
	}
}

func TestCircuitBreaker(t *testing.T) {
	clk := &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	a, b := newFake(t, fails(500, "a down")), newFake(t, answers("from b"))
	r := chainOf(t, a.client("a", time.Minute), b.client("b", time.Minute),
		llm.RouterOptions{CircuitFailures: 2, CircuitCooldown: 30 * time.Second, Now: clk.now})
	call := func(wantRef string, wantACalls int, wantSkip bool) {
		t.Helper()
		resp, err := r.Complete(context.Background(), llm.RoleProxy, ask())
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
		if resp.Ref != wantRef {
			t.Fatalf("answered by %s, want %s", resp.Ref, wantRef)
		}
		if n := len(a.calls()); n != wantACalls {
			t.Fatalf("a received %d calls, want %d", n, wantACalls)
		}
		skipped := len(resp.Fallbacks) == 1 && strings.Contains(resp.Fallbacks[0].Reason, "circuit open")
		if skipped != wantSkip {
			t.Fatalf("fallbacks %+v, want skipped=%v", resp.Fallbacks, wantSkip)
		}
	}
	call("b:model-b", 1, false) // a fails: one
	call("b:model-b", 2, false) // a fails: two, the circuit opens
	call("b:model-b", 2, true)  // a is skipped at once
	clk.advance(29 * time.Second)
	call("b:model-b", 2, true) // still cooling down
	clk.advance(2 * time.Second)
	call("b:model-b", 3, false) // the probe reaches a and fails: open again
	call("b:model-b", 3, true)
	a.set(answers("from a"))
	clk.advance(31 * time.Second)
	call("a:model-a", 4, false) // the probe succeeds: closed
	call("a:model-a", 5, false)
}

func TestEveryCircuitOpenTriesThePrimary(t *testing.T) {
	clk := &clock{t: time.Unix(0, 0)}
	a, b := newFake(t, fails(500, "a down")), newFake(t, fails(500, "b down"))
	r := chainOf(t, a.client("a", time.Minute), b.client("b", time.Minute), llm.RouterOptions{CircuitFailures: 1, Now: clk.now})
	if _, err := r.Complete(context.Background(), llm.RoleProxy, ask()); err == nil {
		t.Fatal("both down: Complete succeeded")
	}
	// Both circuits are open; the primary is tried anyway and answers.
	a.set(answers("from a"))
	resp, err := r.Complete(context.Background(), llm.RoleProxy, ask())
	if err != nil || resp.Ref != "a:model-a" || len(resp.Fallbacks) != 0 {
		t.Fatalf("answer %+v, %v; want a:model-a with no fallbacks", resp, err)
	}
	if n := len(b.calls()); n != 1 {
		t.Errorf("b received %d calls, want 1", n)
	}
	// While both are open and a still fails, the error names a's failure.
	a.set(fails(500, "a down again"))
	b.set(fails(500, "b down again"))
	r = chainOf(t, a.client("a", time.Minute), b.client("b", time.Minute), llm.RouterOptions{CircuitFailures: 1, Now: clk.now})
	_, _ = r.Complete(context.Background(), llm.RoleProxy, ask())
	_, err = r.Complete(context.Background(), llm.RoleProxy, ask())
	var ce *llm.ChainError
	if !errors.As(err, &ce) || len(ce.Entries) != 2 || !strings.Contains(ce.Entries[0].Reason, "a down again") ||
		!strings.Contains(ce.Entries[1].Reason, "circuit open") {
		t.Fatalf("err = %v, want a's failure and b skipped", err)
	}
}

func TestChainGivesEachEntryAShareOfTheDeadline(t *testing.T) {
	// a hangs and its client would wait a minute: only the chain's share
	// of the caller's deadline leaves time for b.
	a, b := newFake(t, hangs), newFake(t, answers("from b"))
	r := chainOf(t, a.client("a", time.Minute), b.client("b", time.Minute), llm.RouterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := r.Complete(ctx, llm.RoleProxy, ask())
	if err != nil || resp.Ref != "b:model-b" {
		t.Fatalf("answer %+v, %v; want b:model-b", resp, err)
	}
	if f := resp.Fallbacks; len(f) != 1 || f[0].Kind != llm.KindTransient {
		t.Errorf("fallbacks %+v, want a's timeout", f)
	}
}

func TestPricing(t *testing.T) {
	tests := []struct {
		name       string
		cost       float64 // < 0: the provider reports none
		prices     llm.PriceTable
		wantCost   float64
		wantWarned []string
	}{
		{"reported cost wins", 0.5, llm.PriceTable{"model-a": {InputPerMTok: 3, OutputPerMTok: 15}}, 0.5, nil},
		{"reported zero stays zero (a free model)", 0, llm.PriceTable{"model-a": {InputPerMTok: 3, OutputPerMTok: 15}}, 0, nil},
		{"no cost: priced by model", -1, llm.PriceTable{"model-a": {InputPerMTok: 3, OutputPerMTok: 15}}, (1000*3 + 500*15) / 1e6, nil},
		{"no cost: priced by the provider's default", -1, llm.PriceTable{"other": {InputPerMTok: 1}, llm.AnyModel: {InputPerMTok: 2, OutputPerMTok: 4}}, (1000*2 + 500*4) / 1e6, nil},
		{"no cost and no price: zero, warned once", -1, nil, 0, []string{"a:model-a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newFake(t, func(*http.Request) (int, string) { return 200, completion("ok", 1000, 500, tt.cost) })
			var warned []string
			r := chainOf(t, a.client("a", time.Minute), a.client("b", time.Minute), llm.RouterOptions{
				Prices:     map[string]llm.PriceTable{"a": tt.prices},
				OnUnpriced: func(ref string) { warned = append(warned, ref) },
			})
			for range 2 {
				resp, err := r.Complete(context.Background(), llm.RoleProxy, ask())
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(resp.Usage.CostUSD-tt.wantCost) > 1e-12 {
					t.Fatalf("cost %v, want %v", resp.Usage.CostUSD, tt.wantCost)
				}
			}
			if strings.Join(warned, ",") != strings.Join(tt.wantWarned, ",") {
				t.Errorf("warned about %v, want %v", warned, tt.wantWarned)
			}
		})
	}
}

func TestRunStructuredRecordsWhoAnswered(t *testing.T) {
	a, b := newFake(t, fails(500, "down")), newFake(t, answers("not json"))
	r := chainOf(t, a.client("a", time.Minute), b.client("b", time.Minute), llm.RouterOptions{CircuitFailures: 5})
	calls := 0
	res, err := llm.RunStructured(context.Background(), r.Completer(llm.RoleProxy), ask(), func(string) error {
		calls++
		if calls == 1 {
			return errors.New("not an object")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Models, ",") != "b:model-b,b:model-b" || len(res.Fallbacks) != 2 {
		t.Fatalf("models %v, fallbacks %+v; want b twice after a failed twice", res.Models, res.Fallbacks)
	}
	if res.Usage.CostUSD != 0.002 {
		t.Errorf("cost %v, want both calls' 0.002", res.Usage.CostUSD)
	}
}

func TestKeylessProviderOnAnyHost(t *testing.T) {
	f := newFake(t, answers("keyless"))
	// A server on the network, not on loopback: the transport dials the
	// test server whatever host the URL names.
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, f.srv.Listener.Addr().String())
	}}}
	c := llm.NewClient(llm.ClientOptions{Name: "lan", BaseURL: "http://models.lan.example:8080/v1", MaxRetries: -1, HTTP: hc})
	resp, err := c.Complete(context.Background(), &llm.Request{Model: "qwen", Messages: ask().Messages})
	if err != nil || resp.Content != "keyless" {
		t.Fatalf("Complete = %+v, %v; want the keyless server's answer", resp, err)
	}
	f.mu.Lock()
	auth := f.auths[0]
	f.mu.Unlock()
	if auth != "" {
		t.Errorf("a keyless provider sent Authorization %q", auth)
	}
	// With api_key_env configured but unset, the key is missing.
	c = llm.NewClient(llm.ClientOptions{Name: "lan", BaseURL: "http://models.lan.example:8080/v1", APIKeyEnv: "LAN_KEY", HTTP: hc})
	if _, err := c.Complete(context.Background(), &llm.Request{Model: "qwen", Messages: ask().Messages}); !errors.Is(err, llm.ErrMissingAPIKey) {
		t.Errorf("err = %v, want ErrMissingAPIKey naming LAN_KEY", err)
	}
}

func TestNewChainRouterNamesTheEntry(t *testing.T) {
	p := map[string]llm.Provider{"a": llm.NewScripted(nil)}
	_, err := llm.NewChainRouter(p, map[llm.Role][]string{
		llm.RoleProxy:   {"a:m", "nope:m"},
		llm.RolePlanner: {},
		llm.RoleScorer:  {"a:m", "bad"},
	}, llm.RouterOptions{})
	for _, s := range []string{"role proxy entry 1", `provider "nope"`, "role planner: no model", "role scorer entry 1", `"bad"`} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("error %v does not say %q", err, s)
		}
	}
	r, err := llm.NewChainRouter(p, map[llm.Role][]string{llm.RoleProxy: {"a:m1", "a:m2"}}, llm.RouterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Chain(llm.RoleProxy); strings.Join(got, ",") != "a:m1,a:m2" {
		t.Errorf("Chain = %v", got)
	}
}
