package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/config"
)

// Models the tests configure, so that requests can be told apart.
const (
	proxyModel   = "test/proxy-model"
	plannerModel = "test/planner-model"
)

// newMock starts a mock OpenAI-compatible model server that answers at once.
func newMock(t *testing.T) *mockllm.Server {
	t.Helper()
	m := mockllm.New(mockllm.Options{Delay: -1})
	if err := m.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("start mock model server: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// overrides are the config keys every test sets: a private data dir, a free
// port, the mock as the model provider.
func overrides(t *testing.T, mock *mockllm.Server, dataDir string) map[string]any {
	// t.TempDir makes 0755 directories; the daemon refuses a data dir that
	// other users can read.
	if err := os.Chmod(dataDir, 0o700); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return map[string]any{
		"silas.data_dir":                         dataDir,
		"silas.sandbox.verify_dir":               filepath.Join(dataDir, "verify"),
		"silas.sandbox.customer_context_dir":     filepath.Join(dataDir, "customer_context"),
		"silas.channels.web.port":                0,
		"silas.channels.web.auth_token":          "owner-secret-token",
		"silas.chatbot.enabled":                  true,
		"silas.providers.openrouter.base_url":    mock.URL(),
		"silas.providers.openrouter.api_key_env": "TEST_MODEL_KEY",
		"silas.models.proxy":                     "openrouter:" + proxyModel,
		"silas.models.planner":                   "openrouter:" + plannerModel,
		"silas.llm.max_retries":                  0,
		"silas.log.level":                        "warn",
	}
}

func loadConfig(t *testing.T, ov map[string]any) *config.Config {
	t.Helper()
	t.Setenv("TEST_MODEL_KEY", "test-key")
	cfg, err := config.Load(config.LoadOptions{Environ: []string{}, Overrides: ov})
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	return cfg
}

// testDaemon is a daemon running in the test process.
type testDaemon struct {
	*daemon
	t *testing.T
}

func startTest(t *testing.T, cfg *config.Config) *testDaemon {
	t.Helper()
	log := zerolog.New(io.Discard)
	if testing.Verbose() {
		log = zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	}
	d, err := startDaemon(context.Background(), cfg, log, false)
	if err != nil {
		t.Fatalf("start daemon: %v", err)
	}
	td := &testDaemon{daemon: d, t: t}
	t.Cleanup(td.stop)
	return td
}

func (d *testDaemon) stop() {
	if d.daemon == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		d.t.Errorf("stop daemon: %v", err)
	}
	d.daemon = nil
}

// event is one server event as the client sees it.
type event map[string]any

func (e event) str(k string) string { s, _ := e[k].(string); return s }

// client is a WebSocket client that collects server events.
type client struct {
	t        *testing.T
	conn     *websocket.Conn
	events   chan event
	done     chan struct{}
	mu       sync.Mutex
	closeErr error
	// frames are every frame received, as sent, for tests that scan what
	// crossed the WebSocket.
	frames [][]byte
}

// received returns every frame the client read so far.
func (c *client) received() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.frames...)
}

func dial(t *testing.T, addr, path string, header http.Header) (*client, *http.Response, error) {
	t.Helper()
	// A write buffer larger than any test frame: a bigger frame would go
	// out in fragments, and a server that closes after the first one (an
	// oversized frame) would race the rest of the write.
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second, WriteBufferSize: 1 << 16}
	conn, resp, err := d.Dial("ws://"+addr+path, header)
	if err != nil {
		return nil, resp, err
	}
	c := &client{t: t, conn: conn, events: make(chan event, 256), done: make(chan struct{})}
	go c.read()
	t.Cleanup(func() { _ = conn.Close() })
	return c, resp, nil
}

