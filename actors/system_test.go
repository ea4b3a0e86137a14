package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/session"
)

const ownerToken = "test-owner-token-123456"

// harness is an actor system on an in-memory Badger with a scripted model.
type harness struct {
	t      *testing.T
	sys    *System
	db     *persistence.DB
	model  *llm.Scripted
	cfg    *config.Config
	verify func(msg, sig []byte) (string, bool)
}

// newHarness starts the system; opts may change its dependencies.
func newHarness(t *testing.T, reply func(ctx context.Context, req *llm.Request) (*llm.Response, error), ov map[string]any, opts ...func(*Deps)) *harness {
	t.Helper()
	all := map[string]any{"silas.data_dir": t.TempDir(), "silas.chatbot.enabled": true}
	for k, v := range ov {
		all[k] = v
	}
	cfg, err := config.Load(config.LoadOptions{Environ: []string{}, Overrides: all})
	if err != nil {
		t.Fatal(err)
	}
	db, err := persistence.Open(context.Background(), persistence.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(reply)
	router, err := llm.NewRouter(map[string]llm.Provider{"openrouter": model}, map[llm.Role]string{
		llm.RoleProxy: "openrouter:p", llm.RolePlanner: "openrouter:pl", llm.RoleExecutor: "openrouter:e", llm.RoleScorer: "openrouter:s",
	})
	if err != nil {
		t.Fatal(err)
	}
	minter, _ := session.NewMinter([]byte(strings.Repeat("k", 32)))
	h := &harness{t: t, db: db, model: model, cfg: cfg}
	deps := Deps{
		Config: cfg, DB: db, Models: router, OwnerToken: ownerToken, Sessions: minter, Log: zerolog.Nop(),
		VerifyOwnerSignature: func(msg, sig []byte) (string, bool) {
			if h.verify != nil {
				return h.verify(msg, sig)
			}
			return "", false
		},
	}
	for _, o := range opts {
		o(&deps)
	}
	h.sys, err = Start(context.Background(), deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.sys.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		db.Close()
	})
	return h
}

// sink is a fake socket: it records what the session side sends.
type sink struct {
	mu     sync.Mutex
	events []map[string]any
	closed int
	wake   chan struct{}
}

func newSink() *sink { return &sink{wake: make(chan struct{}, 1024)} }

func (s *sink) Send(ev any) bool {
	b, err := json.Marshal(ev)
	if err != nil {
		return false
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	s.mu.Lock()
	s.events = append(s.events, m)
	s.mu.Unlock()
	s.wake <- struct{}{}
	return true
}

func (s *sink) Close(code int, _ string) {
	s.mu.Lock()
	s.closed = code
	s.mu.Unlock()
	s.wake <- struct{}{}
}

// wait returns the first event matching pred, failing after 5 s.
func (s *sink) wait(t *testing.T, what string, pred func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		s.mu.Lock()
		for _, ev := range s.events {
			if pred(ev) {
				s.mu.Unlock()
				return ev
			}
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-deadline:
			t.Fatalf("no %s within 5s; got %v", what, s.events)
		}
	}
}

func typed(typ, key, val string) func(map[string]any) bool {
	return func(ev map[string]any) bool { return ev["type"] == typ && (key == "" || ev[key] == val) }
}

// ownerConn attaches an authenticated owner connection.
func (h *harness) ownerConn() (messages.Conn, *sink) {
	s := newSink()
	c := h.sys.Gateway().Attach(messages.ConnInfo{ID: fmt.Sprint(time.Now().UnixNano()), Path: "/ws"}, s)
	c.Frame(&messages.Frame{Type: "auth", Token: ownerToken})
	s.wait(h.t, "session", typed("session", "", ""))
	return c, s
}

func direct(text string) *llm.Response {
	b, _ := json.Marshal(text)
	return &llm.Response{Content: `{"route":"direct","reason":"t","response":{"message":` + string(b) +
		`,"memory_queries":[],"memory_ops":[],"plan_action":null,"needs_approval":false},"interaction_register":"status","interaction_mode":"default_and_offer","continuation_of":null,"context_profile":"conversation"}`}
}

