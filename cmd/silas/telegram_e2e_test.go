package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/skills/connection/fakeoauth"
)

// tgOwner is the owner's private chat in these tests (a private chat's id
// is its user's id).
const tgOwner int64 = 5550001

// shiftedClock is the daemon's clock in these tests: real time plus an
// offset the test moves forward, so that cards and pairing codes expire
// without waiting.
type shiftedClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *shiftedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *shiftedClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// tgEnv is a daemon whose Telegram channel talks to a fake Bot API.
type tgEnv struct {
	t     *testing.T
	mock  *mockllm.Server
	bot   *fakebot.Server
	d     *testDaemon
	logs  *syncBuffer
	clock *shiftedClock
	ov    map[string]any
}

// tgOverrides are the keys that turn the Telegram channel on against bot.
func tgOverrides(t *testing.T, mock *mockllm.Server, bot *fakebot.Server, dir string) map[string]any {
	ov := overrides(t, mock, dir)
	ov["silas.channels.telegram.enabled"] = true
	ov["silas.channels.telegram.token"] = bot.Token()
	ov["silas.channels.telegram.api_url"] = bot.URL()
	ov["silas.channels.telegram.web_app_url"] = "https://silas.example.com"
	ov["silas.chatbot.enabled"] = false
	return ov
}

// startTG starts a daemon with the Telegram channel on; mutate changes the
// configuration first.
func startTG(t *testing.T, mutate func(ov map[string]any)) *tgEnv {
	t.Helper()
	e := &tgEnv{t: t, mock: newMock(t), bot: fakebot.Start(t, fakebot.Options{}), clock: &shiftedClock{}}
	e.ov = tgOverrides(t, e.mock, e.bot, t.TempDir())
	if mutate != nil {
		mutate(e.ov)
	}
	e.start()
	return e
}

// start starts (or starts again) the daemon of e, logging at debug level.
func (e *tgEnv) start() {
	e.t.Helper()
	e.ov["silas.log.level"] = "debug"
	if e.logs == nil {
		e.logs = &syncBuffer{}
	}
	d, err := startDaemonWith(context.Background(), loadConfig(e.t, e.ov), zerolog.New(e.logs).Level(zerolog.DebugLevel),
		daemonOptions{now: e.clock.now, telegramPacing: 5 * time.Millisecond})
	if err != nil {
		e.t.Fatalf("start daemon: %v", err)
	}
	e.d = &testDaemon{daemon: d, t: e.t}
	e.t.Cleanup(e.d.stop)
}

// wait blocks until pred holds for the fake Bot API's state.
func (e *tgEnv) wait(what string, pred func(fakebot.Snapshot) bool) fakebot.Snapshot {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := e.bot.WaitFor(ctx, pred); err != nil {
		e.t.Fatalf("waiting for %s: %v", what, err)
	}
	return e.bot.Snapshot()
}

// sentTo returns what the bot sent (or edited) in chat whose text has
// substr, in order.
func sentTo(sn fakebot.Snapshot, chat int64, substr string) []fakebot.Message {
	var out []fakebot.Message
	for _, m := range sn.Sent {
		if m.ChatID == chat && strings.Contains(m.Plain, substr) {
			out = append(out, m)
		}
	}
	return out
}

// waitText waits until chat received n messages (sends or edits) whose
// text has substr, and returns them.
func (e *tgEnv) waitText(chat int64, substr string, n int) []fakebot.Message {
	e.t.Helper()
	sn := e.wait(fmt.Sprintf("%d messages with %q in chat %d", n, substr, chat), func(sn fakebot.Snapshot) bool {
		return len(sentTo(sn, chat, substr)) >= n
	})
	return sentTo(sn, chat, substr)
}

// answerDirect makes the proxy answer every message at once with
// reply(current message).
func answerDirect(mock *mockllm.Server, reply func(current string) string) {
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if r.Schema != "RouteDecision" {
			return "", 0, false
		}
		return routeDecision("direct", reply(currentMessage(r))), 0, true
	})
}

