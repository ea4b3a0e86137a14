package telegram_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/messages"
)

const testOwnerToken = "owner-token-for-tests"

// fakeRuntime is the session side of the wire protocol as the bridge sees
// it: it authenticates owner and customer connections as actors/connection
// does, acknowledges messages, and lets a test script answers.
type fakeRuntime struct {
	mu       sync.Mutex
	conns    []*fakeConn
	tokens   map[string]string // customer session token -> scope
	seq      int
	frames   []recordedFrame
	changed  chan struct{}
	noAck    bool
	onMsg    func(c *fakeConn, f *messages.Frame) // answers a message; default echo
	rejectFn func(f *messages.Frame) string       // non-empty: refuse the message with this text
}

type recordedFrame struct {
	conn  string
	scope string
	f     messages.Frame
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{tokens: map[string]string{}, changed: make(chan struct{})}
}

// script sets how the runtime answers messages, safely while it runs.
func (rt *fakeRuntime) script(noAck bool, onMsg func(c *fakeConn, f *messages.Frame), reject func(f *messages.Frame) string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.noAck, rt.onMsg, rt.rejectFn = noAck, onMsg, reject
}

// fakeConn is one attached connection.
type fakeConn struct {
	rt     *fakeRuntime
	info   messages.ConnInfo
	out    messages.Outbound
	scope  string
	closed bool
}

func (rt *fakeRuntime) notifyLocked() {
	close(rt.changed)
	rt.changed = make(chan struct{})
}

func (rt *fakeRuntime) Attach(info messages.ConnInfo, out messages.Outbound) messages.Conn {
	rt.mu.Lock()
	c := &fakeConn{rt: rt, info: info, out: out}
	rt.conns = append(rt.conns, c)
	var tok string
	if info.Path == "/chat" {
		rt.seq++
		c.scope = fmt.Sprintf("c-%d", rt.seq)
		tok = fmt.Sprintf("session-token-%d", rt.seq)
		rt.tokens[tok] = c.scope
	}
	rt.notifyLocked()
	rt.mu.Unlock()
	if tok != "" {
		out.Send(&messages.SessionEvent{Type: "session", Role: "customer", SessionToken: tok})
	}
	return c
}

func (c *fakeConn) Frame(f *messages.Frame) {
	rt := c.rt
	rt.mu.Lock()
	rt.frames = append(rt.frames, recordedFrame{conn: c.info.ID, scope: c.scope, f: *f})
	rt.notifyLocked()
	noAck, onMsg, reject := rt.noAck, rt.onMsg, rt.rejectFn
	rt.mu.Unlock()
	switch f.Type {
	case messages.TypeAuth:
		c.auth(f)
	case messages.TypeMessage:
		if reject != nil {
			if text := reject(f); text != "" {
				c.out.Send(&messages.ErrorEvent{Type: "error", Code: messages.CodeBusy, Message: text, RequestType: "message"})
				return
			}
		}
		if noAck {
			return
		}
		c.out.Send(&messages.AckEvent{Type: "ack", MessageID: f.MessageID})
		if onMsg != nil {
			onMsg(c, f)
			return
		}
		c.answer(f.MessageID, "echo: "+f.Text)
	}
}

func (c *fakeConn) auth(f *messages.Frame) {
	rt := c.rt
	if c.info.Path == "/ws" {
		if f.Token != testOwnerToken || !f.Receipts {
			c.out.Send(&messages.ErrorEvent{Type: "error", Code: messages.CodeUnauthorized, Message: "bad token"})
			c.out.Close(4001, "unauthorized")
			return
		}
		rt.mu.Lock()
		c.scope = "owner"
		rt.mu.Unlock()
		c.out.Send(&messages.SessionEvent{Type: "session", Role: "owner"})
		return
	}
	rt.mu.Lock()
	scope, ok := rt.tokens[f.SessionToken]
	if ok {
		c.scope = scope
	}
	rt.mu.Unlock()
	if !ok {
		c.out.Send(&messages.ErrorEvent{Type: "error", Code: messages.CodeUnauthorized, Message: "session token expired"})
		c.out.Close(4001, "unauthorized")
		return
	}
	c.out.Send(&messages.SessionEvent{Type: "session", Role: "customer", SessionToken: f.SessionToken, Resumed: true})
}