func mustDial(t *testing.T, addr, path string) *client {
	t.Helper()
	c, _, err := dial(t, addr, path, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	return c
}

func (c *client) read() {
	defer close(c.done)
	for {
		_, b, err := c.conn.ReadMessage()
		if err != nil {
			c.mu.Lock()
			c.closeErr = err
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		c.frames = append(c.frames, b)
		c.mu.Unlock()
		var ev event
		if err := json.Unmarshal(b, &ev); err != nil {
			ev = event{"type": "<undecodable>", "raw": string(b)}
		}
		c.events <- ev
	}
}

func (c *client) send(v any) {
	c.t.Helper()
	if err := c.conn.WriteJSON(v); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *client) sendRaw(b []byte) {
	c.t.Helper()
	if err := c.conn.WriteMessage(websocket.TextMessage, b); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// waitLimit bounds every wait of a test for the daemon. It only decides
// how long a broken test takes to fail: passing tests wait on events, and
// the race detector on a loaded two-core CI machine can make a healthy wait
// take several seconds.
const waitLimit = 30 * time.Second

// next returns the next event of type typ, failing after waitLimit; events
// of other types (acks, session) are skipped.
func (c *client) next(typ string) event {
	c.t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case ev := <-c.events:
			if ev.str("type") == typ {
				return ev
			}
		case <-c.done:
			// Events read before the close are still buffered: a select
			// with both ready may pick either, so look at them first.
			for {
				select {
				case ev := <-c.events:
					if ev.str("type") == typ {
						return ev
					}
					continue
				default:
				}
				break
			}
			c.t.Fatalf("connection closed while waiting for %q: %v", typ, c.closeError())
		case <-deadline:
			c.t.Fatalf("no %q event within %s", typ, waitLimit)
		}
	}
}

// closed waits for the server to close the connection and returns the
// close code.
func (c *client) closed() int {
	c.t.Helper()
	for {
		select {
		case <-c.events:
		case <-c.done:
			var ce *websocket.CloseError
			if err := c.closeError(); err != nil && asCloseError(err, &ce) {
				return ce.Code
			}
			return 0
		case <-time.After(waitLimit):
			c.t.Fatalf("connection not closed within %s", waitLimit)
		}
	}
}

func (c *client) closeError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

func asCloseError(err error, target **websocket.CloseError) bool {
	ce, ok := err.(*websocket.CloseError)
	if ok {
		*target = ce
	}
	return ok
}

// owner dials /ws and authenticates with the first-message form.
func owner(t *testing.T, addr string) *client {
	t.Helper()
	c := mustDial(t, addr, "/ws")
	c.send(map[string]any{"type": "auth", "token": "owner-secret-token"})
	if ev := c.next("session"); ev.str("role") != "owner" {
		t.Fatalf("session event %v", ev)
	}
	return c
}

var msgSeq struct {
	sync.Mutex
	n int
}

// say sends a chat message and returns its message_id.
func (c *client) say(text string) string {
	msgSeq.Lock()
	msgSeq.n++
	id := fmt.Sprintf("msg-%d-%d", time.Now().UnixNano(), msgSeq.n)
	msgSeq.Unlock()
	c.send(map[string]any{"type": "message", "text": text, "message_id": id})
	return id
}

// answer waits for the answer to message id.
func (c *client) answer(id string) event {
	c.t.Helper()
	ev := c.next("message")
	if ev.str("reply_to") != id {
		c.t.Fatalf("answer replies to %q, want %q: %v", ev.str("reply_to"), id, ev)
	}
	return ev
}

// requestText joins every message of a recorded model request.
func requestText(r *mockllm.RecordedRequest) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// checkFor polls fn until it returns true or timeout passes.
func checkFor(t *testing.T, timeout time.Duration, fn func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !fn() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// routeDecision renders a RouteDecision the mock can answer with.
func routeDecision(route, message string) string {
	resp := "null"
	if route == "direct" {
		b, _ := json.Marshal(message)
		resp = `{"message":` + string(b) + `,"memory_queries":[],"memory_ops":[],"plan_action":null,"needs_approval":false}`
	}
	return `{"route":"` + route + `","reason":"test","response":` + resp + `,"interaction_register":"status","interaction_mode":"default_and_offer","continuation_of":null,"context_profile":"conversation"}`
}

// nextAny returns the next event of any type.
func (c *client) nextAny() event {
	c.t.Helper()
	select {
	case ev := <-c.events:
		return ev
	case <-c.done:
		select {
		case ev := <-c.events: // read before the close
			return ev
		default:
		}
		c.t.Fatalf("connection closed: %v", c.closeError())
	case <-time.After(waitLimit):
		c.t.Fatalf("no event within %s", waitLimit)
	}
	return nil
}

func decodeJSON(resp *http.Response, v any) error {
	return json.NewDecoder(resp.Body).Decode(v)
}

// answerTo waits for the answer to message id, skipping answers to other
// messages of the same scope (owner connections share one scope).
func (c *client) answerTo(id string) event {
	c.t.Helper()
	for {
		if ev := c.next("message"); ev.str("reply_to") == id {
			return ev
		}
	}
}

// currentMessage is the last block of a request's rendered context: the
// message the turn answers, without its history.
func currentMessage(r *mockllm.RecordedRequest) string {
	s := r.LastUser()
	if i := strings.LastIndex(s, "--- turn "); i >= 0 {
		return s[i:]
	}
	return s
}

// ownerHistory is the owner's chronicle, one item a line, oldest first.
func ownerHistory(t *testing.T, d *testDaemon) string {
	t.Helper()
	items, err := d.in.db.Chronicle().Recent(context.Background(), "owner", 100)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.Content + "\n")
	}
	return b.String()
}
