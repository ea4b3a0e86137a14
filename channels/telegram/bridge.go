package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/messages"
)

// BridgeStore is the durable state of the bridge; the daemon backs it with
// Badger (persistence.Telegram). Besides the transport's stores it keeps
// the owner's pairing, each customer's session token, and which customers
// wait for an answer (so that their sessions come back after a restart).
type BridgeStore interface {
	OffsetStore
	Seen
	PairingStore
	UsedSet
	// MarkSeen records that update updateID was handled (Seen answers
	// true for it from then on).
	MarkSeen(ctx context.Context, updateID int64) error
	// OwnerChat returns the paired owner chat; ok is false when none is.
	OwnerChat(ctx context.Context) (chatID int64, ok bool, err error)
	// Unpair forgets the paired chat and any pending code and returns the
	// chat that was paired, 0 when none was.
	Unpair(ctx context.Context) (was int64, err error)
	// CustomerToken returns the chatbot session token of Telegram user
	// userID; ok is false when none is stored or it expired.
	CustomerToken(ctx context.Context, userID int64) (token string, ok bool, err error)
	// SaveCustomerToken stores userID's session token until expires.
	SaveCustomerToken(ctx context.Context, userID int64, token string, expires time.Time) error
	// DeleteCustomerToken forgets userID's session token.
	DeleteCustomerToken(ctx context.Context, userID int64) error
	// MarkAwaiting records that userID's message messageID waits for its
	// answer; ClearAwaiting forgets it; Awaiting lists the users with a
	// message waiting.
	MarkAwaiting(ctx context.Context, userID int64, messageID string) error
	ClearAwaiting(ctx context.Context, userID int64, messageID string) error
	Awaiting(ctx context.Context) ([]int64, error)
}

// BridgeConfig configures a Bridge.
type BridgeConfig struct {
	// Client talks to the Bot API. Required.
	Client *Client
	// Gateway attaches one session per chat, as the web channel attaches
	// one per WebSocket. Required.
	Gateway messages.Gateway
	// OwnerToken authenticates the owner's chat in-process (it never
	// travels through Telegram). Required.
	OwnerToken string
	// Store keeps the bridge's durable state. Required.
	Store BridgeStore
	// Signer signs and verifies card buttons. Required.
	Signer *Signer
	// OwnerChatID is channels.telegram.owner_chat_id; 0 means the owner
	// pairs a chat with a code.
	OwnerChatID int64
	// ChatbotEnabled (silas.chatbot.enabled) lets other Telegram users talk
	// to Silas as chatbot customers, each in their own scope; without it
	// they get a polite refusal.
	ChatbotEnabled bool
	// WebAppURL is the web app's base URL, for cards that must be answered
	// there (high risk, irreversible, secure input). Required.
	WebAppURL string
	// GateTimeout is how long a gate_approval card can be answered
	// (silas.gates.approval_timeout_seconds). Default 120s.
	GateTimeout time.Duration
	// SessionTTL is how long a customer's session token is valid
	// (silas.chatbot.session_ttl_hours). Default 720h.
	SessionTTL time.Duration
	// AckTimeout bounds the wait for the runtime to journal a message.
	// Default 30s.
	AckTimeout time.Duration
	// IdleTimeout ends a customer's session after this long without
	// activity; their next message starts it again. Default 30 minutes.
	IdleTimeout time.Duration
	// Outbox configures pacing; OnDelivered and OnFailed are the bridge's
	// own and are ignored here.
	Outbox OutboxConfig
	// Now is the clock of card and pairing expiry; nil is time.Now.
	Now func() time.Time
	// Log receives the bridge's logs; the zero value discards them. The
	// bot token never appears in them.
	Log zerolog.Logger
	// OnPaired, when set, is called once a chat was paired as the owner's
	// (the daemon audits it).
	OnPaired func(chatID int64)
	// BeforeSubmit, when set, is called with each message update just
	// before it is handed to the runtime. Tests use it to stop the process
	// at that point.
	BeforeSubmit func(Update)
}

// Bridge is the Telegram channel's session side: it turns Telegram updates
// into client frames of the wire protocol (messages.Frame), one in-process
// session per chat through messages.Gateway, and the runtime's server
// events into Telegram messages, edits and inline keyboards. The owner's
// chat authenticates as the owner with receipts on; each other user, when
// chatbot mode is on, is a customer (/chat) whose session token is kept,
// so that one Telegram user is one customer scope.
//
// Its Handle is the Poller's or Webhook's Handler: it returns nil for a
// message only once the runtime acknowledged it (journaled), so the update
// offset advances only then, and message ids derived from update ids
// ("tg-<update_id>") let the runtime drop a message handled before a
// crash. Everything it sends goes through one Outbox. No call into the
// runtime blocks: sessions are the bridge's own goroutines.
type Bridge struct {
	cfg    BridgeConfig
	out    *Outbox
	pairer *Pairer
	log    zerolog.Logger

	mu       sync.Mutex
	owner    int64 // the owner's chat, 0 when none is paired
	sessions map[int64]*session
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	started  bool
	stopped  bool
}