// tgStatus reads GET /telegram.
func (e *tgEnv) tgStatus() telegramStatus {
	e.t.Helper()
	var st telegramStatus
	pwaJSON(e.t, e.d.Addr(), "GET", "/telegram", "owner-secret-token", "", http.StatusOK, &st)
	return st
}

// noTokenLeak fails when the bot token appears in the daemon's log, the
// audit log, or the given WebSocket frames.
func (e *tgEnv) noTokenLeak(frames [][]byte) {
	e.t.Helper()
	tok := e.bot.Token()
	_, secret, _ := strings.Cut(tok, ":")
	audit, err := e.d.in.db.Audit().Range(context.Background(), 1, 1<<20)
	if err != nil {
		e.t.Fatal(err)
	}
	ab, _ := json.Marshal(audit)
	for name, data := range map[string][]byte{
		"daemon log": []byte(e.logs.String()), "audit log": ab, "websocket frames": bytes.Join(frames, []byte("\n")),
	} {
		if bytes.Contains(data, []byte(secret)) {
			e.t.Errorf("the bot token appears in the %s", name)
		}
	}
}

func TestTelegramPairing(t *testing.T) {
	e := startTG(t, nil)
	answerDirect(e.mock, func(cur string) string {
		if strings.Contains(cur, "hello from telegram") {
			return "Hello owner & friends: <paired>"
		}
		return "ok"
	})
	addr := e.d.Addr()
	if st := e.tgStatus(); !st.Enabled || st.Mode != "polling" || st.BotUsername != "silas_test_bot" || st.OwnerChatID != 0 {
		t.Fatalf("status before pairing %+v", st)
	}

	var first telegramPairing
	pwaJSON(t, addr, "POST", "/telegram/pair", "owner-secret-token", "", http.StatusOK, &first)
	if len(first.Code) != 11 || first.BotUsername != "silas_test_bot" {
		t.Fatalf("pairing answer %+v", first)
	}
	if status, _ := pwaCall(t, addr, "POST", "/telegram/pair", "", ""); status != http.StatusUnauthorized {
		t.Fatalf("POST /telegram/pair without the owner token: %d", status)
	}

	// A wrong code is refused.
	e.bot.PushMessage(tgOwner, tgOwner, "/start ABCDE-FGHJK")
	e.waitText(tgOwner, "wrong or has expired", 1)
	if st := e.tgStatus(); st.OwnerChatID != 0 || st.PairingExpires == nil {
		t.Fatalf("a wrong code paired: %+v", st)
	}
	// An expired code is refused.
	e.clock.advance(11 * time.Minute)
	e.bot.PushMessage(tgOwner, tgOwner, "/start "+first.Code)
	e.waitText(tgOwner, "wrong or has expired", 2)
	if st := e.tgStatus(); st.OwnerChatID != 0 {
		t.Fatalf("an expired code paired: %+v", st)
	}

	// The right code, typed loosely, binds the chat; it works once.
	var code telegramPairing
	pwaJSON(t, addr, "POST", "/telegram/pair", "owner-secret-token", "", http.StatusOK, &code)
	e.bot.PushMessage(tgOwner, tgOwner, "/start "+strings.ToLower(strings.ReplaceAll(code.Code, "-", " ")))
	e.waitText(tgOwner, "Paired", 1)
	const stranger = 5550999
	e.bot.PushMessage(stranger, stranger, "/start "+code.Code)
	e.waitText(stranger, "wrong or has expired", 1)
	checkFor(t, waitLimit, func() bool { return e.tgStatus().OwnerConnected }, "the owner chat's session")
	if st := e.tgStatus(); st.OwnerChatID != tgOwner || st.OwnerConfigured {
		t.Fatalf("status after pairing %+v", st)
	}

	// The owner's message is answered, once, escaped for Telegram.
	e.bot.PushMessage(tgOwner, tgOwner, "hello from telegram")
	got := e.waitText(tgOwner, "Hello owner", 1)
	if got[0].Plain != "Hello owner & friends: <paired>" || !strings.Contains(got[0].Text, "&amp;") || !strings.Contains(got[0].Text, "&lt;paired&gt;") {
		t.Fatalf("answer %q (sent as %q)", got[0].Plain, got[0].Text)
	}
	// Its update is confirmed: nothing stays pending at the fake.
	e.wait("every update confirmed", func(sn fakebot.Snapshot) bool { return sn.Pending == 0 })
	if n := len(sentTo(e.bot.Snapshot(), tgOwner, "Hello owner")); n != 1 {
		t.Fatalf("the answer arrived %d times", n)
	}
	if n := len(pwaAudit(t, e.d, "telegram_paired")); n != 1 {
		t.Fatalf("%d telegram_paired audit entries", n)
	}
	for _, a := range pwaAudit(t, e.d, "telegram_pairing_code_issued") {
		if bytes.Contains(a.Data, []byte(strings.ReplaceAll(code.Code, "-", ""))) || bytes.Contains(a.Data, []byte(code.Code)) {
			t.Fatal("a pairing code reached the audit log")
		}
	}

	// Unpairing ends it: the chat is told, and then refused.
	var un telegramUnpaired
	pwaJSON(t, addr, "DELETE", "/telegram/pair", "owner-secret-token", "", http.StatusOK, &un)
	if !un.Unpaired || un.ChatID != tgOwner {
		t.Fatalf("unpair answer %+v", un)
	}
	e.waitText(tgOwner, "no longer paired", 1)
	e.bot.PushMessage(tgOwner, tgOwner, "are you still there?")
	e.waitText(tgOwner, "private assistant", 1)
	if st := e.tgStatus(); st.OwnerChatID != 0 {
		t.Fatalf("status after unpairing %+v", st)
	}
	e.noTokenLeak(nil)
}

