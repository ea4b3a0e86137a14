package fakebot

import (
	"context"
	"strings"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// The go-telegram/bot client sends multipart/form-data; the fake must read
// it as Telegram does.
func TestLibraryClientMultipart(t *testing.T) {
	s := Start(t, Options{})
	s.KnownChat(11)
	b, err := bot.New(s.Token(), bot.WithServerURL(s.URL()))
	if err != nil {
		t.Fatalf("bot.New (calls getMe): %v", err)
	}
	ctx := waitCtx(t)
	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(11), Text: "<i>hi</i>", ParseMode: models.ParseModeHTML})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID == 0 || m.Text != "hi" {
		t.Fatalf("SendMessage returned %+v", m)
	}
	s.RateLimit("sendMessage", 1, 3)
	_, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(11), Text: "x"})
	var tmr *bot.TooManyRequestsError
	if !asTooMany(err, &tmr) || tmr.RetryAfter != 3 {
		t.Fatalf("429 surfaced as %v, want *bot.TooManyRequestsError with RetryAfter 3", err)
	}
}

// The library's own InlineKeyboardButton serialises an empty "copy_text"
// object next to callback_data; Telegram's rule is one action per button, so
// the fake refuses it. This pins why package telegram sends its own keyboard
// JSON.
func TestLibraryKeyboardHasTwoActions(t *testing.T) {
	s := Start(t, Options{})
	s.KnownChat(11)
	b, err := bot.New(s.Token(), bot.WithServerURL(s.URL()), bot.WithSkipGetMe())
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.SendMessage(context.Background(), &bot.SendMessageParams{
		ChatID: int64(11), Text: "card",
		ReplyMarkup: models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "A", CallbackData: "a"}}}},
	})
	if err == nil || !strings.Contains(err.Error(), "copy_text") {
		t.Fatalf("library keyboard: err = %v, want a refusal naming copy_text", err)
	}
}

func asTooMany(err error, target **bot.TooManyRequestsError) bool {
	e, ok := err.(*bot.TooManyRequestsError)
	if ok {
		*target = e
	}
	return ok
}
