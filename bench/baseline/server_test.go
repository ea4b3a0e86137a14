package baseline

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/silas-ai/silas/bench/mockllm"
)

// start runs the mock model and a baseline pointed at it, both in process.
func start(t *testing.T, ownerToken string) (*Server, *mockllm.Server) {
	t.Helper()
	mock := mockllm.New(mockllm.Options{Delay: -1})
	if err := mock.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	srv, err := New(Options{ModelURL: mock.URL(), APIKey: "test", OwnerToken: ownerToken})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return srv, mock
}

// received is any server event, with the fields the tests read.
type received struct {
	Type         string `json:"type"`
	Role         string `json:"role"`
	SessionToken string `json:"session_token"`
	MessageID    string `json:"message_id"`
	ReplyTo      string `json:"reply_to"`
	Text         string `json:"text"`
	Code         string `json:"code"`
	Message      string `json:"message"`
}

func dial(t *testing.T, srv *Server, path string) *websocket.Conn {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial("ws://"+srv.Addr()+path, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func next(t *testing.T, c *websocket.Conn) received {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var ev received
	if err := c.ReadJSON(&ev); err != nil {
		t.Fatalf("read event: %v", err)
	}
	return ev
}

func send(t *testing.T, c *websocket.Conn, v any) {
	t.Helper()
	if err := c.WriteJSON(v); err != nil {
		t.Fatalf("send: %v", err)
	}
}

func TestCustomerTurn(t *testing.T) {
	srv, mock := start(t, "")
	c := dial(t, srv, "/chat")
	if ev := next(t, c); ev.Type != "session" || ev.Role != "customer" || ev.SessionToken == "" {
		t.Fatalf("first event %+v, want a customer session with a token", ev)
	}
	for _, id := range []string{"m1", "m2"} {
		send(t, c, map[string]string{"type": "message", "text": "when are you open? " + id, "message_id": id})
		if ev := next(t, c); ev.Type != "ack" || ev.MessageID != id {
			t.Fatalf("after %s: %+v, want its ack", id, ev)
		}
		ev := next(t, c)
		if ev.Type != "message" || ev.ReplyTo != id || ev.Text != mockllm.Echo("when are you open? "+id) {
			t.Fatalf("answer to %s: %+v, want the mock's echo", id, ev)
		}
	}
	reqs := mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want one per turn", len(reqs))
	}
	if r := reqs[0]; r.Schema != mockllm.SchemaRouteDecision || r.LastUser() != "when are you open? m1" || r.Model != "mock/model" {
		t.Errorf("model request %+v: want the RouteDecision call with the customer's text", r)
	}
}

func TestRefusesWhatItDoesNotSpeak(t *testing.T) {
	srv, _ := start(t, "")
	c := dial(t, srv, "/chat")
	next(t, c) // session
	for _, tc := range []struct {
		frame string
		code  string
	}{
		{`not json`, codeInvalidJSON},
		{`{"type":"approval_response","request_id":"x"}`, codeUnknownType},
	} {
		if err := c.WriteMessage(websocket.TextMessage, []byte(tc.frame)); err != nil {
			t.Fatal(err)
		}
		if ev := next(t, c); ev.Type != "error" || ev.Code != tc.code {
			t.Errorf("frame %s: %+v, want error %s", tc.frame, ev, tc.code)
		}
	}
	// The connection still works.
	send(t, c, map[string]string{"type": "message", "text": "hi", "message_id": "after"})
	if ev := next(t, c); ev.Type != "ack" {
		t.Errorf("after refused frames: %+v, want an ack", ev)
	}
}

func TestOwnerAuth(t *testing.T) {
	for _, tc := range []struct {
		name, serverToken string
		first             any
		ok                bool
	}{
		{"right token", "s3cret", map[string]string{"type": "auth", "token": "s3cret"}, true},
		{"wrong token", "s3cret", map[string]string{"type": "auth", "token": "s3cres"}, false},
		{"message before auth", "s3cret", map[string]string{"type": "message", "text": "hi", "message_id": "m"}, false},
		{"no token configured", "", map[string]string{"type": "auth", "token": ""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := start(t, tc.serverToken)
			c := dial(t, srv, "/ws")
			send(t, c, tc.first)
			ev := next(t, c)
			if !tc.ok {
				if ev.Type != "error" || ev.Code != codeUnauthorized {
					t.Fatalf("first event %+v, want unauthorized", ev)
				}
				_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, _, err := c.ReadMessage(); err == nil {
					t.Error("the connection stayed open after a refused auth")
				}
				return
			}
			if ev.Type != "session" || ev.Role != "owner" || ev.SessionToken != "" {
				t.Fatalf("first event %+v, want an owner session", ev)
			}
			send(t, c, map[string]string{"type": "message", "text": "status?", "message_id": "o1"})
			if ev := next(t, c); ev.Type != "ack" {
				t.Fatalf("%+v, want an ack", ev)
			}
			if ev := next(t, c); ev.ReplyTo != "o1" || !strings.HasPrefix(ev.Text, "Echo: ") {
				t.Fatalf("%+v, want the answer", ev)
			}
		})
	}
}

func TestModelFailureIsReported(t *testing.T) {
	srv, mock := start(t, "")
	mock.Handle(func(*mockllm.RecordedRequest) (string, int, bool) { return "boom", 500, true })
	c := dial(t, srv, "/chat")
	next(t, c)
	send(t, c, map[string]string{"type": "message", "text": "hi", "message_id": "m1"})
	next(t, c) // ack
	if ev := next(t, c); ev.Type != "error" || ev.Code != codeInternal || ev.ReplyTo != "m1" || !strings.Contains(ev.Message, "500") {
		t.Errorf("%+v, want an internal error naming the status", ev)
	}
}

func TestCloseEndsOpenSockets(t *testing.T) {
	mock := mockllm.New(mockllm.Options{Delay: -1})
	if err := mock.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	srv, err := New(Options{ModelURL: mock.URL(), APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv, "/chat")
	next(t, c)
	done := make(chan error, 1)
	go func() { done <- srv.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("close: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return with a socket open")
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err = c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
		t.Errorf("read after Close: %v, want a going-away close", err)
	}
}

func TestNewWantsAModelURL(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, ErrNoModelURL) {
		t.Errorf("New without a model URL: %v", err)
	}
}

// The answer event carries what the driver and the CLI read.
func TestAnswerEventShape(t *testing.T) {
	b, err := json.Marshal(&answerEvent{Type: "message", Text: "x", Sender: "silas", ReplyTo: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"type":"message"`, `"reply_to":"m"`, `"sender":"silas"`, `"timestamp"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("answer %s lacks %s", b, k)
		}
	}
}