// tgCard returns the last message in chat with an inline keyboard whose
// text has substr.
func tgCard(t *testing.T, sn fakebot.Snapshot, chat int64, substr string) fakebot.Message {
	t.Helper()
	var card fakebot.Message
	for _, m := range sentTo(sn, chat, substr) {
		if m.Method == "sendMessage" && m.Keyboard != nil {
			card = m
		}
	}
	if card.MessageID == 0 {
		t.Fatalf("no card with %q in chat %d", substr, chat)
	}
	return card
}

// tgButtons returns a card's callback data by label prefix and its link.
func tgButtons(m fakebot.Message) (callbacks map[string]string, link string) {
	callbacks = map[string]string{}
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.URL != "" {
				link = b.URL
			} else {
				callbacks[b.Text] = b.CallbackData
			}
		}
	}
	return callbacks, link
}

// tap presses a button and waits for the answer to the callback query.
func (e *tgEnv) tap(chat int64, msgID int, data string) string {
	e.t.Helper()
	id := e.bot.PushCallback(chat, chat, msgID, data)
	sn := e.wait("the answer to callback "+id, func(sn fakebot.Snapshot) bool {
		for _, a := range sn.Answers {
			if a.CallbackQueryID == id {
				return true
			}
		}
		return false
	})
	for _, a := range sn.Answers {
		if a.CallbackQueryID == id {
			return a.Text
		}
	}
	return ""
}

