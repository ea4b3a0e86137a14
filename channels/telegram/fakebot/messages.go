package fakebot

import (
	"context"
	"reflect"
	"time"
	"unicode/utf8"
)

// chatID reads and checks the chat_id parameter: the chat must have written
// to the bot (or been made known with KnownChat), as Telegram only lets a
// bot write to users who started it.
func (s *Server) chatID(p params) (int64, *apiError) {
	id, ok, aerr := p.int64("chat_id")
	if aerr != nil {
		return 0, badRequest("chat not found")
	}
	if !ok {
		return 0, badRequest("chat_id is empty")
	}
	s.mu.Lock()
	known := s.chats[id]
	s.mu.Unlock()
	if !known {
		return 0, badRequest("chat not found")
	}
	return id, nil
}

func (s *Server) sendMessage(_ context.Context, p params) (any, *apiError) {
	chat, aerr := s.chatID(p)
	if aerr != nil {
		return nil, aerr
	}
	text, mode := p["text"], p["parse_mode"]
	plain, aerr := checkText(text, mode)
	if aerr != nil {
		return nil, aerr
	}
	markup, aerr := parseMarkup(p["reply_markup"])
	if aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := Message{Method: "sendMessage", MessageID: s.nextMsg, ChatID: chat, Text: text, ParseMode: mode, Plain: plain, Keyboard: keyboardOf(markup)}
	s.nextMsg++
	cur := rec
	s.messages[msgKey{chat, rec.MessageID}] = &cur
	s.sent = append(s.sent, rec)
	s.notifyLocked()
	bot := s.botUser()
	return tgMessage{MessageID: rec.MessageID, From: &bot, Chat: chatOf(chat), Date: time.Now().Unix(), Text: plain, ReplyMarkup: markup}, nil
}

// editMessageText edits a bot message's text and keyboard (no reply_markup
// removes the keyboard, as on Telegram). An edit that changes nothing is
// refused, as Telegram refuses it.
func (s *Server) editMessageText(_ context.Context, p params) (any, *apiError) {
	if p["inline_message_id"] != "" {
		return nil, badRequest("the fake does not implement inline_message_id")
	}
	chat, aerr := s.chatID(p)
	if aerr != nil {
		return nil, aerr
	}
	id, ok, aerr := p.int64("message_id")
	if aerr != nil || !ok {
		return nil, badRequest("message identifier is not specified")
	}
	text, mode := p["text"], p["parse_mode"]
	plain, aerr := checkText(text, mode)
	if aerr != nil {
		return nil, aerr
	}
	markup, aerr := parseMarkup(p["reply_markup"])
	if aerr != nil {
		return nil, aerr
	}
	kb := keyboardOf(markup)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.messages[msgKey{chat, int(id)}]
	if !ok {
		return nil, badRequest("message to edit not found")
	}
	if cur.Text == text && cur.Plain == plain && reflect.DeepEqual(cur.Keyboard, kb) {
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	rec := Message{Method: "editMessageText", MessageID: int(id), ChatID: chat, Text: text, ParseMode: mode, Plain: plain, Keyboard: kb}
	*cur = rec
	s.sent = append(s.sent, rec)
	s.notifyLocked()
	bot := s.botUser()
	now := time.Now().Unix()
	return tgMessage{MessageID: int(id), From: &bot, Chat: chatOf(chat), Date: now, EditDate: now, Text: plain, ReplyMarkup: markup}, nil
}

// answerCallbackQuery acknowledges a callback query, once.
func (s *Server) answerCallbackQuery(_ context.Context, p params) (any, *apiError) {
	id := p["callback_query_id"]
	text := p["text"]
	if utf8.RuneCountInString(text) > 200 {
		return nil, badRequest("MESSAGE_TOO_LONG")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	answered, ok := s.callbacks[id]
	if !ok || answered {
		return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
	}
	s.callbacks[id] = true
	s.answers = append(s.answers, CallbackAnswer{CallbackQueryID: id, Text: text, ShowAlert: p.bool("show_alert")})
	s.notifyLocked()
	return true, nil
}

var chatActions = map[string]bool{
	"typing": true, "upload_photo": true, "record_video": true, "upload_video": true,
	"record_voice": true, "upload_voice": true, "upload_document": true, "choose_sticker": true,
	"find_location": true, "record_video_note": true, "upload_video_note": true,
}

func (s *Server) sendChatAction(_ context.Context, p params) (any, *apiError) {
	chat, aerr := s.chatID(p)
	if aerr != nil {
		return nil, aerr
	}
	action := p["action"]
	if !chatActions[action] {
		return nil, badRequest("wrong parameter action in request")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions = append(s.actions, ChatAction{ChatID: chat, Action: action})
	s.notifyLocked()
	return true, nil
}
