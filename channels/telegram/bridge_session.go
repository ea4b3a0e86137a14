package telegram

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/silas-ai/silas/messages"
)

// maxSessionItems bounds what waits in one session's queue; a runtime that
// sends more is treated as the web channel treats a slow consumer: the
// link closes and the runtime keeps what was not confirmed.
const maxSessionItems = 2048

// Reattach backoff after the runtime closed a session's link.
const (
	minReattach = time.Second
	maxReattach = 30 * time.Second
)

// maxTyping caps how long one typing indicator runs without an answer.
const maxTyping = 10 * time.Minute

// session is one chat's conversation with the runtime: a goroutine that
// owns the chat's state and, at any time, at most one link (an attached
// in-process connection). A link the runtime closes is replaced; the
// session outlives it, so what was sent and confirmed is known across
// links.
type session struct {
	b     *Bridge
	chat  int64
	user  int64 // the customer's Telegram user id; 0 for the owner
	owner bool

	mu    sync.Mutex
	items []any
	live  *link // the link the runtime may write to
	ended bool
	ready bool // mirrors rs.ready for Status
	wake  chan struct{}

	rs runState // the run goroutine's own
}

// runState is what only the session's goroutine touches.
type runState struct {
	link        *link
	conn        messages.Conn
	seq         int
	ready       bool
	resumeTried bool
	reattaching bool
	backoff     time.Duration
	ending      bool

	held    []*submitItem // messages waiting for the link to be ready
	waiting []*submitItem // handed to the runtime, waiting for their ack
	readyW  []chan struct{}
	pending []*callbackItem // card answers waiting for the link

	turns   map[string]bool // acknowledged messages whose answer has not come
	typing  func()
	typeCap *time.Timer

	answers     map[string]answerState
	answerOrder []string
	cards       map[string]*cardState
	cardOrder   []string
	statuses    map[string]*statusLine
	statusOrder []string
	titles      map[string]string // work item id -> plan title
}

type answerState byte

const (
	answerSending answerState = iota + 1
	answerDelivered
)

// Bounds of what a session remembers.
const (
	maxAnswers  = 256
	maxCards    = 64
	maxStatuses = 64
	maxTitles   = 256
)

// Items a session's goroutine handles, in order.
type (
	wakeItem struct{} // attach if not attached
	endItem  struct{} // end the session
	// linkEvent is a server event the runtime sent on l.
	linkEvent struct {
		l  *link
		ev any
	}
	// linkClosed is the runtime closing l.
	linkClosed struct {
		l      *link
		code   int
		reason string
	}
	// submitItem hands a user message to the runtime; done receives nil
	// once it is acknowledged, or why not.
	submitItem struct {
		frame *messages.Frame
		done  chan error
		noAck bool // done once handed over: the runtime sends no ack
	}
	// readyItem asks to be told (done closed) once the link is ready.
	readyItem struct{ done chan struct{} }
	// callbackItem hands a card's answer to the runtime and edits the card.
	callbackItem struct {
		frame   *messages.Frame
		msgID   int
		outcome string
	}
	// outcomeItem edits a card to an outcome without answering it.
	outcomeItem struct {
		reqID   string
		msgID   int
		outcome string
	}
	// deliveredItem is the outbox's report on one of the session's messages.
	deliveredItem struct {
		kind      byte
		key       string
		messageID int
		failed    error
	}
	reattachItem  struct{}
	typingCapItem struct{}
)

func newSession(b *Bridge, chat, user int64, owner bool) *session {
	return &session{
		b: b, chat: chat, user: user, owner: owner, wake: make(chan struct{}, 1),
		rs: runState{
			turns: map[string]bool{}, answers: map[string]answerState{}, cards: map[string]*cardState{},
			statuses: map[string]*statusLine{}, titles: map[string]string{},
		},
	}
}

// push queues it for the session's goroutine; false when the session ended.
func (s *session) push(it any) bool {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return false
	}
	s.items = append(s.items, it)
	s.mu.Unlock()
	s.signal()
	return true
}

func (s *session) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *session) take() []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.items
	s.items = nil
	return items
}

func (s *session) isReady() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

// closeIfIdle ends the session when nothing is queued. The caller holds
// the bridge's lock.
func (s *session) closeIfIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.items) > 0 {
		return false
	}
	s.ended = true
	return true
}

// run is the session's goroutine.
func (s *session) run(ctx context.Context) {
	defer s.shutdown()
	var idleC <-chan time.Time
	var idle *time.Timer
	if !s.owner {
		idle = time.NewTimer(s.b.cfg.IdleTimeout)
		defer idle.Stop()
		idleC = idle.C
	}
	for {
		items := s.take()
		for _, it := range items {
			s.handle(it)
			if s.rs.ending {
				return
			}
		}
		if idle != nil && len(items) > 0 {
			idle.Reset(s.b.cfg.IdleTimeout)
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return
		case <-idleC:
			if !s.busy() && s.b.forget(s) {
				return
			}
			idle.Reset(s.b.cfg.IdleTimeout)
		}
	}
}