// TestTelegramPlanApprovedInChat: with no web client connected, the
// plan's card reaches the owner's chat, is approved with its inline
// keyboard, and the work item's status message is edited through running
// to done; forged, replayed, cross-chat and expired taps run nothing.
func TestTelegramPlanApprovedInChat(t *testing.T) {
	e := startTG(t, func(ov map[string]any) {
		ov["silas.channels.telegram.owner_chat_id"] = fmt.Sprint(tgOwner)
		ov["silas.approval.request_timeout_seconds"] = 120
	})
	scriptPlanner(e.mock)
	e.bot.KnownChat(tgOwner)
	checkFor(t, waitLimit, func() bool { return e.tgStatus().OwnerConnected }, "the owner chat's session")

	e.bot.PushMessage(tgOwner, tgOwner, "please write hello.txt")
	sn := e.wait("the plan's card", func(sn fakebot.Snapshot) bool {
		for _, m := range sentTo(sn, tgOwner, "Write hello.txt") {
			if m.Keyboard != nil {
				return true
			}
		}
		return false
	})
	card := tgCard(t, sn, tgOwner, "Write hello.txt")
	cb, link := tgButtons(card)
	approve, decline := cb["✅ Approve + run plan"], cb["Decline, run nothing"]
	if approve == "" || decline == "" || link != "https://silas.example.com/#review" {
		t.Fatalf("plan card keyboard %+v", card.Keyboard)
	}
	if !strings.Contains(card.Plain, "medium risk") || !strings.Contains(card.Plain, "hello_exists") || !strings.Contains(card.Plain, "Create the file hello.txt") {
		t.Fatalf("plan card reads %q", card.Plain)
	}

	// Forged and cross-chat taps run nothing.
	if got := e.tap(tgOwner, card.MessageID, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"); !strings.Contains(got, "not valid") {
		t.Fatalf("forged tap answered %q", got)
	}
	const stranger = 5550999
	e.bot.KnownChat(stranger)
	if got := e.tap(stranger, card.MessageID, approve); !strings.Contains(got, "does not work") {
		t.Fatalf("tap from another chat answered %q", got)
	}
	if n := len(executorCalls(e.mock)); n != 0 {
		t.Fatalf("a refused tap ran the executor %d times", n)
	}

	if got := e.tap(tgOwner, card.MessageID, approve); got != "✅ Approved" {
		t.Fatalf("approve answered %q", got)
	}
	e.waitText(tgOwner, "Here is a plan.", 1)
	var statusID int
	sn = e.wait("the work item done", func(sn fakebot.Snapshot) bool {
		for _, m := range sentTo(sn, tgOwner, "Write hello.txt\n") {
			if m.Keyboard == nil && strings.Contains(m.Plain, "done") {
				statusID = m.MessageID
				return true
			}
		}
		return false
	})
	var versions []string
	for _, m := range sn.Sent {
		if m.ChatID == tgOwner && m.MessageID == statusID {
			versions = append(versions, m.Method+": "+m.Plain)
		}
	}
	if len(versions) < 2 || !strings.HasPrefix(versions[0], "sendMessage") || !strings.Contains(versions[0], "running") ||
		!strings.HasPrefix(versions[len(versions)-1], "editMessageText") {
		t.Fatalf("status message versions %q, want one message sent running and edited to done", versions)
	}
	cur, _ := e.bot.Current(tgOwner, card.MessageID)
	if cur.Keyboard != nil || !strings.HasSuffix(cur.Plain, "✅ Approved") {
		t.Fatalf("approved card reads %q with keyboard %v", cur.Plain, cur.Keyboard)
	}
	calls := len(executorCalls(e.mock))
	if calls == 0 {
		t.Fatal("the approved plan did not run")
	}

	// Replays of either button run nothing again.
	for _, data := range []string{approve, decline} {
		if got := e.tap(tgOwner, card.MessageID, data); !strings.Contains(got, "answered already") {
			t.Fatalf("replayed tap answered %q", got)
		}
	}

	// A card past its expiry runs nothing.
	e.bot.PushMessage(tgOwner, tgOwner, "please write hello.txt again")
	sn = e.wait("a second card", func(sn fakebot.Snapshot) bool {
		n := 0
		for _, m := range sentTo(sn, tgOwner, "Write hello.txt") {
			if m.Method == "sendMessage" && m.Keyboard != nil {
				n++
			}
		}
		return n == 2
	})
	second := tgCard(t, sn, tgOwner, "Write hello.txt")
	cb2, _ := tgButtons(second)
	e.clock.advance(3 * time.Minute)
	if got := e.tap(tgOwner, second.MessageID, cb2["✅ Approve + run plan"]); !strings.Contains(got, "expired") {
		t.Fatalf("tap on an expired card answered %q", got)
	}
	e.wait("the expired card's edit", func(sn fakebot.Snapshot) bool {
		for _, m := range sn.Sent {
			if m.MessageID == second.MessageID && m.Method == "editMessageText" && strings.Contains(m.Plain, "Expired") && m.Keyboard == nil {
				return true
			}
		}
		return false
	})
	if n := len(pwaAudit(t, e.d, "approval_granted")); n != 1 {
		t.Fatalf("%d approvals granted, want the first card's only", n)
	}
	if n := len(executorCalls(e.mock)); n != calls {
		t.Fatalf("refused taps ran the executor %d more times", n-calls)
	}
	e.noTokenLeak(nil)
}

