package telegram_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
)

// The card flow of issue 11 as the runtime will wire it: a card sent
// through the outbox, answered with its inline keyboard, the answer
// acknowledged and the card edited to its outcome; a replayed, a forged, a
// cross-chat and an expired callback each answered and running nothing.
func TestCardFlowEndToEnd(t *testing.T) {
	const chat = 77
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(chat)
	c := newClient(t, s)
	clk := newFakeClock()
	clk.auto(t)
	signer := mustSigner(t, testKey)
	used := newMemUsed()

	d := newDeliveries()
	out := telegram.NewOutbox(c, d.config(clk))
	runBG(t, out.Run)

	live := planCard(telegram.RiskLow)
	live.Expires = clk.Now().Add(time.Hour)
	expired := planCard(telegram.RiskLow)
	expired.RequestID = "9d1c2b3a-4e5f-4a6b-8c7d-0e1f2a3b4c5d"
	expired.Expires = clk.Now().Add(-time.Minute)
	cards := map[string]telegram.Card{live.RequestID: live, expired.RequestID: expired}

	var mu sync.Mutex
	var ran []string // verdicts run, "request:verdict"
	handler := func(ctx context.Context, u telegram.Update) error {
		if u.Kind != telegram.KindCallback {
			return nil
		}
		v, err := signer.Verify(ctx, u.ChatID, u.CallbackData, clk.Now(), used)
		answer := ""
		switch {
		case err == nil:
			mu.Lock()
			ran = append(ran, v.RequestID+":"+v.Verdict)
			mu.Unlock()
			answer = "Approved"
			if err := out.Enqueue(telegram.RenderOutcome(u.ChatID, u.MessageID, cards[v.RequestID], "✅ Approved")); err != nil {
				return err
			}
		case errors.Is(err, telegram.ErrCallbackExpired):
			answer = "Expired"
			if err := out.Enqueue(telegram.RenderOutcome(u.ChatID, u.MessageID, cards[v.RequestID], "⌛ Expired")); err != nil {
				return err
			}
		case errors.Is(err, telegram.ErrCallbackReplayed):
			answer = "Already answered"
		case errors.Is(err, telegram.ErrCallbackForged):
			answer = "Not accepted"
		default:
			return err
		}
		return c.AnswerCallback(ctx, u.CallbackID, answer, false)
	}
	startPoller(t, telegram.PollerConfig{Client: c, Store: &memOffsets{}, Seen: newJournal(), Handler: handler})

	liveMsg, err := telegram.RenderCard(signer, chat, live)
	if err != nil {
		t.Fatal(err)
	}
	liveMsg.Ref = "live"
	expiredMsg, err := telegram.RenderCard(signer, chat, expired)
	if err != nil {
		t.Fatal(err)
	}
	expiredMsg.Ref = "expired"
	if err := out.Enqueue(liveMsg, expiredMsg); err != nil {
		t.Fatal(err)
	}
	d.wait(t, 2)
	ids := map[string]int{}
	for _, x := range d.delivered() {
		ids[x.Message.Ref] = x.MessageID
	}

	approve := liveMsg.Keyboard[0][0].CallbackData
	decline := liveMsg.Keyboard[1][0].CallbackData
	otherChat, _ := signer.Sign(chat+1, telegram.CallbackData{RequestID: live.RequestID, Verdict: "approved", Expires: live.Expires})
	s.PushCallback(chat, chat, ids["live"], approve)
	s.PushCallback(chat, chat, ids["live"], approve)                    // double tap
	s.PushCallback(chat, chat, ids["live"], decline)                    // the other button, after the answer
	s.PushCallback(chat, chat, ids["live"], "approved:"+live.RequestID) // hand-made data
	s.PushCallback(chat, chat, ids["live"], otherChat)                  // signed for another chat
	s.PushCallback(chat, chat, ids["expired"], expiredMsg.Keyboard[0][0].CallbackData)

	if err := s.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return len(sn.Answers) == 6 }); err != nil {
		t.Fatal(err)
	}
	d.wait(t, 4) // the two outcome edits
	var answers []string
	for _, a := range s.Snapshot().Answers {
		answers = append(answers, a.Text)
	}
	want := []string{"Approved", "Already answered", "Already answered", "Not accepted", "Not accepted", "Expired"}
	if strings.Join(answers, "|") != strings.Join(want, "|") {
		t.Fatalf("answers %q, want %q", answers, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 1 || ran[0] != live.RequestID+":approved" {
		t.Fatalf("ran %q, want the one approval", ran)
	}
	cur, _ := s.Current(chat, ids["live"])
	if cur.Keyboard != nil || !strings.HasSuffix(cur.Plain, "✅ Approved") {
		t.Fatalf("approved card reads %q with keyboard %v", cur.Plain, cur.Keyboard)
	}
	cur, _ = s.Current(chat, ids["expired"])
	if cur.Keyboard != nil || !strings.HasSuffix(cur.Plain, "⌛ Expired") {
		t.Fatalf("expired card reads %q with keyboard %v", cur.Plain, cur.Keyboard)
	}
}
