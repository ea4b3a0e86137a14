package telegram_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
	"github.com/silas-ai/silas/messages"
)

const ownerChat int64 = 4242

// syncBuf is a log sink goroutines can share.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// movableNow is the bridge's expiry clock, moved by the test.
type movableNow struct {
	mu  sync.Mutex
	off time.Duration
}

func (m *movableNow) now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return time.Now().Add(m.off)
}

func (m *movableNow) advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.off += d
}

type bridgeEnv struct {
	bot   *fakebot.Server
	rt    *fakeRuntime
	store *memStore
	b     *telegram.Bridge
	cfg   telegram.BridgeConfig
	logs  *syncBuf
	clock *movableNow
}

// startBridge runs a Bridge against a fake Bot API and a fake runtime,
// with long polling; mutate changes the configuration first.
func startBridge(t *testing.T, mutate func(*telegram.BridgeConfig)) *bridgeEnv {
	t.Helper()
	e := &bridgeEnv{bot: fakebot.Start(t, fakebot.Options{}), rt: newFakeRuntime(), store: newMemStore(), logs: &syncBuf{}, clock: &movableNow{}}
	e.cfg = telegram.BridgeConfig{
		Client: newClient(t, e.bot), Gateway: e.rt, OwnerToken: testOwnerToken, Store: e.store, Signer: mustSigner(t, testKey),
		WebAppURL: "https://silas.example.com/", Outbox: telegram.OutboxConfig{PerChat: time.Millisecond},
		AckTimeout: 10 * time.Second, Now: e.clock.now, Log: zerolog.New(e.logs).Level(zerolog.DebugLevel),
	}
	if mutate != nil {
		mutate(&e.cfg)
	}
	e.run(t)
	return e
}