// answer sends a turn's answer to c.
func (c *fakeConn) answer(replyTo, text string) {
	c.out.Send(map[string]any{"type": "message", "text": text, "sender": "silas", "reply_to": replyTo})
}

func (c *fakeConn) Closed() {
	c.rt.mu.Lock()
	defer c.rt.mu.Unlock()
	c.closed = true
	c.rt.notifyLocked()
}

// waitFrames blocks until pred holds for the frames received so far.
func (rt *fakeRuntime) waitFrames(t *testing.T, what string, pred func([]recordedFrame) bool) []recordedFrame {
	t.Helper()
	ctx := testCtx(t)
	for {
		rt.mu.Lock()
		frames := slices.Clone(rt.frames)
		ch := rt.changed
		rt.mu.Unlock()
		if pred(frames) {
			return frames
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for %s; frames: %+v", what, frames)
		}
	}
}

// conn returns the i-th attached connection, waiting for it.
func (rt *fakeRuntime) conn(t *testing.T, i int) *fakeConn {
	t.Helper()
	ctx := testCtx(t)
	for {
		rt.mu.Lock()
		if len(rt.conns) > i {
			c := rt.conns[i]
			rt.mu.Unlock()
			return c
		}
		ch := rt.changed
		rt.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no connection %d attached", i)
		}
	}
}

func hasFrame(frames []recordedFrame, typ, replyTo string) bool {
	return slices.ContainsFunc(frames, func(r recordedFrame) bool { return r.f.Type == typ && r.f.ReplyTo == replyTo })
}

// memStore is a BridgeStore in memory.
type memStore struct {
	memOffsets
	mu       sync.Mutex
	seen     map[int64]bool
	pending  *telegram.PendingCode
	owner    int64
	used     map[string]bool
	tokens   map[int64]string
	awaiting map[int64]map[string]bool
}

func newMemStore() *memStore {
	return &memStore{seen: map[int64]bool{}, used: map[string]bool{}, tokens: map[int64]string{}, awaiting: map[int64]map[string]bool{}}
}

func (m *memStore) Seen(_ context.Context, id int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[id], nil
}

func (m *memStore) MarkSeen(_ context.Context, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen[id] = true
	return nil
}

func (m *memStore) SavePending(_ context.Context, p telegram.PendingCode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = &p
	return nil
}

func (m *memStore) LoadPending(context.Context) (telegram.PendingCode, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		return telegram.PendingCode{}, false, nil
	}
	return *m.pending, true, nil
}

func (m *memStore) Bind(_ context.Context, chat int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owner, m.pending = chat, nil
	return nil
}

func (m *memStore) Use(_ context.Context, key string, _ time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used[key] {
		return false, nil
	}
	m.used[key] = true
	return true, nil
}

func (m *memStore) OwnerChat(context.Context) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.owner, m.owner != 0, nil
}

func (m *memStore) Unpair(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	was := m.owner
	m.owner, m.pending = 0, nil
	return was, nil
}

func (m *memStore) CustomerToken(_ context.Context, user int64) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tok, ok := m.tokens[user]
	return tok, ok, nil
}

func (m *memStore) SaveCustomerToken(_ context.Context, user int64, tok string, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens[user] = tok
	return nil
}

func (m *memStore) DeleteCustomerToken(_ context.Context, user int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tokens, user)
	return nil
}

func (m *memStore) MarkAwaiting(_ context.Context, user int64, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.awaiting[user] == nil {
		m.awaiting[user] = map[string]bool{}
	}
	m.awaiting[user][id] = true
	return nil
}

func (m *memStore) ClearAwaiting(_ context.Context, user int64, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.awaiting[user], id)
	if len(m.awaiting[user]) == 0 {
		delete(m.awaiting, user)
	}
	return nil
}

func (m *memStore) Awaiting(context.Context) ([]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int64
	for u := range m.awaiting {
		out = append(out, u)
	}
	slices.Sort(out)
	return out, nil
}

func (m *memStore) token(user int64) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tokens[user]
}

var _ telegram.BridgeStore = (*memStore)(nil)
