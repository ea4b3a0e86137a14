package fakebot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// PushMessage queues an update in which user userID writes text in chat
// chatID (a private chat when chatID > 0, a group when it is negative), and
// returns its update_id. A text starting with "/" carries a bot_command
// entity, as Telegram's does. The chat becomes one the bot may write to.
func (s *Server) PushMessage(chatID, userID int64, text string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &tgMessage{
		MessageID: s.nextMsg,
		From:      &tgUser{ID: userID, FirstName: fmt.Sprintf("User%d", userID)},
		Chat:      chatOf(chatID),
		Date:      time.Now().Unix(),
		Text:      text,
	}
	s.nextMsg++
	if strings.HasPrefix(text, "/") {
		cmd, _, _ := strings.Cut(text, " ")
		m.Entities = []tgEntity{{Type: "bot_command", Offset: 0, Length: len(utf16.Encode([]rune(cmd)))}}
	}
	s.chats[chatID] = true
	return s.pushLocked(tgUpdate{Message: m})
}

// PushCallback queues an update in which user userID taps a button with
// callback data data under message msgID of chat chatID, and returns the
// callback query's id (to match answerCallbackQuery calls). The data is not
// checked against the message's keyboard: a modified client can send any
// data, and the bot must cope.
func (s *Server) PushCallback(chatID, userID int64, msgID int, data string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextCBQ++
	id := "cbq-" + strconv.Itoa(s.nextCBQ)
	msg := &tgMessage{MessageID: msgID, Chat: chatOf(chatID)} // date 0: inaccessible
	if cur, ok := s.messages[msgKey{chatID, msgID}]; ok {
		bot := s.botUser()
		msg = &tgMessage{MessageID: msgID, From: &bot, Chat: chatOf(chatID), Date: time.Now().Unix(), Text: cur.Plain}
		if cur.Keyboard != nil {
			msg.ReplyMarkup = markupOf(cur.Keyboard)
		}
	}
	s.callbacks[id] = false
	s.chats[chatID] = true
	s.pushLocked(tgUpdate{CallbackQuery: &tgCallback{
		ID:           id,
		From:         tgUser{ID: userID, FirstName: fmt.Sprintf("User%d", userID)},
		Message:      msg,
		ChatInstance: strconv.FormatInt(chatID, 10),
		Data:         data,
	}})
	return id
}

func chatOf(chatID int64) tgChat {
	if chatID < 0 {
		return tgChat{ID: chatID, Type: "group", Title: fmt.Sprintf("Group%d", -chatID)}
	}
	return tgChat{ID: chatID, Type: "private", FirstName: fmt.Sprintf("User%d", chatID)}
}

func markupOf(kb [][]Button) *tgMarkup {
	m := &tgMarkup{InlineKeyboard: make([][]tgButton, 0, len(kb))}
	for _, row := range kb {
		r := make([]tgButton, 0, len(row))
		for _, b := range row {
			r = append(r, tgButton{Text: b.Text, URL: b.URL, CallbackData: b.CallbackData})
		}
		m.InlineKeyboard = append(m.InlineKeyboard, r)
	}
	return m
}

// pushLocked assigns the next update_id to u and queues it. s.mu must be
// held.
func (s *Server) pushLocked(u tgUpdate) int64 {
	u.UpdateID = s.nextUpd
	s.nextUpd++
	raw, err := json.Marshal(u)
	if err != nil {
		panic(fmt.Sprintf("fakebot: marshal update: %v", err)) // our own struct: cannot fail
	}
	s.updates = append(s.updates, pendingUpdate{id: u.UpdateID, json: raw})
	s.notifyLocked()
	return u.UpdateID
}

// confirmLocked applies getUpdates' offset: updates below a positive offset
// are confirmed and forgotten; a negative offset keeps only the last -offset
// updates.
func (s *Server) confirmLocked(offset int64) {
	switch {
	case offset > 0:
		i := 0
		for i < len(s.updates) && s.updates[i].id < offset {
			i++
		}
		if i > 0 {
			s.updates = append([]pendingUpdate(nil), s.updates[i:]...)
			s.notifyLocked()
		}
	case offset < 0:
		if keep := int(-offset); keep < len(s.updates) {
			s.updates = append([]pendingUpdate(nil), s.updates[len(s.updates)-keep:]...)
			s.notifyLocked()
		}
	}
}

// getUpdates implements long polling: it confirms updates below offset,
// returns up to limit pending ones, and when there are none waits up to
// timeout seconds (of Options.PollUnit) for one. A second getUpdates ends a
// waiting one with 409, as Telegram does when two bot instances poll.
func (s *Server) getUpdates(ctx context.Context, p params) (any, *apiError) {
	offset, _, aerr := p.int64("offset")
	if aerr != nil {
		return nil, aerr
	}
	limit, ok, aerr := p.int64("limit")
	if aerr != nil {
		return nil, aerr
	}
	if !ok || limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout, _, aerr := p.int64("timeout")
	if aerr != nil {
		return nil, aerr
	}
	if timeout < 0 {
		timeout = 0
	}

	s.mu.Lock()
	if s.webhook != nil {
		s.mu.Unlock()
		return nil, &apiError{Code: http.StatusConflict, Description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
	}
	if s.poll != nil {
		close(s.poll)
	}
	mine := make(chan struct{})
	s.poll = mine
	s.notifyLocked()
	s.confirmLocked(offset)
	timer := time.NewTimer(time.Duration(timeout) * s.opts.PollUnit)
	defer timer.Stop()
	for {
		if ups := s.availableLocked(offset, int(limit)); len(ups) > 0 || timeout == 0 {
			s.releasePollLocked(mine)
			s.mu.Unlock()
			return ups, nil
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			timeout = 0 // answer with whatever is there, possibly nothing
		case <-mine:
			return nil, &apiError{Code: http.StatusConflict, Description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
		case <-ctx.Done():
			s.mu.Lock()
			s.releasePollLocked(mine)
			s.mu.Unlock()
			return nil, &apiError{Code: 499, Description: "client went away"}
		case <-s.closed:
			timeout = 0
		}
		s.mu.Lock()
	}
}

func (s *Server) releasePollLocked(mine chan struct{}) {
	if s.poll == mine {
		s.poll = nil
		s.notifyLocked()
	}
}

// availableLocked returns up to limit pending updates at or above offset.
func (s *Server) availableLocked(offset int64, limit int) []json.RawMessage {
	out := make([]json.RawMessage, 0)
	for _, u := range s.updates {
		if offset > 0 && u.id < offset {
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, json.RawMessage(u.json))
	}
	return out
}