// run starts a bridge on e's configuration and store (again, after a
// restart) and its poller.
func (e *bridgeEnv) run(t *testing.T) {
	t.Helper()
	b, err := telegram.NewBridge(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.b = b
	t.Cleanup(func() {
		if err := b.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	startPoller(t, telegram.PollerConfig{Client: e.cfg.Client, Store: e.store, Seen: b, Handler: b.Handle})
}

func (e *bridgeEnv) waitSent(t *testing.T, chat int64, substr string, n int) []fakebot.Message {
	t.Helper()
	var got []fakebot.Message
	err := e.bot.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool {
		got = got[:0]
		for _, m := range sn.Sent {
			if m.ChatID == chat && strings.Contains(m.Plain, substr) {
				got = append(got, m)
			}
		}
		return len(got) >= n
	})
	if err != nil {
		t.Fatalf("waiting for %d messages with %q in chat %d: %v", n, substr, chat, err)
	}
	return got
}

func TestBridgeOwnerAnswerSplitAndConfirmed(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat(strings.Repeat("Paragraph words here. ", 40)+"\n\n", 6))
	e := startBridge(t, func(c *telegram.BridgeConfig) { c.OwnerChatID = ownerChat })
	turn := make(chan *fakeConn, 1)
	e.rt.script(false, func(c *fakeConn, f *messages.Frame) { turn <- c }, nil)
	e.bot.KnownChat(ownerChat)
	id := e.bot.PushMessage(ownerChat, ownerChat, "tell me a lot")
	msgID := "tg-" + itoa(id)
	c := <-turn
	// While the turn runs, the chat shows "typing…".
	if err := e.bot.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return len(sn.Actions) > 0 }); err != nil {
		t.Fatal("no typing indicator while the turn ran:", err)
	}
	c.answer(msgID, long)
	frames := e.rt.waitFrames(t, "the receipt of the answer", func(fs []recordedFrame) bool {
		return hasFrame(fs, messages.TypeReceived, msgID)
	})
	// The owner's chat authenticated as the owner, receipts on, then the
	// message with its update-derived id.
	if frames[0].f.Type != messages.TypeAuth || frames[0].f.Token != testOwnerToken || !frames[0].f.Receipts {
		t.Fatalf("first frame %+v", frames[0].f)
	}
	if frames[1].f.Type != messages.TypeMessage || frames[1].f.MessageID != msgID || frames[1].f.Text != "tell me a lot" {
		t.Fatalf("message frame %+v", frames[1].f)
	}
	parts := e.waitSent(t, ownerChat, "Paragraph", 2)
	if len(parts) != 2 {
		t.Fatalf("%d parts", len(parts))
	}
	if err := e.bot.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return sn.Pending == 0 }); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.logs.String(), e.bot.Token()) {
		t.Fatal("the bot token reached the log")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestBridgeHandleWaitsForTheAck(t *testing.T) {
	e := startBridge(t, func(c *telegram.BridgeConfig) {
		c.OwnerChatID = ownerChat
		c.AckTimeout = 100 * time.Millisecond
	})
	e.rt.script(true, nil, nil)
	u := telegram.Update{ID: 77, Kind: telegram.KindMessage, ChatID: ownerChat, ChatType: "private", From: telegram.User{ID: ownerChat}, Text: "hi"}
	err := e.b.Handle(context.Background(), u)
	if !errors.Is(err, telegram.ErrNotAcknowledged) {
		t.Fatalf("Handle without an ack: %v", err)
	}
	if seen, _ := e.store.Seen(context.Background(), 77); seen {
		t.Fatal("an unacknowledged update was marked handled")
	}
	e.rt.script(false, nil, nil)
	if err := e.b.Handle(context.Background(), u); err != nil {
		t.Fatalf("Handle again: %v", err)
	}
	if seen, _ := e.store.Seen(context.Background(), 77); !seen {
		t.Fatal("the acknowledged update was not marked handled")
	}
}

func TestBridgeRejectedMessageIsToldAndDone(t *testing.T) {
	e := startBridge(t, func(c *telegram.BridgeConfig) { c.OwnerChatID = ownerChat })
	e.rt.script(false, nil, func(*messages.Frame) string { return "busy: 20 messages wait <already>" })
	e.bot.PushMessage(ownerChat, ownerChat, "one more")
	got := e.waitSent(t, ownerChat, "busy", 1)[0]
	if got.Plain != "⚠️ busy: 20 messages wait <already>" {
		t.Fatalf("refusal reads %q", got.Plain)
	}
	if err := e.bot.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return sn.Pending == 0 }); err != nil {
		t.Fatal("a refused message was not confirmed:", err)
	}
}

func TestBridgeStrangersAndGroups(t *testing.T) {
	e := startBridge(t, func(c *telegram.BridgeConfig) { c.OwnerChatID = ownerChat })
	e.bot.PushMessage(31, 31, "hello?")
	e.waitSent(t, 31, "private assistant", 1)
	e.bot.PushMessage(-100, 32, "hello group")
	e.waitSent(t, -100, "private chats only", 1)
	e.rt.mu.Lock()
	defer e.rt.mu.Unlock()
	for _, c := range e.rt.conns {
		if c.info.Path == "/chat" {
			t.Fatal("a stranger got a session although chatbot mode is off")
		}
	}
}