// TestTelegramHighRiskAndSecureInput: a high-risk card offers only the
// web app's link; a connection's secure input is a link too, and the
// secret never reaches the Bot API.
func TestTelegramHighRiskCardOnlyLink(t *testing.T) {
	e := startTG(t, func(ov map[string]any) {
		ov["silas.channels.telegram.owner_chat_id"] = fmt.Sprint(tgOwner)
	})
	const costly = `---
id: task-costly
type: task
title: Costly job
budget: { max_cost_usd: 20 }
verify:
  - name: hello_exists
    run: "test -f hello.txt"
    expect: { exit_code: 0 }
---

# What to do
Spend a lot.
`
	scriptPlan(e.mock, costly)
	e.bot.PushMessage(tgOwner, tgOwner, "do the costly job")
	sn := e.wait("the high-risk card", func(sn fakebot.Snapshot) bool {
		for _, m := range sentTo(sn, tgOwner, "Costly job") {
			if m.Keyboard != nil {
				return true
			}
		}
		return false
	})
	card := tgCard(t, sn, tgOwner, "Costly job")
	cb, link := tgButtons(card)
	if len(cb) != 0 || link != "https://silas.example.com/#review" || !strings.Contains(card.Plain, "high risk") {
		t.Fatalf("high-risk card: callbacks %v, link %q, text %q", cb, link, card.Plain)
	}
	if n := len(executorCalls(e.mock)); n != 0 {
		t.Fatalf("executor ran %d times", n)
	}
}

// TestTelegramSecureInputOnlyAsLink: the owner connects a service from
// Telegram; the connect card is answered in the chat, the secret it then
// needs is asked for only as a link to the web app, and the secret, typed
// into the secure form, never reaches the Bot API.
func TestTelegramSecureInputOnlyAsLink(t *testing.T) {
	const apiKey = "sk-test-telegram-0123456789abcdef"
	fake := fakeoauth.Start(t, fakeoauth.Options{APIKey: apiKey})
	e := startTG(t, func(ov map[string]any) {
		ov["silas.channels.telegram.owner_chat_id"] = fmt.Sprint(tgOwner)
		ov["silas.skills_dir"] = t.TempDir()
	})
	e.bot.PushMessage(tgOwner, tgOwner, "/connect api-key name=KeyService api_base="+fake.APIBase()+" check_path=/key-check")
	sn := e.wait("the connect card", func(sn fakebot.Snapshot) bool {
		for _, m := range sentTo(sn, tgOwner, "Connect to") {
			if m.Keyboard != nil {
				return true
			}
		}
		return false
	})
	card := tgCard(t, sn, tgOwner, "Connect to")
	cb, _ := tgButtons(card)
	if cb["✅ Approve + connect"] == "" {
		t.Fatalf("connect card %q keyboard %+v", card.Plain, card.Keyboard)
	}
	if got := e.tap(tgOwner, card.MessageID, cb["✅ Approve + connect"]); got != "✅ Approved" {
		t.Fatalf("approve answered %q", got)
	}
	sn = e.wait("the secure input card", func(sn fakebot.Snapshot) bool {
		return len(sentTo(sn, tgOwner, "Secrets never travel through Telegram")) > 0
	})
	secure := sentTo(sn, tgOwner, "Secrets never travel through Telegram")[0]
	scb, link := tgButtons(secure)
	if len(scb) != 0 || link != "https://silas.example.com/#review" {
		t.Fatalf("secure input card offers %v and link %q", scb, link)
	}
	var pending struct {
		Requests []struct {
			RefID string `json:"ref_id"`
		} `json:"requests"`
	}
	pwaJSON(t, e.d.Addr(), "GET", "/secrets/pending", "owner-secret-token", "", http.StatusOK, &pending)
	if len(pending.Requests) != 1 {
		t.Fatalf("pending secrets %+v", pending)
	}
	status, body := pwaCall(t, e.d.Addr(), "POST", "/secrets/"+pending.Requests[0].RefID, "owner-secret-token", `{"value":"`+apiKey+`"}`)
	if status != http.StatusOK {
		t.Fatalf("POST /secrets: %d %s", status, body)
	}
	e.waitText(tgOwner, "KeyService: active", 1)
	for _, r := range e.bot.Snapshot().Requests {
		if bytes.Contains(r.Body, []byte(apiKey)) {
			t.Fatalf("the secret reached the Bot API in %s", r.Method)
		}
	}
	e.noTokenLeak(nil)
}

