package fakebot

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// maxCallbackData is Telegram's limit on a button's callback_data, in bytes.
const maxCallbackData = 64

// parseMarkup validates a reply_markup parameter. The fake implements inline
// keyboards only, with callback and URL buttons, and holds each button to
// Telegram's rule that exactly one optional field (the button's action) is
// set: a client that also serialises an empty "copy_text" or "pay" field is
// refused here as Telegram may refuse it.
func parseMarkup(raw string) (*tgMarkup, *apiError) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var m struct {
		InlineKeyboard [][]map[string]json.RawMessage `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	if m.InlineKeyboard == nil {
		return nil, badRequest("the fake implements only inline keyboards (reply_markup.inline_keyboard)")
	}
	out := &tgMarkup{InlineKeyboard: make([][]tgButton, 0, len(m.InlineKeyboard))}
	for _, row := range m.InlineKeyboard {
		r := make([]tgButton, 0, len(row))
		for _, fields := range row {
			b, aerr := parseButton(fields)
			if aerr != nil {
				return nil, aerr
			}
			r = append(r, b)
		}
		out.InlineKeyboard = append(out.InlineKeyboard, r)
	}
	return out, nil
}

func parseButton(fields map[string]json.RawMessage) (tgButton, *apiError) {
	var b tgButton
	if err := json.Unmarshal(fields["text"], &b.Text); err != nil || strings.TrimSpace(b.Text) == "" {
		return b, badRequest("can't parse inline keyboard button: Field \"text\" must be a non-empty String")
	}
	var actions []string
	for k := range fields {
		switch k {
		case "text", "icon_custom_emoji_id", "style":
		default:
			actions = append(actions, k)
		}
	}
	slices.Sort(actions)
	switch {
	case len(actions) == 0:
		return b, badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
	case len(actions) > 1:
		return b, badRequest("can't parse inline keyboard button: exactly one of the optional fields must be used, found " + strings.Join(actions, ", "))
	}
	switch actions[0] {
	case "callback_data":
		if json.Unmarshal(fields["callback_data"], &b.CallbackData) != nil ||
			len(b.CallbackData) == 0 || len(b.CallbackData) > maxCallbackData {
			return b, badRequest("BUTTON_DATA_INVALID")
		}
	case "url":
		if json.Unmarshal(fields["url"], &b.URL) != nil || !validButtonURL(b.URL) {
			return b, badRequest("BUTTON_URL_INVALID")
		}
	default:
		return b, badRequest("the fake does not implement inline keyboard buttons with " + actions[0])
	}
	return b, nil
}

func validButtonURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "http", "https":
		return u.Host != ""
	case "tg":
		return true
	}
	return false
}
