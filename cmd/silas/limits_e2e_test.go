package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/runtime/pipeline"
)

// limitsLog is a daemon log the limits tests read back.
type limitsLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *limitsLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the log entries, decoded.
func (l *limitsLog) lines(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(l.b.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// startLimits starts a daemon whose debug log the test can read.
func startLimits(t *testing.T, ov map[string]any) (*testDaemon, *limitsLog) {
	t.Helper()
	ov["silas.log.level"] = "debug"
	logs := &limitsLog{}
	d, err := startDaemon(context.Background(), loadConfig(t, ov), zerolog.New(logs).Level(zerolog.DebugLevel), false)
	if err != nil {
		t.Fatalf("start daemon: %v", err)
	}
	td := &testDaemon{daemon: d, t: t}
	t.Cleanup(td.stop)
	return td, logs
}

// health returns the connection count of /health.
func health(t *testing.T, addr string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/health")
	if err != nil {
		t.Fatalf("GET /health: %v", err)
	}
	defer resp.Body.Close()
	var h struct{ Connections int }
	if err := decodeJSON(resp, &h); err != nil {
		t.Fatalf("/health: %v", err)
	}
	return h.Connections
}

// errorBody decodes the JSON error event of a refused request; an
// undecodable body is an empty event.
func errorBody(resp *http.Response) event {
	b, _ := io.ReadAll(resp.Body)
	var ev event
	_ = json.Unmarshal(b, &ev)
	return ev
}

// TestIdleFloodFromOneIP: 600 sockets from one address against a per-IP cap
// of 100: exactly 100 are admitted, the rest are refused with a status and
// the key to raise, and the owner, who authenticates with the first frame
// as the app does, is still served.
func TestIdleFloodFromOneIP(t *testing.T) {
	mock := newMock(t)
	ov := overrides(t, mock, t.TempDir())
	ov["silas.channels.web.max_sockets_per_ip"] = 100
	d := startTest(t, loadConfig(t, ov))
	addr := d.Addr()

	const flood, limit = 600, 100
	var admitted, refused429, closed1013 atomic.Int32
	var mu sync.Mutex
	var keep []*client
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for range flood {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			c, resp, err := dial(t, addr, "/chat", nil)
			if err != nil {
				if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
					if ev := errorBody(resp); ev.str("code") == "too_many_connections" &&
						strings.Contains(ev.str("message"), "silas.channels.web.max_sockets_per_ip") {
						refused429.Add(1)
					}
				}
				return
			}
			// Admitted by the first check but beaten to the last place:
			// closed at once with 1013. Otherwise the session event comes.
			select {
			case ev := <-c.events:
				if ev.str("type") == "session" {
					admitted.Add(1)
					mu.Lock()
					keep = append(keep, c)
					mu.Unlock()
				}
			case <-c.done:
				var ce *websocket.CloseError
				if errors.As(c.closeError(), &ce) && ce.Code == websocket.CloseTryAgainLater {
					closed1013.Add(1)
				}
			case <-time.After(waitLimit):
				t.Errorf("an admitted socket got neither a session nor a close")
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != limit || admitted.Load()+refused429.Load()+closed1013.Load() != flood {
		t.Fatalf("of %d sockets: %d admitted (want %d), %d refused with 429, %d closed with 1013",
			flood, admitted.Load(), limit, refused429.Load(), closed1013.Load())
	}
	checkFor(t, waitLimit, func() bool { return health(t, addr) == limit }, "/health to count the admitted sockets")

	// The owner is counted apart from customers and is served.
	o := owner(t, addr)
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		return routeDecision("direct", "owner served"), 0, true
	})
	if ev := o.answerTo(o.say("are you there?")); ev.str("text") != "owner served" {
		t.Errorf("owner answer %v", ev)
	}
	if _, resp, err := dial(t, addr, "/chat", nil); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a customer got in while the cap is full: %v", err)
	}
	if len(keep) != limit {
		t.Errorf("kept %d clients, want %d", len(keep), limit)
	}
}