// TestTelegramCustomersIsolated: with chatbot mode on, each Telegram user
// is a customer scope of their own, kept across a restart (the session
// token is stored per user), and neither's words reach the other's model
// requests.
func TestTelegramCustomersIsolated(t *testing.T) {
	e := startTG(t, func(ov map[string]any) { ov["silas.chatbot.enabled"] = true })
	answerDirect(e.mock, func(cur string) string {
		switch {
		case strings.Contains(cur, "ALPHA-7731"):
			return "noted, alpha"
		case strings.Contains(cur, "BRAVO-9924"):
			return "noted, bravo"
		}
		return "answered: " + strings.TrimSpace(cur[strings.LastIndex(cur, "\n")+1:])
	})
	const alice, bob int64 = 6001, 6002
	e.bot.PushMessage(alice, alice, "my codeword is ALPHA-7731")
	e.bot.PushMessage(bob, bob, "my codeword is BRAVO-9924")
	e.waitText(alice, "noted, alpha", 1)
	e.waitText(bob, "noted, bravo", 1)
	if len(sentTo(e.bot.Snapshot(), alice, "bravo")) != 0 || len(sentTo(e.bot.Snapshot(), bob, "alpha")) != 0 {
		t.Fatal("an answer reached the other customer")
	}

	// After a restart each customer resumes their own scope.
	e.d.stop()
	e.start()
	e.bot.PushMessage(alice, alice, "what was my codeword, alice here?")
	e.waitText(alice, "answered:", 1)
	e.bot.PushMessage(bob, bob, "what was my codeword, bob here?")
	e.waitText(bob, "answered:", 1)

	resumed := map[string]bool{}
	for _, r := range e.mock.Requests() {
		text := requestText(&r)
		hasA, hasB := strings.Contains(text, "ALPHA-7731"), strings.Contains(text, "BRAVO-9924")
		if hasA && hasB {
			t.Fatalf("one model request holds both customers' words:\n%s", text)
		}
		if strings.Contains(text, "alice here") && hasA {
			resumed["alice"] = true
		}
		if strings.Contains(text, "alice here") && hasB || strings.Contains(text, "bob here") && hasA {
			t.Fatalf("a customer's request holds the other's words:\n%s", text)
		}
		if strings.Contains(text, "bob here") && hasB {
			resumed["bob"] = true
		}
	}
	if !resumed["alice"] || !resumed["bob"] {
		t.Fatalf("after the restart the customers' scopes were not resumed: %v", resumed)
	}
}

