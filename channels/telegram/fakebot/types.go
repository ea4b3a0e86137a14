package fakebot

import "encoding/json"

// Button is one inline keyboard button as the bot sent it. Exactly one of
// CallbackData and URL is set (the fake refuses other kinds of button).
type Button struct {
	Text         string
	CallbackData string
	URL          string
}

// Message is a message the bot sent or an edit it made, as recorded by the
// fake. Text and ParseMode are what the bot sent; Plain is what the user
// reads once Telegram has parsed the entities (tags and escapes removed).
type Message struct {
	Method    string // "sendMessage" or "editMessageText"
	MessageID int
	ChatID    int64
	Text      string
	ParseMode string
	Plain     string
	Keyboard  [][]Button // nil when the message has no inline keyboard
}

// CallbackAnswer is one answerCallbackQuery call.
type CallbackAnswer struct {
	CallbackQueryID string
	Text            string
	ShowAlert       bool
}

// ChatAction is one sendChatAction call.
type ChatAction struct {
	ChatID int64
	Action string
}

// Request is one API call as the fake received it, successful or not.
// Params holds every parameter by name (JSON values other than strings in
// their JSON text), Body the raw request body.
type Request struct {
	Method string
	Params map[string]string
	Body   []byte
	Status int
}

// The JSON shapes below follow https://core.telegram.org/bots/api. They are
// written here rather than borrowed from a client library so that the fake
// is an independent check of the client, not a mirror of its bugs.

type tgUser struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
}

type tgChat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	FirstName string `json:"first_name,omitempty"`
	Title     string `json:"title,omitempty"`
}

type tgEntity struct {
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
}

type tgButton struct {
	Text         string `json:"text"`
	URL          string `json:"url,omitempty"`
	CallbackData string `json:"callback_data,omitempty"`
}

type tgMarkup struct {
	InlineKeyboard [][]tgButton `json:"inline_keyboard"`
}

type tgMessage struct {
	MessageID   int        `json:"message_id"`
	From        *tgUser    `json:"from,omitempty"`
	Chat        tgChat     `json:"chat"`
	Date        int64      `json:"date"`
	EditDate    int64      `json:"edit_date,omitempty"`
	Text        string     `json:"text,omitempty"`
	Entities    []tgEntity `json:"entities,omitempty"`
	ReplyMarkup *tgMarkup  `json:"reply_markup,omitempty"`
}

type tgCallback struct {
	ID           string     `json:"id"`
	From         tgUser     `json:"from"`
	Message      *tgMessage `json:"message,omitempty"`
	ChatInstance string     `json:"chat_instance"`
	Data         string     `json:"data,omitempty"`
}

type tgUpdate struct {
	UpdateID      int64       `json:"update_id"`
	Message       *tgMessage  `json:"message,omitempty"`
	CallbackQuery *tgCallback `json:"callback_query,omitempty"`
}

type tgResponse struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result,omitempty"`
	ErrorCode   int             `json:"error_code,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  *tgParameters   `json:"parameters,omitempty"`
}

type tgParameters struct {
	RetryAfter int `json:"retry_after,omitempty"`
}

func keyboardOf(m *tgMarkup) [][]Button {
	if m == nil {
		return nil
	}
	rows := make([][]Button, 0, len(m.InlineKeyboard))
	for _, r := range m.InlineKeyboard {
		row := make([]Button, 0, len(r))
		for _, b := range r {
			row = append(row, Button{Text: b.Text, CallbackData: b.CallbackData, URL: b.URL})
		}
		rows = append(rows, row)
	}
	return rows
}