// TestBridgeCustomerSessions: each Telegram user is one customer scope,
// resumed with the stored session token after a restart; a token the
// runtime refuses is replaced by a new session.
func TestBridgeCustomerSessions(t *testing.T) {
	e := startBridge(t, func(c *telegram.BridgeConfig) { c.ChatbotEnabled = true })
	const alice, bob int64 = 501, 502
	e.bot.PushMessage(alice, alice, "hi from alice")
	e.bot.PushMessage(bob, bob, "hi from bob")
	e.waitSent(t, alice, "echo: hi from alice", 1)
	e.waitSent(t, bob, "echo: hi from bob", 1)
	aliceTok, bobTok := e.store.token(alice), e.store.token(bob)
	if aliceTok == "" || bobTok == "" || aliceTok == bobTok {
		t.Fatalf("stored tokens %q %q", aliceTok, bobTok)
	}
	scopes := map[string]string{}
	for _, f := range e.rt.waitFrames(t, "both messages", func(fs []recordedFrame) bool { return len(fs) >= 4 }) {
		if f.f.Type == messages.TypeMessage {
			scopes[f.f.Text] = f.scope
		}
	}
	if scopes["hi from alice"] == "" || scopes["hi from alice"] == scopes["hi from bob"] {
		t.Fatalf("customers share a scope: %v", scopes)
	}
	e.rt.waitFrames(t, "both receipts", func(fs []recordedFrame) bool {
		n := 0
		for _, f := range fs {
			if f.f.Type == messages.TypeReceived && f.f.ReplyTo != "" {
				n++
			}
		}
		return n == 2
	})
	if users, _ := e.store.Awaiting(context.Background()); len(users) != 0 {
		t.Fatalf("answered customers still marked awaiting: %v", users)
	}

	// Restart: alice resumes her scope; bob's token was revoked meanwhile,
	// so he gets a new session.
	if err := e.b.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.rt.mu.Lock()
	delete(e.rt.tokens, bobTok)
	e.rt.mu.Unlock()
	e.run(t)
	e.bot.PushMessage(alice, alice, "alice again")
	e.bot.PushMessage(bob, bob, "bob again")
	e.waitSent(t, alice, "echo: alice again", 1)
	e.waitSent(t, bob, "echo: bob again", 1)
	for _, f := range e.rt.waitFrames(t, "the second messages", func(fs []recordedFrame) bool { return len(fs) >= 8 }) {
		switch f.f.Text {
		case "alice again":
			if f.scope != scopes["hi from alice"] {
				t.Fatalf("alice resumed scope %q, want %q", f.scope, scopes["hi from alice"])
			}
		case "bob again":
			if f.scope == scopes["hi from bob"] || f.scope == "" {
				t.Fatalf("bob's refused token kept scope %q", f.scope)
			}
		}
	}
	if tok := e.store.token(bob); tok == bobTok || tok == "" {
		t.Fatalf("bob's new token %q", tok)
	}
}

// TestBridgeAnswerHandedAgainIsNotSentTwice: after the runtime restarts a
// session, it hands unconfirmed answers to the new link; one Telegram has
// already is confirmed, not sent again.
func TestBridgeAnswerHandedAgainIsNotSentTwice(t *testing.T) {
	e := startBridge(t, func(c *telegram.BridgeConfig) { c.OwnerChatID = ownerChat })
	e.bot.KnownChat(ownerChat)
	e.bot.PushMessage(ownerChat, ownerChat, "once")
	e.waitSent(t, ownerChat, "echo: once", 1)
	first := e.rt.conn(t, 0)
	e.rt.waitFrames(t, "the receipt", func(fs []recordedFrame) bool { return hasFrame(fs, messages.TypeReceived, "tg-100000") })
	first.out.Close(1011, "the session ended on the server; reconnect")
	second := e.rt.conn(t, 1)
	e.rt.waitFrames(t, "the new link's auth", func(fs []recordedFrame) bool {
		n := 0
		for _, f := range fs {
			if f.f.Type == messages.TypeAuth {
				n++
			}
		}
		return n == 2
	})
	second.answer("tg-100000", "echo: once")
	e.rt.waitFrames(t, "the receipt on the new link", func(fs []recordedFrame) bool {
		for _, f := range fs {
			if f.conn == second.info.ID && f.f.Type == messages.TypeReceived && f.f.ReplyTo == "tg-100000" {
				return true
			}
		}
		return false
	})
	if n := len(e.waitSent(t, ownerChat, "echo: once", 1)); n != 1 {
		t.Fatalf("the answer was sent %d times", n)
	}
	e.rt.mu.Lock()
	closed := first.closed
	e.rt.mu.Unlock()
	if !closed {
		t.Fatal("the closed link's Conn was not told Closed")
	}
}