// busy reports whether the session still has something to finish.
func (s *session) busy() bool {
	r := &s.rs
	if len(r.held) > 0 || len(r.waiting) > 0 || len(r.turns) > 0 || len(r.pending) > 0 {
		return true
	}
	for _, st := range r.answers {
		if st == answerSending {
			return true
		}
	}
	return false
}

func (s *session) handle(it any) {
	switch m := it.(type) {
	case *wakeItem:
		s.ensureLink()
	case *endItem:
		s.rs.ending = true
	case *linkEvent:
		if m.l == s.rs.link {
			s.onEvent(m.ev)
		}
	case *linkClosed:
		s.onLinkClosed(m)
	case *submitItem:
		s.onSubmit(m)
	case *readyItem:
		s.onReadyWait(m)
	case *callbackItem:
		s.onCallback(m)
	case *outcomeItem:
		s.onOutcome(m)
	case *deliveredItem:
		s.onDelivered(m)
	case *reattachItem:
		s.rs.reattaching = false
		s.ensureLink()
	case *typingCapItem:
		s.stopTyping()
	}
}

// shutdown ends the session: its link is closed (the runtime keeps what
// was not confirmed), and everyone waiting on it is told.
func (s *session) shutdown() {
	s.b.mu.Lock()
	if s.b.sessions[s.chat] == s {
		delete(s.b.sessions, s.chat)
	}
	s.mu.Lock()
	s.ended = true
	s.ready = false
	left := s.items
	s.items = nil
	s.b.mu.Unlock()
	s.mu.Unlock()
	for _, it := range left {
		switch m := it.(type) {
		case *submitItem:
			m.done <- ErrSessionEnded
		case *readyItem:
			close(m.done)
		}
	}
	s.stopTyping()
	s.dropLink()
	for _, w := range s.rs.readyW {
		close(w)
	}
	s.rs.readyW = nil
	s.failSubmits(&s.rs.held)
}

// failSubmits tells every submit of list that it was not taken.
func (s *session) failSubmits(list *[]*submitItem) {
	for _, m := range *list {
		m.done <- ErrSessionEnded
	}
	*list = nil
}

// link is one in-process connection of a session to the runtime: the
// messages.Outbound the runtime writes to. Send never blocks.
type link struct {
	s  *session
	id string
}

var _ messages.Outbound = (*link)(nil)

func (l *link) Send(ev any) bool {
	s := l.s
	s.mu.Lock()
	if s.ended || s.live != l {
		s.mu.Unlock()
		return false
	}
	if len(s.items) >= maxSessionItems {
		// A slow consumer: close as the web channel would.
		s.live = nil
		s.items = append(s.items, &linkClosed{l: l, code: 1008, reason: "send queue full"})
		s.mu.Unlock()
		s.signal()
		return false
	}
	s.items = append(s.items, &linkEvent{l: l, ev: ev})
	s.mu.Unlock()
	s.signal()
	return true
}

func (l *link) Close(code int, reason string) {
	s := l.s
	s.mu.Lock()
	if s.live != l {
		s.mu.Unlock()
		return
	}
	s.live = nil
	s.items = append(s.items, &linkClosed{l: l, code: code, reason: reason})
	s.mu.Unlock()
	s.signal()
}

// ensureLink attaches a link unless one is attached or a reattach is
// scheduled.
func (s *session) ensureLink() {
	if s.rs.conn != nil || s.rs.reattaching {
		return
	}
	s.attach()
}

func (s *session) attach() {
	r := &s.rs
	r.seq++
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	l := &link{s: s, id: "tg-" + strconv.FormatInt(s.chat, 10) + "-" + strconv.Itoa(r.seq) + "-" + hex.EncodeToString(nonce[:])}
	info := messages.ConnInfo{ID: l.id, Path: "/chat", RemoteIP: "telegram:" + strconv.FormatInt(s.user, 10)}
	if s.owner {
		info.Path, info.RemoteIP = "/ws", "telegram:owner"
	}
	s.mu.Lock()
	s.live = l
	s.mu.Unlock()
	conn := s.b.cfg.Gateway.Attach(info, l)
	if conn == nil {
		s.mu.Lock()
		s.live = nil
		s.mu.Unlock()
		s.b.log.Error().Int64("chat", s.chat).Msg("telegram: the runtime refused the chat's session; retrying")
		s.scheduleReattach()
		return
	}
	r.link, r.conn, r.ready, r.resumeTried = l, conn, false, false
	if s.owner {
		conn.Frame(&messages.Frame{Type: messages.TypeAuth, Token: s.b.cfg.OwnerToken, Receipts: true})
	}
}