// NewBridge checks cfg and returns a Bridge; Start starts it.
func NewBridge(cfg BridgeConfig) (*Bridge, error) {
	switch {
	case cfg.Client == nil, cfg.Gateway == nil, cfg.Store == nil, cfg.Signer == nil:
		return nil, fmt.Errorf("%w: the bridge needs a Client, a Gateway, a Store and a Signer", ErrInvalidConfig)
	case cfg.OwnerToken == "":
		return nil, fmt.Errorf("%w: the bridge needs the owner token", ErrInvalidConfig)
	case cfg.WebAppURL == "":
		return nil, fmt.Errorf("%w: the bridge needs the web app's URL (channels.telegram.web_app_url)", ErrInvalidConfig)
	}
	if cfg.GateTimeout <= 0 {
		cfg.GateTimeout = 120 * time.Second
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 720 * time.Hour
	}
	if cfg.AckTimeout <= 0 {
		cfg.AckTimeout = 30 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.WebAppURL = strings.TrimRight(cfg.WebAppURL, "/")
	b := &Bridge{cfg: cfg, log: cfg.Log, sessions: map[int64]*session{}}
	oc := cfg.Outbox
	oc.OnDelivered = b.onDelivered
	oc.OnFailed = b.onFailed
	b.out = NewOutbox(cfg.Client, oc)
	b.pairer = NewPairer(cfg.Store, nowClock{cfg.Now})
	return b, nil
}

// nowClock is a Clock whose Now is the bridge's expiry clock and whose
// timers are real.
type nowClock struct{ now func() time.Time }

func (c nowClock) Now() time.Time                         { return c.now() }
func (c nowClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Start loads the owner's chat, starts the outbox, attaches the owner's
// session and resumes the sessions of customers who wait for an answer.
// The bridge runs until Stop.
func (b *Bridge) Start(ctx context.Context) error {
	owner := b.cfg.OwnerChatID
	if owner == 0 {
		id, ok, err := b.cfg.Store.OwnerChat(ctx)
		if err != nil {
			return fmt.Errorf("telegram: load the owner's chat: %w", err)
		}
		if ok {
			owner = id
		}
	}
	waiting, err := b.cfg.Store.Awaiting(ctx)
	if err != nil {
		return fmt.Errorf("telegram: load customers waiting for answers: %w", err)
	}
	b.mu.Lock()
	if b.started {
		b.mu.Unlock()
		return fmt.Errorf("%w: the bridge was started already", ErrInvalidConfig)
	}
	b.started = true
	b.owner = owner
	b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(ctx))
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		_ = b.out.Run(b.ctx)
	}()
	if owner != 0 {
		b.sessionLocked(owner, 0, true).push(&wakeItem{})
	}
	if b.cfg.ChatbotEnabled {
		for _, user := range waiting {
			if user != owner && user > 0 {
				b.sessionLocked(user, user, false).push(&wakeItem{})
			}
		}
	}
	b.mu.Unlock()
	return nil
}

// Stop ends every session (the runtime keeps their unconfirmed answers for
// the next start), stops the outbox and waits for the bridge's goroutines,
// or for ctx.
func (b *Bridge) Stop(ctx context.Context) error {
	b.mu.Lock()
	if !b.started || b.stopped {
		b.stopped = true
		b.mu.Unlock()
		return nil
	}
	b.stopped = true
	b.cancel()
	b.mu.Unlock()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("telegram: stop the channel: %w", ctx.Err())
	}
}

// sessionLocked returns chat's session, creating and starting it when
// there is none. b.mu must be held and the bridge running.
func (b *Bridge) sessionLocked(chat, user int64, owner bool) *session {
	if s := b.sessions[chat]; s != nil && s.owner == owner {
		return s
	}
	if old := b.sessions[chat]; old != nil {
		old.push(&endItem{})
	}
	s := newSession(b, chat, user, owner)
	b.sessions[chat] = s
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		s.run(b.ctx)
	}()
	return s
}

// session returns the session for chat (the owner's when owner), or
// ErrBridgeStopped.
func (b *Bridge) session(chat, user int64, owner bool) (*session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.started || b.stopped {
		return nil, ErrBridgeStopped
	}
	return b.sessionLocked(chat, user, owner), nil
}

// forget removes s from the sessions if it is still chat's session and has
// nothing queued; it reports whether s may end.
func (b *Bridge) forget(s *session) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !s.closeIfIdle() {
		return false
	}
	if b.sessions[s.chat] == s {
		delete(b.sessions, s.chat)
	}
	return true
}

// ownerChat returns the owner's chat, 0 when none is paired.
func (b *Bridge) ownerChat() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.owner
}

// Pair issues a one-time pairing code (valid PairingTTL) for the owner to
// send as `/start <code>` from the chat to pair; only its hash is stored.
func (b *Bridge) Pair(ctx context.Context) (code string, expires time.Time, err error) {
	if b.cfg.OwnerChatID != 0 {
		return "", time.Time{}, ErrPairingConfigured
	}
	return b.pairer.Issue(ctx)
}