// TestBridgeCards: a gate card is answered with its keyboard; a card id
// with a prefix keeps it in the frame; high-risk cards and secure input
// are only links; forged, replayed and expired taps run nothing.
func TestBridgeCards(t *testing.T) {
	e := startBridge(t, func(c *telegram.BridgeConfig) { c.OwnerChatID = ownerChat })
	e.bot.KnownChat(ownerChat)
	owner := e.rt.conn(t, 0)
	e.rt.waitFrames(t, "the owner's auth", func(fs []recordedFrame) bool { return len(fs) > 0 })

	const gateID = "0b6f3a2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b"
	owner.out.Send(&messages.GateApprovalEvent{Type: "gate_approval", RequestID: gateID, GateName: "spend", Value: "50 USD", Context: map[string]any{}})
	const permID = "conn-7d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6"
	owner.out.Send(&messages.PermissionEscalationEvent{Type: "permission_escalation", RequestID: permID, ConnectionName: "Mail",
		RequestedPermissions: []string{"act"}, Reason: "send a reply", RiskLevel: "medium", ExpiresAt: time.Now().Add(time.Hour)})
	owner.out.Send(&messages.SkillInstallRequestEvent{Type: "approval_request", RequestID: "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9",
		Scope: messages.ApprovalSkillInstall, Title: "Install skill pdf-tools", RiskLevel: "high", ExpiresAt: time.Now().Add(time.Hour)})
	owner.out.Send(&messages.SecureInputRequestEvent{Type: "secure_input_request", RefID: "cn-1-cred",
		Request: messages.SecureInputRequest{RefID: "cn-1-cred", Label: "API key"}})

	gate := e.waitSent(t, ownerChat, `Gate "spend"`, 1)[0]
	perm := e.waitSent(t, ownerChat, "Give Mail more access", 1)[0]
	skill := e.waitSent(t, ownerChat, "Install skill pdf-tools", 1)[0]
	secret := e.waitSent(t, ownerChat, "Silas needs API key", 1)[0]
	for _, m := range []fakebot.Message{skill, secret} {
		if len(m.Keyboard) != 1 || m.Keyboard[0][0].URL != "https://silas.example.com/#review" {
			t.Fatalf("%q offers %+v, want only the app's link", m.Plain, m.Keyboard)
		}
	}
	if len(perm.Keyboard) != 4 {
		t.Fatalf("permission card keyboard %+v", perm.Keyboard)
	}

	tap := func(msg fakebot.Message, row int) string {
		id := e.bot.PushCallback(ownerChat, ownerChat, msg.MessageID, msg.Keyboard[row][0].CallbackData)
		var text string
		err := e.bot.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool {
			for _, a := range sn.Answers {
				if a.CallbackQueryID == id {
					text = a.Text
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	if got := tap(gate, 0); got != "✅ Allowed" {
		t.Fatalf("gate tap answered %q", got)
	}
	if got := tap(perm, 1); got != "☑️ Allowed just this once" {
		t.Fatalf("permission tap answered %q", got)
	}
	frames := e.rt.waitFrames(t, "the card answers", func(fs []recordedFrame) bool { return len(fs) >= 3 })
	if f := frames[1].f; f.Type != messages.TypeGateResponse || f.RequestID != gateID || f.Verdict != "approved" {
		t.Fatalf("gate answer %+v", f)
	}
	if f := frames[2].f; f.Type != messages.TypePermissionEscalationResponse || f.RequestID != permID || f.Verdict != "just_this_once" {
		t.Fatalf("permission answer %+v", f)
	}
	// Replayed (the other button of an answered card) and forged.
	if got := tap(gate, 1); !strings.Contains(got, "answered already") {
		t.Fatalf("replay answered %q", got)
	}
	forged := gate
	forged.Keyboard = [][]fakebot.Button{{{CallbackData: strings.Repeat("A", 60)}}}
	if got := tap(forged, 0); !strings.Contains(got, "not valid") {
		t.Fatalf("forged answered %q", got)
	}
	// Expired: a gate card lives GateTimeout (default 120 s).
	owner.out.Send(&messages.GateApprovalEvent{Type: "gate_approval", RequestID: "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", GateName: "late"})
	late := e.waitSent(t, ownerChat, `Gate "late"`, 1)[0]
	e.clock.advance(3 * time.Minute)
	if got := tap(late, 0); !strings.Contains(got, "expired") {
		t.Fatalf("expired answered %q", got)
	}
	e.waitSent(t, ownerChat, "Expired: nothing was run", 1)
	if n := len(e.rt.waitFrames(t, "", func([]recordedFrame) bool { return true })); n != 3 {
		t.Fatalf("%d frames reached the runtime, want auth and the two answers", n)
	}
	// The answered cards show their outcome and no buttons.
	cur, _ := e.bot.Current(ownerChat, gate.MessageID)
	if cur.Keyboard != nil || !strings.HasSuffix(cur.Plain, "✅ Allowed") {
		t.Fatalf("answered gate card reads %q %+v", cur.Plain, cur.Keyboard)
	}
}

// TestBridgeWorkItemStatusEditedInPlace: one message per work item,
// edited as it progresses.
func TestBridgeWorkItemStatusEditedInPlace(t *testing.T) {
	e := startBridge(t, func(c *telegram.BridgeConfig) { c.OwnerChatID = ownerChat })
	e.bot.KnownChat(ownerChat)
	owner := e.rt.conn(t, 0)
	e.rt.waitFrames(t, "the owner's auth", func(fs []recordedFrame) bool { return len(fs) > 0 })
	for _, st := range []string{"running", "verification_failed", "running", "done"} {
		owner.out.Send(&messages.WorkItemStatusEvent{Type: "work_item_status", WorkItemID: "w-1", Status: st, Attempt: 1})
	}
	e.waitSent(t, ownerChat, "done", 1)
	sends, ids := 0, map[int]bool{}
	for _, m := range e.bot.Sent() {
		if strings.HasPrefix(m.Plain, "w-1") {
			ids[m.MessageID] = true
			if m.Method == "sendMessage" {
				sends++
			}
		}
	}
	if sends != 1 || len(ids) != 1 {
		t.Fatalf("%d sends over %d messages, want one message edited in place", sends, len(ids))
	}
}

// TestBridgePairing: a wrong or expired code is refused, the right one
// binds the chat and its session authenticates as the owner.
func TestBridgePairing(t *testing.T) {
	e := startBridge(t, nil)
	code, _, err := e.b.Pair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e.bot.PushMessage(ownerChat, ownerChat, "/start 00000-00000")
	e.waitSent(t, ownerChat, "wrong or has expired", 1)
	e.clock.advance(telegram.PairingTTL + time.Second)
	e.bot.PushMessage(ownerChat, ownerChat, "/start "+code)
	e.waitSent(t, ownerChat, "wrong or has expired", 2)
	code, _, err = e.b.Pair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e.bot.PushMessage(ownerChat, ownerChat, "/start "+code)
	e.waitSent(t, ownerChat, "Paired", 1)
	frames := e.rt.waitFrames(t, "the owner's auth", func(fs []recordedFrame) bool { return len(fs) > 0 })
	if frames[0].f.Type != messages.TypeAuth || frames[0].f.Token != testOwnerToken {
		t.Fatalf("paired chat's first frame %+v", frames[0].f)
	}
	st, err := e.b.Status(context.Background())
	if err != nil || st.OwnerChatID != ownerChat || st.PairingExpires != nil {
		t.Fatalf("status %+v %v", st, err)
	}
	if _, _, err := (startBridge(t, func(c *telegram.BridgeConfig) { c.OwnerChatID = 1 })).b.Pair(context.Background()); !errors.Is(err, telegram.ErrPairingConfigured) {
		t.Fatalf("pairing with a configured chat: %v", err)
	}
}
