package actors

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/runtime/gates/guardrails"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/personality"
	"github.com/silas-ai/silas/runtime/session"
)

// BenchmarkTurnHistory runs one customer turn on a scope with a short and
// with a long conversation behind it: 10 turns, and 10,000 turns, which is
// far more than the context budget holds, so the window is full and every
// turn runs with eviction. The turns go the production way: frame in,
// journal, gates (the default system gates), persona, the real model
// client over loopback HTTP to a server that reads the request and answers
// a fixed RouteDecision, commit to in-memory Badger, answer out. The
// history is written by the same path before the timer starts.
//
// Besides ns/op, B/op and allocs/op it reports cpu-ns/op, the process's
// CPU time per turn (the model server's share included), req-B/op, the
// size of the proxy's request body, and stable-prefix-%, the share of the
// body's messages (system prompt and rendered context) that repeat the
// previous request's from the start: what a provider's prompt cache can
// reuse.
func BenchmarkTurnHistory(b *testing.B) {
	for _, history := range []int{10, 10000} {
		b.Run("turns="+strconv.Itoa(history), func(b *testing.B) {
			h := newTurnBench(b)
			if history <= 10 {
				// A fresh customer every 10 turns keeps the history at
				// 10 to 19 turns however long the benchmark runs.
				b.ReportAllocs()
				i := 0
				var c *benchCustomer
				cpu := startCPU()
				for b.Loop() {
					if i%10 == 0 {
						b.StopTimer()
						cpu.pause()
						h.model.measure(false)
						c = h.customer(b, fmt.Sprint("short", i))
						c.turns(b, history)
						h.model.measure(true)
						cpu.resume()
						b.StartTimer()
					}
					i++
					c.turn(b)
				}
				cpu.report(b)
				h.model.report(b)
				return
			}
			c := h.customer(b, "long")
			c.turns(b, history)
			h.model.measure(true)
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				c.turn(b)
			}
			cpu.report(b)
			h.model.report(b)
		})
	}
}

// turnBench is an actor system wired like `silas serve` for customer
// turns: guardrails system gates, persona, the HTTP model client.
type turnBench struct {
	sys   *System
	model *benchModel
}