// TestIdleCustomersAndSlowClientsAreCut: customer sockets that never send
// a message are closed with 4008 after idle_timeout_seconds, one that
// talks stays; a client that trickles its headers is disconnected.
func TestIdleCustomersAndSlowClientsAreCut(t *testing.T) {
	mock := newMock(t)
	ov := overrides(t, mock, t.TempDir())
	ov["silas.channels.web.idle_timeout_seconds"] = 3 // the talker must speak within it, even on a loaded machine
	ov["silas.channels.web.header_timeout_seconds"] = 1
	d := startTest(t, loadConfig(t, ov))
	addr := d.Addr()
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		return routeDecision("direct", "still talking"), 0, true
	})

	talker := mustDial(t, addr, "/chat")
	talker.next("session")
	talker.answerTo(talker.say("hello"))
	var idle []*client
	for range 20 {
		c := mustDial(t, addr, "/chat")
		c.next("session")
		idle = append(idle, c)
	}
	for i, c := range idle {
		if ev := c.next("error"); ev.str("code") != "idle_timeout" {
			t.Errorf("idle socket %d: %v", i, ev)
		}
		if code := c.closed(); code != 4008 {
			t.Errorf("idle socket %d closed with %d, want 4008", i, code)
		}
	}
	if ev := talker.answerTo(talker.say("still here?")); ev.str("text") != "still talking" {
		t.Errorf("talker answer %v", ev)
	}
	checkFor(t, waitLimit, func() bool { return health(t, addr) == 1 }, "only the talker to stay")

	// Slow headers: the request never ends; the server hangs up.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(waitLimit)) // bounds a failing test only
	b, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("a client that never finished its headers was kept")
	}
	if bytes.Contains(b, []byte(" 200 ")) {
		t.Errorf("an unfinished request was answered: %q", b)
	}
}

// TestHostAllowlistAndMetricsToken: every route refuses a foreign Host
// (DNS rebinding), and /metrics wants a bearer token even on loopback.
func TestHostAllowlistAndMetricsToken(t *testing.T) {
	mock := newMock(t)
	ov := overrides(t, mock, t.TempDir())
	ov["silas.channels.web.allowed_hosts"] = []any{"chat.example.com"}
	ov["silas.channels.web.metrics_token"] = "scraper-token-0123456789"
	d := startTest(t, loadConfig(t, ov))
	addr := d.Addr()

	get := func(path, host, auth string) (int, event) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		if host != "" {
			req.Host = host
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		var ev event
		_ = json.NewDecoder(resp.Body).Decode(&ev)
		return resp.StatusCode, ev
	}
	for _, path := range []string{"/", "/health", "/metrics", "/activity", "/ws", "/chat"} {
		status, ev := get(path, "attacker.example:"+strings.Split(addr, ":")[1], "owner-secret-token")
		if status != http.StatusMisdirectedRequest || ev.str("code") != "host_not_allowed" ||
			!strings.Contains(ev.str("message"), "silas.channels.web.allowed_hosts") {
			t.Errorf("GET %s for a foreign host: %d %v", path, status, ev)
		}
	}
	if _, resp, err := dial(t, addr, "/ws", http.Header{"Host": {"attacker.example"}}); err == nil || resp == nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("websocket for a foreign host: %v", err)
	}
	for _, host := range []string{"", "localhost", "chat.example.com", "[::1]:1"} {
		if status, _ := get("/health", host, ""); status != http.StatusOK {
			t.Errorf("GET /health for host %q: %d", host, status)
		}
	}

	if status, ev := get("/metrics", "", ""); status != http.StatusUnauthorized || !strings.Contains(ev.str("message"), "metrics_token") {
		t.Errorf("/metrics without a token from loopback: %d %v", status, ev)
	}
	if status, _ := get("/metrics", "", "guess"); status != http.StatusUnauthorized {
		t.Errorf("/metrics with a wrong token: %d", status)
	}
	for _, tok := range []string{"owner-secret-token", "scraper-token-0123456789"} {
		if status, _ := get("/metrics", "", tok); status != http.StatusOK {
			t.Errorf("/metrics with token %q: %d", tok, status)
		}
	}
}

