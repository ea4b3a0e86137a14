package telegram

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
)

// UpdateKind says what an Update carries.
type UpdateKind string

// The update kinds Silas handles; anything else arrives as KindOther, to be
// acknowledged and ignored.
const (
	KindMessage  UpdateKind = "message"
	KindCallback UpdateKind = "callback"
	KindOther    UpdateKind = "other"
)

// Update is one incoming Telegram update, reduced to what Silas uses, with
// the original JSON in Raw for the journal.
type Update struct {
	// ID is Telegram's update_id: the key to deduplicate by.
	ID   int64
	Kind UpdateKind
	// ChatID and ChatType ("private", "group", "supergroup", "channel")
	// name the chat the message was written in or the card was tapped in.
	ChatID   int64
	ChatType string
	// From is the user who wrote or tapped.
	From User
	// MessageID is the user's message (KindMessage) or the bot's message
	// whose button was tapped (KindCallback).
	MessageID int
	// Text is the message's text, or its caption; empty for messages
	// without either (stickers, voice notes).
	Text string
	// CallbackID and CallbackData belong to KindCallback: answer the query
	// with Client.AnswerCallback, verify the data with Signer.Verify.
	CallbackID   string
	CallbackData string
	// Date is when Telegram received the message (zero for callbacks).
	Date time.Time
	// Raw is the update exactly as Telegram sent it.
	Raw json.RawMessage
}

// Command splits a bot command ("/start abc", "/start@silas_bot abc") into
// its name without the slash or bot suffix ("start") and argument ("abc").
// ok is false when Text is not a command.
func (u Update) Command() (name, arg string, ok bool) {
	if u.Kind != KindMessage || !strings.HasPrefix(u.Text, "/") {
		return "", "", false
	}
	head, arg, _ := strings.Cut(u.Text, " ")
	name, _, _ = strings.Cut(head[1:], "@")
	if name == "" {
		return "", "", false
	}
	return name, strings.TrimSpace(arg), true
}

// parseUpdate decodes one update with the library's models and reduces it.
func parseUpdate(raw json.RawMessage) (Update, error) {
	var mu models.Update
	if err := json.Unmarshal(raw, &mu); err != nil {
		return Update{}, fmt.Errorf("decode update: %w", err)
	}
	u := Update{ID: mu.ID, Kind: KindOther, Raw: slices.Clone(raw)}
	switch {
	case mu.Message != nil:
		m := mu.Message
		u.Kind = KindMessage
		u.ChatID, u.ChatType = m.Chat.ID, string(m.Chat.Type)
		if m.From != nil {
			u.From = userOf(m.From)
		}
		u.MessageID = m.ID
		u.Text = m.Text
		if u.Text == "" {
			u.Text = m.Caption
		}
		u.Date = time.Unix(int64(m.Date), 0)
	case mu.CallbackQuery != nil:
		q := mu.CallbackQuery
		u.Kind = KindCallback
		u.From = userOf(&q.From)
		u.CallbackID, u.CallbackData = q.ID, q.Data
		switch {
		case q.Message.Message != nil:
			u.ChatID, u.ChatType, u.MessageID = q.Message.Message.Chat.ID, string(q.Message.Message.Chat.Type), q.Message.Message.ID
		case q.Message.InaccessibleMessage != nil:
			im := q.Message.InaccessibleMessage
			u.ChatID, u.ChatType, u.MessageID = im.Chat.ID, string(im.Chat.Type), im.MessageID
		}
	}
	return u, nil
}

func userOf(u *models.User) User {
	return User{ID: u.ID, IsBot: u.IsBot, Username: u.Username, FirstName: u.FirstName}
}
