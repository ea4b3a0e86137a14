package telegram_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
)

func planCard(risk telegram.Risk) telegram.Card {
	return telegram.Card{
		RequestID: testReqID,
		Title:     "Archive <10> old threads & labels",
		Body:      "Moves them to the archive. Nothing is deleted.",
		Risk:      risk,
		Buttons: []telegram.CardButton{
			{Verdict: "approved", Label: "Archive 10"},
			{Verdict: "declined", Label: "Skip for now"},
		},
		WebURL:  "https://silas.example/cards/" + testReqID,
		Expires: time.Unix(1_900_000_000, 0),
	}
}

// Sends m to the fake and returns what Telegram recorded.
func sendToFake(t *testing.T, s *fakebot.Server, m telegram.Message) fakebot.Message {
	t.Helper()
	c := newClient(t, s)
	id, err := c.Send(testCtx(t), m)
	if err != nil {
		t.Fatalf("Telegram refused the card: %v", err)
	}
	got, _ := s.Current(m.ChatID, id)
	return got
}

func TestRenderCardRiskLadder(t *testing.T) {
	signer := mustSigner(t, testKey)
	tests := []struct {
		risk      telegram.Risk
		callbacks int // callback buttons
	}{
		{telegram.RiskLow, 2},
		{telegram.RiskMedium, 2},
		{telegram.RiskHigh, 0},
		{telegram.RiskIrreversible, 0},
		{"", 0},        // unknown: treated as high
		{"trivial", 0}, // unknown: treated as high
	}
	for _, tt := range tests {
		t.Run(string(tt.risk), func(t *testing.T) {
			s := fakebot.Start(t, fakebot.Options{})
			s.KnownChat(10)
			m, err := telegram.RenderCard(signer, 10, planCard(tt.risk))
			if err != nil {
				t.Fatal(err)
			}
			got := sendToFake(t, s, m)
			callbacks, links := 0, 0
			for _, row := range got.Keyboard {
				for _, b := range row {
					if b.CallbackData != "" {
						callbacks++
					}
					if b.URL == planCard(tt.risk).WebURL {
						links++
					}
				}
			}
			if callbacks != tt.callbacks || links != 1 {
				t.Fatalf("keyboard %+v: %d callback buttons and %d links, want %d and 1", got.Keyboard, callbacks, links, tt.callbacks)
			}
			if !strings.Contains(got.Plain, "Archive <10> old threads & labels") {
				t.Fatalf("card reads %q", got.Plain)
			}
			if tt.callbacks == 0 && !strings.Contains(got.Plain, "Silas app") {
				t.Fatalf("a link-only card does not say where to answer: %q", got.Plain)
			}
		})
	}
}

func TestRenderCardButtonsVerify(t *testing.T) {
	signer := mustSigner(t, testKey)
	card := planCard(telegram.RiskLow)
	m, err := telegram.RenderCard(signer, 10, card)
	if err != nil {
		t.Fatal(err)
	}
	if m.Keyboard[0][0].Text != "Archive 10" || m.Keyboard[1][0].Text != "Skip for now" {
		t.Fatalf("CTA order lost: %+v", m.Keyboard)
	}
	d, err := signer.Verify(testCtx(t), 10, m.Keyboard[1][0].CallbackData, card.Expires.Add(-time.Hour), newMemUsed())
	if err != nil || d.Verdict != "declined" || d.RequestID != testReqID {
		t.Fatalf("second button verifies as %+v, %v", d, err)
	}
}

func TestRenderCardLinkOnlyNeedsURL(t *testing.T) {
	signer := mustSigner(t, testKey)
	high := planCard(telegram.RiskHigh)
	high.WebURL = ""
	if _, err := telegram.RenderCard(signer, 1, high); !errors.Is(err, telegram.ErrNoWebLink) {
		t.Fatalf("high risk without a link: %v, want ErrNoWebLink", err)
	}
	secure := telegram.Card{RequestID: "sec-1", Title: "GitHub token needed", Body: "Paste it in the secure form.", WebURL: "https://silas.example/secure/sec-1"}
	m, err := telegram.RenderCard(signer, 1, secure)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Keyboard) != 1 || m.Keyboard[0][0].URL != secure.WebURL || m.Keyboard[0][0].CallbackData != "" {
		t.Fatalf("secure input card keyboard %+v, want the one link", m.Keyboard)
	}
	low := planCard(telegram.RiskLow)
	low.Expires = time.Time{}
	if _, err := telegram.RenderCard(signer, 1, low); err == nil {
		t.Fatal("a tappable card without expiry rendered")
	}
}

func TestRenderCardLongBodyFitsOneMessage(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(1)
	card := planCard(telegram.RiskMedium)
	card.Title = strings.Repeat("T&", 400)
	card.Body = strings.Repeat("<step> & more ", 2000)
	m, err := telegram.RenderCard(mustSigner(t, testKey), 1, card)
	if err != nil {
		t.Fatal(err)
	}
	got := sendToFake(t, s, m)
	if !strings.Contains(got.Plain, "…") || !strings.HasPrefix(got.Plain, "🟡 T&T&") {
		t.Fatalf("long card not cut as expected: %q…", got.Plain[:40])
	}
}

func TestRenderOutcomeEditsCardAndDropsKeyboard(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(3)
	c := newClient(t, s)
	card := planCard(telegram.RiskLow)
	m, err := telegram.RenderCard(mustSigner(t, testKey), 3, card)
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.Send(testCtx(t), m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(testCtx(t), telegram.RenderOutcome(3, id, card, "Approved <by you>")); err != nil {
		t.Fatalf("outcome edit refused: %v", err)
	}
	cur, _ := s.Current(3, id)
	if cur.Keyboard != nil || !strings.HasSuffix(cur.Plain, "Approved <by you>") || !strings.Contains(cur.Plain, "Archive <10>") {
		t.Fatalf("after the outcome: %+v", cur)
	}
}