// dropLink closes the session's link from this side.
func (s *session) dropLink() {
	r := &s.rs
	if r.conn == nil {
		return
	}
	s.mu.Lock()
	if s.live == r.link {
		s.live = nil
	}
	s.ready = false
	s.mu.Unlock()
	conn := r.conn
	r.link, r.conn, r.ready = nil, nil, false
	conn.Closed()
	s.failSubmits(&r.waiting)
}

func (s *session) scheduleReattach() {
	r := &s.rs
	if r.reattaching {
		return
	}
	r.backoff = min(max(2*r.backoff, minReattach), maxReattach)
	r.reattaching = true
	time.AfterFunc(r.backoff, func() { s.push(&reattachItem{}) })
}

// onLinkClosed handles the runtime closing the link: the session ended on
// the server (a restart of the session, a refused token, a slow consumer).
func (s *session) onLinkClosed(m *linkClosed) {
	r := &s.rs
	if m.l != r.link {
		return
	}
	wasReady, resumed := r.ready, r.resumeTried
	s.b.log.Info().Int64("chat", s.chat).Int("code", m.code).Str("reason", m.reason).Msg("telegram: the runtime closed the chat's session")
	s.stopTyping()
	s.dropLink()
	clear(r.turns)
	switch {
	case !s.owner && !wasReady && resumed:
		// The runtime refused the stored session token (expired): start
		// a new session at once.
		if err := s.b.cfg.Store.DeleteCustomerToken(context.Background(), s.user); err != nil {
			s.b.log.Error().Err(err).Int64("user", s.user).Msg("telegram: forget a refused session token")
		}
		s.attach()
	case s.owner || s.busy() || len(r.readyW) > 0:
		s.scheduleReattach()
	}
}

// setReady is called once the link is authenticated: what waited goes.
func (s *session) setReady() {
	r := &s.rs
	r.ready, r.backoff = true, 0
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
	for _, w := range r.readyW {
		close(w)
	}
	r.readyW = nil
	held := r.held
	r.held = nil
	for _, m := range held {
		s.sendSubmit(m)
	}
	pending := r.pending
	r.pending = nil
	for _, m := range pending {
		s.onCallback(m)
	}
}

func (s *session) onSubmit(m *submitItem) {
	if !s.rs.ready {
		s.rs.held = append(s.rs.held, m)
		s.ensureLink()
		return
	}
	s.sendSubmit(m)
}

func (s *session) sendSubmit(m *submitItem) {
	r := &s.rs
	if m.noAck {
		r.conn.Frame(m.frame)
		m.done <- nil
		return
	}
	if len(r.waiting) >= 64 {
		// Their handlers gave up long ago: the runtime never answered.
		r.waiting[0].done <- ErrNotAcknowledged
		r.waiting = r.waiting[1:]
	}
	r.waiting = append(r.waiting, m)
	r.conn.Frame(m.frame)
}

func (s *session) onReadyWait(m *readyItem) {
	if s.rs.ready {
		close(m.done)
		return
	}
	s.rs.readyW = append(s.rs.readyW, m.done)
	s.ensureLink()
}

// frame hands f to the runtime on the current link, if it is ready.
func (s *session) frame(f *messages.Frame) bool {
	if !s.rs.ready || s.rs.conn == nil {
		return false
	}
	s.rs.conn.Frame(f)
	return true
}

// startTyping shows "typing…" while a turn runs, for at most maxTyping.
func (s *session) startTyping() {
	r := &s.rs
	if r.typing != nil {
		return
	}
	r.typing = StartTyping(s.b.ctx, s.b.cfg.Client, s.chat, nil)
	r.typeCap = time.AfterFunc(maxTyping, func() { s.push(&typingCapItem{}) })
}

func (s *session) stopTyping() {
	r := &s.rs
	if r.typing == nil {
		return
	}
	r.typeCap.Stop()
	r.typing()
	r.typing, r.typeCap = nil, nil
}

// enqueue sends msgs through the outbox; when it is full the link is
// closed, so that the runtime keeps the answers and hands them to the
// next link.
func (s *session) enqueue(msgs ...Message) bool {
	if err := s.b.out.Enqueue(msgs...); err != nil {
		s.b.log.Error().Err(err).Int64("chat", s.chat).Msg("telegram: message not queued")
		if s.rs.conn != nil {
			s.dropLink()
			s.scheduleReattach()
		}
		return false
	}
	return true
}