// TestBadFramesAreBadRequests: oversized or malformed fields, NUL bytes and
// wrong JSON types get bad_request naming the field, the connection stays,
// and the log holds them at debug level, never as errors.
func TestBadFramesAreBadRequests(t *testing.T) {
	mock := newMock(t)
	d, logs := startLimits(t, overrides(t, mock, t.TempDir()))
	addr := d.Addr()
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		return routeDecision("direct", "fine"), 0, true
	})
	frames := []struct {
		frame string
		field string
	}{
		{`{"type":"message","text":"hi","message_id":"` + strings.Repeat("x", 5000) + `"}`, "message_id"},
		{`{"type":"message","text":"hi","message_id":"../../etc/passwd"}`, "message_id"},
		{`{"type":"message","text":"nul \u0000 byte","message_id":"m-nul"}`, "text"},
		{`{"type":"message","text":{"a":1}}`, "text"},
		{`{"type":"message","text":"hi","message_id":12345}`, "message_id"},
		{`{"type":"message","text":"hi","sender_id":["owner"]}`, "sender_id"},
		{`{"type":"approval_response","request_id":"r1","verdict":1}`, "verdict"},
	}
	for _, who := range []string{"owner", "customer"} {
		t.Run(who, func(t *testing.T) {
			var c *client
			if who == "owner" {
				c = owner(t, addr)
			} else {
				c = mustDial(t, addr, "/chat")
				c.next("session")
			}
			for _, f := range frames {
				c.sendRaw([]byte(f.frame))
				ev := c.next("error")
				if ev.str("code") != "bad_request" || ev.str("field") != f.field || !strings.Contains(ev.str("message"), f.field) {
					t.Errorf("frame %.60s: %v, want bad_request for %q", f.frame, ev, f.field)
				}
			}
			if ev := c.answerTo(c.say("a good one")); ev.str("text") != "fine" {
				t.Errorf("answer after bad frames: %v", ev)
			}
		})
	}
	var refused int
	for _, l := range logs.lines(t) {
		if l["level"] == "error" {
			t.Errorf("error-level log line: %v", l)
		}
		if l["message"] == "client frame refused" {
			refused++
			if l["level"] != "debug" {
				t.Errorf("refused frame logged at %v", l["level"])
			}
		}
	}
	if refused != 2*len(frames) {
		t.Errorf("%d refused frames in the log, want %d", refused, 2*len(frames))
	}
}

// TestCustomerNeverSeesProviderError: the model provider fails with a body
// that names an internal URL; the customer reads a generic answer, the
// owner reads the error, the log keeps the detail.
func TestCustomerNeverSeesProviderError(t *testing.T) {
	mock := newMock(t)
	d, logs := startLimits(t, overrides(t, mock, t.TempDir()))
	addr := d.Addr()
	const internal = "http://10.11.12.13:8421/internal/upstream"
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		return "upstream " + internal + " failed: connection refused", http.StatusInternalServerError, true
	})

	c := mustDial(t, addr, "/chat")
	c.next("session")
	ev := c.answerTo(c.say("hello?"))
	text := ev.str("text")
	if text != pipeline.CustomerModelErrorText || strings.Contains(text, "10.11.12.13") || strings.Contains(text, "500") {
		t.Errorf("customer answer %q, want %q", text, pipeline.CustomerModelErrorText)
	}
	o := owner(t, addr)
	if ev := o.answerTo(o.say("hello?")); !strings.Contains(ev.str("text"), "500") {
		t.Errorf("owner answer %q lacks the provider's error", ev.str("text"))
	}
	checkFor(t, waitLimit, func() bool {
		for _, l := range logs.lines(t) {
			if l["message"] == "model call failed" && strings.Contains(l["error"].(string), internal) {
				return true
			}
		}
		return false
	}, "the provider's error in the log")
}