// TestTelegramOutput: a 429 with retry_after is waited out, then the
// answer delivered once; a 5,000-character answer arrives as two messages;
// reserved characters arrive escaped; the bot token reaches no log, audit
// entry or WebSocket frame.
func TestTelegramOutput(t *testing.T) {
	e := startTG(t, func(ov map[string]any) { ov["silas.channels.telegram.owner_chat_id"] = fmt.Sprint(tgOwner) })
	para := strings.Repeat("All work and no play makes Silas a dull bot. ", 20) // 940 characters
	long := strings.TrimSpace(strings.Repeat(para+"\n\n", 6)[:5000])
	for len(long) < 5000 {
		long += "!"
	}
	const reserved = "Use <b>bold</b> & \"quotes\" 5 > 3 *stars* _under_ [link](x) `code` &amp;"
	answerDirect(e.mock, func(cur string) string {
		switch {
		case strings.Contains(cur, "long please"):
			return long
		case strings.Contains(cur, "reserved please"):
			return reserved
		}
		return "answered after the flood"
	})
	web := owner(t, e.d.Addr()) // a web client of the owner sees the same scope
	e.bot.KnownChat(tgOwner)
	checkFor(t, waitLimit, func() bool { return e.tgStatus().OwnerConnected }, "the owner chat's session")

	e.bot.RateLimit("sendMessage", 1, 1)
	e.bot.PushMessage(tgOwner, tgOwner, "flood test")
	e.waitText(tgOwner, "answered after the flood", 1)
	sn := e.bot.Snapshot()
	if n := sn.Calls("sendMessage", http.StatusTooManyRequests); n != 1 {
		t.Fatalf("%d sendMessage calls got 429, want 1", n)
	}
	if n := len(sentTo(sn, tgOwner, "answered after the flood")); n != 1 {
		t.Fatalf("the answer arrived %d times", n)
	}

	e.bot.PushMessage(tgOwner, tgOwner, "long please")
	parts := e.waitText(tgOwner, "dull bot", 2)
	if len(parts) != 2 {
		t.Fatalf("the long answer arrived in %d messages, want 2", len(parts))
	}
	joined := strings.Join(strings.Fields(parts[0].Plain+" "+parts[1].Plain), " ")
	if joined != strings.Join(strings.Fields(long), " ") {
		t.Fatal("the two parts do not make the answer")
	}
	for _, p := range parts {
		if n := len([]rune(p.Plain)); n > 4096 {
			t.Fatalf("a part has %d characters", n)
		}
	}

	e.bot.PushMessage(tgOwner, tgOwner, "reserved please")
	got := e.waitText(tgOwner, "stars", 1)[0]
	if got.Plain != reserved || got.ParseMode != "HTML" || !strings.Contains(got.Text, "&lt;b&gt;") || !strings.Contains(got.Text, "&amp;amp;") {
		t.Fatalf("reserved characters: read %q, sent %q", got.Plain, got.Text)
	}
	for web.next("message").str("text") != reserved {
	}
	e.noTokenLeak(web.received())
}

// TestTelegramRefusesToStart: enabled without a token, the configuration
// is refused naming the key; with a token the Bot API refuses, the daemon
// does not start, and the error names the key, never the token.
func TestTelegramRefusesToStart(t *testing.T) {
	mock := newMock(t)
	bot := fakebot.Start(t, fakebot.Options{})
	ov := tgOverrides(t, mock, bot, t.TempDir())
	ov["silas.channels.telegram.token"] = ""
	t.Setenv("TEST_MODEL_KEY", "test-key")
	_, err := config.Load(config.LoadOptions{Environ: []string{}, Overrides: ov})
	if err == nil || !strings.Contains(err.Error(), "silas.channels.telegram.token") {
		t.Fatalf("enabled without a token: %v", err)
	}

	const wrong = "999:WRONG-token-value"
	ov = tgOverrides(t, mock, bot, t.TempDir())
	ov["silas.channels.telegram.token"] = wrong
	d, err := startDaemon(context.Background(), loadConfig(t, ov), zerolog.New(io.Discard), false)
	if err == nil {
		td := &testDaemon{daemon: d, t: t}
		td.stop()
		t.Fatal("the daemon started with a token the Bot API refuses")
	}
	if !strings.Contains(err.Error(), "silas.channels.telegram.token") || strings.Contains(err.Error(), "WRONG-token") {
		t.Fatalf("refused token: %v", err)
	}
}

