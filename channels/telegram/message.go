package telegram

import (
	"fmt"
	"net/url"
	"strings"
)

// MaxCallbackData is Telegram's limit on a button's callback_data, in bytes.
const MaxCallbackData = 64

// Message is one outgoing text message, or an edit of one, already rendered
// in Telegram's HTML parse mode (see RenderText and EscapeHTML).
type Message struct {
	// ChatID is the chat to write to.
	ChatID int64
	// HTML is the text in HTML parse mode, at most MaxMessageLen once
	// parsed. RenderText produces chunks that fit.
	HTML string
	// Keyboard is the inline keyboard under the message. On an edit, nil
	// removes the keyboard the message had.
	Keyboard Keyboard
	// EditID, when non-zero, makes this an edit of that message of ChatID
	// (a status line updated in place, a card showing its outcome).
	EditID int
	// Ref is the caller's own reference (for example a chronicle message
	// id), handed back in Delivery so the runtime can mark it delivered.
	Ref string
}

// Keyboard is an inline keyboard: rows of buttons.
type Keyboard [][]Button

// Button is one inline keyboard button: a callback button (CallbackData,
// at most MaxCallbackData bytes) or a link (URL), never both.
type Button struct {
	Text         string
	CallbackData string
	URL          string
}

func (m Message) validate() error {
	if m.ChatID == 0 {
		return fmt.Errorf("%w: no chat id", ErrInvalidMessage)
	}
	if strings.TrimSpace(m.HTML) == "" {
		return fmt.Errorf("%w: empty text (Telegram refuses it)", ErrInvalidMessage)
	}
	if m.EditID < 0 {
		return fmt.Errorf("%w: negative edit id", ErrInvalidMessage)
	}
	for i, row := range m.Keyboard {
		if len(row) == 0 {
			return fmt.Errorf("%w: keyboard row %d is empty", ErrInvalidMessage, i)
		}
		for _, b := range row {
			if err := b.validate(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b Button) validate() error {
	if strings.TrimSpace(b.Text) == "" {
		return fmt.Errorf("%w: button without a label", ErrInvalidMessage)
	}
	switch {
	case (b.CallbackData == "") == (b.URL == ""):
		return fmt.Errorf("%w: button %q needs exactly one of callback data and URL", ErrInvalidMessage, b.Text)
	case len(b.CallbackData) > MaxCallbackData:
		return fmt.Errorf("%w: button %q has %d bytes of callback data, over Telegram's %d", ErrInvalidMessage, b.Text, len(b.CallbackData), MaxCallbackData)
	case b.URL != "":
		u, err := url.Parse(b.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("%w: button %q links to %q, not an absolute http(s) URL", ErrInvalidMessage, b.Text, b.URL)
		}
	}
	return nil
}

// inlineMarkup is reply_markup's JSON. Silas writes its own rather than the
// library's models.InlineKeyboardMarkup, whose buttons always carry an
// empty "copy_text" object beside their action; Telegram wants exactly one
// action per button.
type inlineMarkup struct {
	InlineKeyboard [][]inlineButton `json:"inline_keyboard"`
}

type inlineButton struct {
	Text         string `json:"text"`
	URL          string `json:"url,omitempty"`
	CallbackData string `json:"callback_data,omitempty"`
}

func (k Keyboard) markup() *inlineMarkup {
	m := &inlineMarkup{InlineKeyboard: make([][]inlineButton, 0, len(k))}
	for _, row := range k {
		r := make([]inlineButton, 0, len(row))
		for _, b := range row {
			r = append(r, inlineButton{Text: b.Text, URL: b.URL, CallbackData: b.CallbackData})
		}
		m.InlineKeyboard = append(m.InlineKeyboard, r)
	}
	return m
}