func TestPanicInTurnAnswersAndScopeCarriesOn(t *testing.T) {
	h := newHarness(t, func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		return direct("fine"), nil
	}, nil)
	h.verify = func(msg, sig []byte) (string, bool) { panic("verifier exploded") }
	c, s := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: "boom", MessageID: "m1", Signature: "c2ln", Nonce: "n", Timestamp: time.Now().UTC().Format(time.RFC3339)})
	if ev := s.wait(t, "answer to m1", typed("message", "reply_to", "m1")); ev["text"] != FailedTurnText {
		t.Fatalf("answer %v, want the failed-turn text", ev)
	} else if e, _ := ev["error"].(map[string]any); e["kind"] != "internal" || e["retryable"] != true {
		t.Fatalf("answer error %v, want kind internal, retryable", ev["error"])
	}
	h.verify = nil
	c.Frame(&messages.Frame{Type: "message", Text: "hello", MessageID: "m2"})
	if ev := s.wait(t, "answer to m2", typed("message", "reply_to", "m2")); ev["text"] != "fine" {
		t.Fatalf("next turn answered %v", ev)
	}
	// The crashed turn is processed: it will not run again after a restart.
	pending, err := h.db.Queue().PendingFor(context.Background(), "owner")
	if err != nil || len(pending) != 0 {
		t.Fatalf("pending after the turns: %v %v", pending, err)
	}
}

func TestBusyBeyondPendingLimit(t *testing.T) {
	release, calls := make(chan struct{}), make(chan struct{}, 8)
	h := newHarness(t, func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		calls <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return direct("done"), nil
	}, map[string]any{"silas.backpressure.max_pending_turns_per_scope": 2})
	c, s := h.ownerConn()
	// m1 runs (its model call blocks); m2 and m3 wait; m4 is one too many.
	c.Frame(&messages.Frame{Type: "message", Text: "hi", MessageID: "m1"})
	<-calls
	for i := 2; i <= 4; i++ {
		c.Frame(&messages.Frame{Type: "message", Text: "hi", MessageID: fmt.Sprintf("m%d", i)})
	}
	busy := s.wait(t, "busy error", typed("error", "code", "busy"))
	if !strings.Contains(busy["message"].(string), "max_pending_turns_per_scope") {
		t.Fatalf("busy error does not name the limit: %v", busy)
	}
	close(release)
	for i := 1; i <= 3; i++ {
		s.wait(t, "answer", typed("message", "reply_to", fmt.Sprintf("m%d", i)))
	}
	// Answers arrive in the order the messages were sent.
	var order []string
	s.mu.Lock()
	for _, ev := range s.events {
		if ev["type"] == "message" {
			order = append(order, ev["reply_to"].(string))
		}
	}
	s.mu.Unlock()
	if strings.Join(order, ",") != "m1,m2,m3" {
		t.Fatalf("answers in order %v", order)
	}
}

func TestDrainLeavesQueuedTurnsJournaled(t *testing.T) {
	started := make(chan struct{}, 8)
	release := make(chan struct{})
	h := newHarness(t, func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		started <- struct{}{}
		<-release
		return direct("ok"), nil
	}, nil)
	c, s := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: "first", MessageID: "a"})
	c.Frame(&messages.Frame{Type: "message", Text: "second", MessageID: "b"})
	s.wait(t, "ack of b", typed("ack", "message_id", "b"))
	<-started

	root := h.sys.d.sys.Root
	res, err := root.RequestFuture(h.sys.d.stream, &messages.ScopeFor{ScopeID: "owner"}, 5*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	scope := res.(*messages.ScopeRef).PID
	drained := root.RequestFuture(scope, &messages.Drain{}, 5*time.Second)
	// Sent after Drain by the same sender, so the scope sees it after Drain:
	// its ack proves the scope is draining before the first turn ends.
	root.Send(scope, &messages.UserMessage{MessageID: "c", Channel: "web", Text: "third", Authenticated: true, ReceivedAt: time.Now(), Sink: s})
	s.wait(t, "ack of c", typed("ack", "message_id", "c"))
	close(release)
	if _, err := drained.Result(); err != nil {
		t.Fatal(err)
	}
	s.wait(t, "answer to a", typed("message", "reply_to", "a"))
	pending, err := h.db.Queue().PendingFor(context.Background(), "owner")
	if err != nil || len(pending) != 2 || pending[0].MessageID != "b" || pending[1].MessageID != "c" {
		t.Fatalf("after drain, pending %v (err %v), want b and c", pending, err)
	}
}