// TestTelegramCLI: `silas telegram status|pair|unpair` through the daemon.
func TestTelegramCLI(t *testing.T) {
	e := startTG(t, nil)
	cfgPath := writeConfig(t, e.ov)
	url := "http://" + e.d.Addr()
	out, err := runCLI(t, "telegram", "status", "--config", cfgPath, "--url", url)
	if err != nil || !strings.Contains(out, "Telegram: on, polling, bot @silas_test_bot") || !strings.Contains(out, "run `silas telegram pair`") {
		t.Fatalf("status: %v\n%s", err, out)
	}
	out, err = runCLI(t, "telegram", "pair", "--config", cfgPath, "--url", url)
	_, after, found := strings.Cut(out, "/start ")
	if err != nil || !found || !strings.Contains(out, "https://t.me/silas_test_bot") {
		t.Fatalf("pair: %v\n%s", err, out)
	}
	code := strings.Fields(after)[0]
	e.bot.PushMessage(tgOwner, tgOwner, "/start "+code)
	e.waitText(tgOwner, "Paired", 1)
	checkFor(t, waitLimit, func() bool { return e.tgStatus().OwnerConnected }, "the owner chat's session")
	out, err = runCLI(t, "telegram", "status", "--config", cfgPath, "--url", url)
	if err != nil || !strings.Contains(out, fmt.Sprintf("owner chat: %d (paired), connected", tgOwner)) {
		t.Fatalf("status after pairing: %v\n%s", err, out)
	}
	out, err = runCLI(t, "telegram", "unpair", "--config", cfgPath, "--url", url)
	if err != nil || !strings.Contains(out, fmt.Sprintf("unpaired chat %d", tgOwner)) {
		t.Fatalf("unpair: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "telegram", "rename", "--config", cfgPath, "--url", url); exitCode(err) != 2 {
		t.Fatalf("unknown subcommand: %v", err)
	}
}

// TestTelegramWebhookRoute: in webhook mode the web channel serves the
// webhook at its URL's path; a request without Telegram's secret token is
// refused before the update is read, one with it is handled.
func TestTelegramWebhookRoute(t *testing.T) {
	db, err := persistence.Open(context.Background(), persistence.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	const secret = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
	handled := make(chan telegram.Update, 4)
	wh, err := telegram.NewWebhook(telegram.WebhookConfig{Secret: secret, Store: telegramStore{db: db.Telegram()},
		Handler: func(_ context.Context, u telegram.Update) error { handled <- u; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ch := &telegramChannel{webhook: wh, hookURL: "https://silas.example.com/telegram/hook"}
	if got := ch.allowedHosts([]string{"a.example.com"}); !slices.Equal(got, []string{"a.example.com", "silas.example.com"}) {
		t.Fatalf("allowed hosts %v", got)
	}
	// The webhook's credential is its secret header, not the owner gate.
	refuse := func(fasthttp.RequestHandler) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(fasthttp.StatusUnauthorized) }
	}
	routes := (&telegramAPI{ch: ch, db: db, ownerID: "owner", gate: refuse}).routes()
	hook := routes["POST /telegram/hook"]
	if hook == nil {
		t.Fatalf("no webhook route in %v", slices.Collect(maps.Keys(routes)))
	}
	ln := fasthttputil.NewInmemoryListener()
	srv := &fasthttp.Server{Handler: hook}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	client := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	post := func(token string) int {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.Header.SetMethod("POST")
		req.SetRequestURI("http://silas.example.com/telegram/hook")
		if token != "" {
			req.Header.Set(telegram.SecretTokenHeader, token)
		}
		req.Header.SetContentType("application/json")
		req.SetBodyString(`{"update_id":900001,"message":{"message_id":1,"date":1,"chat":{"id":7,"type":"private"},"from":{"id":7,"is_bot":false,"first_name":"A"},"text":"hi"}}`)
		if err := client.DoTimeout(req, resp, waitLimit); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode()
	}
	if status := post("wrong-secret"); status != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %d", status)
	}
	if status := post(""); status != http.StatusUnauthorized {
		t.Fatalf("no secret: %d", status)
	}
	if len(handled) != 0 {
		t.Fatal("a refused request reached the handler")
	}
	if status := post(secret); status != http.StatusOK {
		t.Fatalf("right secret: %d", status)
	}
	if u := <-handled; u.ID != 900001 || u.Text != "hi" {
		t.Fatalf("handled %+v", u)
	}
	if off, _ := db.Telegram().Offset(context.Background()); off != 900001 {
		t.Fatalf("offset %d after the webhook's update", off)
	}
}