// Unpair forgets the owner's paired chat: it ends its session and tells
// the chat. It returns the chat that was paired, 0 when none was.
func (b *Bridge) Unpair(ctx context.Context) (int64, error) {
	if b.cfg.OwnerChatID != 0 {
		return 0, ErrPairingConfigured
	}
	was, err := b.cfg.Store.Unpair(ctx)
	if err != nil {
		return 0, fmt.Errorf("telegram: unpair: %w", err)
	}
	b.mu.Lock()
	b.owner = 0
	if s := b.sessions[was]; s != nil && s.owner {
		delete(b.sessions, was)
		s.push(&endItem{})
	}
	b.mu.Unlock()
	if was != 0 {
		b.notice(was, "This chat is no longer paired with Silas. Run <code>silas telegram pair</code> to pair a chat again.")
	}
	return was, nil
}

// bind makes chat the owner's chat after a successful pairing.
func (b *Bridge) bind(chat int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	old := b.owner
	b.owner = chat
	if s := b.sessions[old]; old != chat && s != nil && s.owner {
		delete(b.sessions, old)
		s.push(&endItem{})
	}
	b.sessionLocked(chat, 0, true).push(&wakeItem{})
}

// BridgeStatus is what `silas telegram status` shows.
type BridgeStatus struct {
	// OwnerChatID is the owner's chat, 0 when none is paired.
	OwnerChatID int64 `json:"owner_chat_id,omitempty"`
	// OwnerConfigured is true when channels.telegram.owner_chat_id names
	// the chat (pairing is off).
	OwnerConfigured bool `json:"owner_configured"`
	// OwnerConnected is true while the owner chat's session is attached
	// and authenticated.
	OwnerConnected bool `json:"owner_connected"`
	// PairingExpires is set while a pairing code waits to be used.
	PairingExpires *time.Time `json:"pairing_expires,omitempty"`
	// Customers counts the customers' open sessions.
	Customers int `json:"customers"`
	// Queued counts messages waiting in the outbox.
	Queued int `json:"queued"`
}

// Status reports the bridge's state.
func (b *Bridge) Status(ctx context.Context) (BridgeStatus, error) {
	st := BridgeStatus{OwnerConfigured: b.cfg.OwnerChatID != 0, Queued: b.out.Len()}
	p, ok, err := b.cfg.Store.LoadPending(ctx)
	if err != nil {
		return BridgeStatus{}, fmt.Errorf("telegram: status: %w", err)
	}
	if ok && b.cfg.Now().Before(p.Expires) {
		exp := p.Expires
		st.PairingExpires = &exp
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st.OwnerChatID = b.owner
	for _, s := range b.sessions {
		if s.owner {
			st.OwnerConnected = s.isReady()
		} else {
			st.Customers++
		}
	}
	return st, nil
}

// notice sends one plain notice to chat (HTML already escaped by the
// caller), outside any session.
func (b *Bridge) notice(chat int64, html string) {
	if err := b.out.Enqueue(Message{ChatID: chat, HTML: html}); err != nil {
		b.log.Warn().Err(err).Int64("chat", chat).Msg("telegram: notice not sent")
	}
}

// Refs tie an outbox message back to what it delivers:
// "<kind>:<chat>:<key>".
const (
	refAnswer = 'a' // the last chunk of an answer; key = reply_to
	refCard   = 'c' // a card; key = request id
	refStatus = 's' // a work item's status line; key = work item id
)

func makeRef(kind byte, chat int64, key string) string {
	return string(kind) + ":" + strconv.FormatInt(chat, 10) + ":" + key
}

func parseRef(ref string) (kind byte, chat int64, key string, ok bool) {
	parts := strings.SplitN(ref, ":", 3)
	if len(parts) != 3 || len(parts[0]) != 1 {
		return 0, 0, "", false
	}
	chat, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return 0, 0, "", false
	}
	return parts[0][0], chat, parts[2], true
}

// onDelivered routes the outbox's report to the chat's session.
func (b *Bridge) onDelivered(d Delivery) {
	b.route(d.Message, d.MessageID, nil)
}

// onFailed routes a refused message to the chat's session; an answer that
// Telegram refuses for good (the user blocked the bot) is not retried.
func (b *Bridge) onFailed(m Message, err error) {
	b.log.Warn().Err(err).Int64("chat", m.ChatID).Msg("telegram: message refused by the Bot API")
	b.route(m, 0, err)
}

func (b *Bridge) route(m Message, id int, failed error) {
	kind, chat, key, ok := parseRef(m.Ref)
	if !ok {
		return
	}
	b.mu.Lock()
	s := b.sessions[chat]
	b.mu.Unlock()
	if s != nil {
		s.push(&deliveredItem{kind: kind, key: key, messageID: id, failed: failed})
	}
}

// errRejected is the runtime's refusal of a message (busy, rate limited,
// disk full): the user is told, and the update is done.
type errRejected struct{ text string }

func (e *errRejected) Error() string { return "telegram: message refused by the runtime: " + e.text }

func isRejected(err error) (string, bool) {
	var r *errRejected
	if errors.As(err, &r) {
		return r.text, true
	}
	return "", false
}