func newTurnBench(b *testing.B) *turnBench {
	b.Helper()
	cfg, err := config.Load(config.LoadOptions{Environ: []string{}, Overrides: map[string]any{
		"silas.data_dir": b.TempDir(), "silas.chatbot.enabled": true,
		"silas.limits.ws_messages_per_minute_per_scope": 100000000,
		"silas.limits.llm_calls_per_minute_per_scope":   100000000,
		"silas.limits.memory_ops_per_minute_per_scope":  100000000,
	}})
	if err != nil {
		b.Fatal(err)
	}
	db, err := persistence.Open(context.Background(), persistence.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	model := &benchModel{}
	srv := httptest.NewServer(model)
	client := llm.NewClient(llm.ClientOptions{Name: "openrouter", BaseURL: srv.URL + "/v1", APIKey: "bench"})
	router, err := llm.NewRouter(map[string]llm.Provider{"openrouter": client}, map[llm.Role]string{
		llm.RoleProxy: "openrouter:p", llm.RolePlanner: "openrouter:pl", llm.RoleExecutor: "openrouter:e", llm.RoleScorer: "openrouter:s",
	})
	if err != nil {
		b.Fatal(err)
	}
	reg, err := gates.NewRegistry(map[messages.GateProvider]gates.Provider{messages.ProviderGuardrailsAI: guardrails.New()})
	if err != nil {
		b.Fatal(err)
	}
	system, err := gates.SystemGates(cfg.Gates)
	if err != nil {
		b.Fatal(err)
	}
	persona, err := personality.New(cfg.Personality)
	if err != nil {
		b.Fatal(err)
	}
	minter, _ := session.NewMinter(bytes.Repeat([]byte("k"), 32))
	sys, err := Start(context.Background(), Deps{
		Config: cfg, DB: db, Models: router, OwnerToken: ownerToken, Sessions: minter, Log: zerolog.Nop(),
		VerifyOwnerSignature: func(msg, sig []byte) (string, bool) { return "", false },
		Gates:                gates.NewRunner(reg), SystemGates: system,
		Persona: persona, PersonaStore: db.Persona(),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = sys.Stop(ctx)
		srv.Close()
		db.Close()
	})
	return &turnBench{sys: sys, model: model}
}

// benchCustomer is one chatbot customer's connection.
type benchCustomer struct {
	conn messages.Conn
	sink *sink
	name string
	n    int
}

func (h *turnBench) customer(b *testing.B, name string) *benchCustomer {
	s := newSink()
	return &benchCustomer{conn: h.sys.Gateway().Attach(messages.ConnInfo{ID: name, Path: "/chat"}, s), sink: s, name: name}
}

// turn sends the customer's next message, like the load bench's customers
// do, and waits for its answer.
func (c *benchCustomer) turn(b *testing.B) {
	c.n++
	id := c.name + "-m" + strconv.Itoa(c.n)
	text := fmt.Sprintf("Hello, customer %s here with question %d: when are you open on Saturday?", c.name, c.n)
	c.conn.Frame(&messages.Frame{Type: "message", Text: text, MessageID: id})
	c.sink.wait(&testing.T{}, "answer", typed("message", "reply_to", id))
	c.sink.mu.Lock()
	c.sink.events = c.sink.events[:0]
	c.sink.mu.Unlock()
}

func (c *benchCustomer) turns(b *testing.B, n int) {
	for range n {
		c.turn(b)
	}
}

// benchModel answers every chat completion with the same direct
// RouteDecision, after reading the whole request, and measures how much of
// each request body repeats the previous one byte for byte.
type benchModel struct {
	mu          sync.Mutex
	prev, spare []byte
	on          bool // count requests (measure)
	calls       int
	// bytes are the request bodies' sizes, promptLen their messages'
	// (everything before the response format), stableLen the bytes of
	// those that repeat the previous request.
	bytes, promptLen, stableLen int64
}

const benchAnswer = `{"id":"bench","object":"chat.completion","model":"p","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":` +
	`"{\"route\":\"direct\",\"reason\":\"bench\",\"response\":{\"message\":\"Echo: we are open on Saturday from nine to five, see you then.\",\"memory_queries\":[],\"memory_ops\":[],\"plan_action\":null,\"needs_approval\":false},\"interaction_register\":\"status\",\"interaction_mode\":\"default_and_offer\",\"continuation_of\":null,\"context_profile\":\"conversation\"}"` +
	`}}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`

// commonPrefix returns how many leading bytes a and b share.
func commonPrefix(a, b []byte) int {
	n := 0
	for n+4096 <= min(len(a), len(b)) && bytes.Equal(a[n:n+4096], b[n:n+4096]) {
		n += 4096
	}
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func (m *benchModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	// Two buffers, reused: the body read now and the one before it.
	body := m.spare[:0]
	if r.ContentLength > 0 && int64(cap(body)) < r.ContentLength {
		body = make([]byte, 0, r.ContentLength+r.ContentLength/4)
	}
	buf := bytes.NewBuffer(body)
	_, err := buf.ReadFrom(r.Body)
	if err != nil {
		m.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body = buf.Bytes()
	// A prompt cache holds the messages: count up to their end, before
	// the response format the client writes after them.
	prompt := bytes.Index(body, []byte(`,"response_format":`))
	if prompt < 0 {
		prompt = len(body)
	}
	n := min(commonPrefix(body, m.prev), prompt)
	if m.on {
		m.calls++
		m.bytes += int64(len(body))
		m.promptLen += int64(prompt)
		m.stableLen += int64(n)
	}
	m.prev, m.spare = body, m.prev
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, benchAnswer)
}

// measure turns counting of requests on or off.
func (m *benchModel) measure(on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.on = on
}

func (m *benchModel) report(b *testing.B) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls == 0 || m.bytes == 0 {
		return
	}
	b.ReportMetric(float64(m.bytes)/float64(m.calls), "req-B/op")
	b.ReportMetric(100*float64(m.stableLen)/float64(m.promptLen), "stable-prefix-%")
}

// cpuClock measures the process's CPU time (user and system) over the
// timed part of a benchmark.
type cpuClock struct {
	total, started time.Duration
}

func startCPU() *cpuClock { return &cpuClock{started: processCPU()} }

func (c *cpuClock) pause()  { c.total += processCPU() - c.started }
func (c *cpuClock) resume() { c.started = processCPU() }

func (c *cpuClock) report(b *testing.B) {
	c.pause()
	b.ReportMetric(float64(c.total.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
