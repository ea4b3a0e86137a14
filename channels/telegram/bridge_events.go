package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// wireHead is what every server event has.
type wireHead struct {
	Type string `json:"type"`
}

// The server events the bridge reads, reduced to the fields it uses; the
// shapes are those of spec 8.1 (messages/*_events.go).
type (
	sessionEvent struct {
		Role         string `json:"role"`
		SessionToken string `json:"session_token"`
		Resumed      bool   `json:"resumed"`
	}
	ackEvent struct {
		MessageID string `json:"message_id"`
	}
	answerEvent struct {
		Text    string `json:"text"`
		ReplyTo string `json:"reply_to"`
	}
	errorEvent struct {
		Code        string `json:"code"`
		Message     string `json:"message"`
		RequestType string `json:"request_type"`
	}
	statusEvent struct {
		WorkItemID string `json:"work_item_id"`
		Status     string `json:"status"`
		Attempt    int    `json:"attempt"`
		Detail     string `json:"detail"`
	}
	connectionStatusEvent struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Detail string `json:"detail"`
	}
	skillResultEvent struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Detail string `json:"detail"`
	}
)

// encodeEvent returns the JSON of a server event as the runtime hands it
// (a Go value, or JSON already encoded).
func encodeEvent(ev any) ([]byte, error) {
	switch v := ev.(type) {
	case json.RawMessage:
		return v, nil
	case []byte:
		return v, nil
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode server event %T: %w", ev, err)
	}
	return b, nil
}

// onEvent turns one server event into what the chat shows.
func (s *session) onEvent(ev any) {
	raw, err := encodeEvent(ev)
	if err != nil {
		s.b.log.Error().Err(err).Msg("telegram: server event dropped")
		return
	}
	var head wireHead
	if err := json.Unmarshal(raw, &head); err != nil {
		s.b.log.Error().Err(err).Msg("telegram: server event is not a JSON object")
		return
	}
	decode := func(v any) bool {
		if err := json.Unmarshal(raw, v); err != nil {
			s.b.log.Error().Err(err).Str("type", head.Type).Msg("telegram: server event not understood")
			return false
		}
		return true
	}
	switch head.Type {
	case "session":
		var e sessionEvent
		if decode(&e) {
			s.onSession(e)
		}
	case "ack":
		var e ackEvent
		if decode(&e) {
			s.onAck(e)
		}
	case "message":
		var e answerEvent
		if decode(&e) {
			s.onAnswer(e)
		}
	case messages.EventInterim:
		// What Silas says while it works on the answer: sent as it comes,
		// the typing indicator goes on until the answer.
		var e answerEvent
		if decode(&e) && strings.TrimSpace(e.Text) != "" {
			s.sendText(e.Text)
		}
	case "error":
		var e errorEvent
		if decode(&e) {
			s.onError(e)
		}
	case messages.EventWorkItemStatus:
		var e statusEvent
		if decode(&e) {
			s.onStatus(e)
		}
	case messages.EventConnectionStatus:
		var e connectionStatusEvent
		if decode(&e) && s.owner {
			s.onConnectionStatus(e)
		}
	case messages.EventSkillInstallResult:
		var e skillResultEvent
		if decode(&e) && s.owner {
			s.onSkillResult(e)
		}
	default:
		if isCardEvent(head.Type) {
			s.onCard(head.Type, raw)
			return
		}
		s.b.log.Debug().Str("type", head.Type).Msg("telegram: server event not shown in Telegram")
	}
}

// onSession completes a link's authentication. A customer resumes the
// session whose token is stored for their Telegram user; without one (or
// once the runtime refused it) the new session's token is stored.
func (s *session) onSession(e sessionEvent) {
	r := &s.rs
	if r.ready {
		return
	}
	if s.owner {
		if e.Role != "owner" {
			s.b.log.Error().Str("role", e.Role).Msg("telegram: the owner's chat was not authenticated as the owner")
			return
		}
		s.setReady()
		return
	}
	if e.Role != "customer" {
		return
	}
	ctx := context.Background()
	if e.Resumed {
		s.setReady()
		return
	}
	if !r.resumeTried {
		tok, ok, err := s.b.cfg.Store.CustomerToken(ctx, s.user)
		if err != nil {
			s.b.log.Error().Err(err).Int64("user", s.user).Msg("telegram: load a customer's session token; starting a new session")
		}
		if ok {
			r.resumeTried = true
			r.conn.Frame(&messages.Frame{Type: messages.TypeAuth, SessionToken: tok, Receipts: true})
			return
		}
	}
	if e.SessionToken != "" {
		if err := s.b.cfg.Store.SaveCustomerToken(ctx, s.user, e.SessionToken, s.b.cfg.Now().Add(s.b.cfg.SessionTTL)); err != nil {
			s.b.log.Error().Err(err).Int64("user", s.user).Msg("telegram: store a customer's session token; their next session starts over")
		}
	}
	// Turn receipts on before any answer: an answer counts as delivered
	// only once Telegram accepted it.
	r.conn.Frame(&messages.Frame{Type: messages.TypeReceived})
	s.setReady()
}

// onAck resolves the message's submit: the runtime journaled it. A turn
// runs from now on, so "typing…" shows until its answer.
func (s *session) onAck(e ackEvent) {
	r := &s.rs
	found := false
	// Every submit of the message: a handler that gave up waiting may
	// have left one behind before the update came again.
	r.waiting = slices.DeleteFunc(r.waiting, func(m *submitItem) bool {
		if m.frame.MessageID != e.MessageID {
			return false
		}
		m.done <- nil
		found = true
		return true
	})
	if !found {
		return
	}
	if r.answers[e.MessageID] == 0 {
		r.turns[e.MessageID] = true
		s.startTyping()
	}
}

// onAnswer sends an answer, split to fit, and confirms it to the runtime
// once Telegram accepted its last part. An answer already sent (handed
// again after a new link) is confirmed, not sent twice.
func (s *session) onAnswer(e answerEvent) {
	r := &s.rs
	delete(r.turns, e.ReplyTo)
	if len(r.turns) == 0 {
		s.stopTyping()
	}
	if e.ReplyTo == "" {
		// Not a turn's answer (never sent by this runtime): show it.
		s.sendText(e.Text)
		return
	}
	switch r.answers[e.ReplyTo] {
	case answerDelivered:
		s.confirm(e.ReplyTo)
		return
	case answerSending:
		return
	}
	chunks := RenderText(e.Text)
	if len(chunks) == 0 {
		s.setAnswer(e.ReplyTo, answerDelivered)
		s.confirm(e.ReplyTo)
		return
	}
	msgs := make([]Message, len(chunks))
	for i, c := range chunks {
		msgs[i] = Message{ChatID: s.chat, HTML: c}
	}
	msgs[len(msgs)-1].Ref = makeRef(refAnswer, s.chat, e.ReplyTo)
	if s.enqueue(msgs...) {
		s.setAnswer(e.ReplyTo, answerSending)
	}
}

func (s *session) setAnswer(replyTo string, st answerState) {
	r := &s.rs
	if _, ok := r.answers[replyTo]; !ok {
		r.answerOrder = append(r.answerOrder, replyTo)
		if len(r.answerOrder) > maxAnswers {
			delete(r.answers, r.answerOrder[0])
			r.answerOrder = r.answerOrder[1:]
		}
	}
	r.answers[replyTo] = st
}

// confirm tells the runtime that the chat has the answer to replyTo, and
// forgets that the customer waits for it.
func (s *session) confirm(replyTo string) {
	if !s.owner {
		if err := s.b.cfg.Store.ClearAwaiting(context.Background(), s.user, replyTo); err != nil {
			s.b.log.Warn().Err(err).Int64("user", s.user).Msg("telegram: forget an answered message")
		}
	}
	s.frame(&messages.Frame{Type: messages.TypeReceived, ReplyTo: replyTo})
}

// onDelivered records what the outbox delivered (or Telegram refused).
func (s *session) onDelivered(m *deliveredItem) {
	r := &s.rs
	switch m.kind {
	case refAnswer:
		// An answer Telegram refuses for good (the user blocked the bot)
		// is not sent again either: it counts as delivered.
		s.setAnswer(m.key, answerDelivered)
		s.confirm(m.key)
	case refCard:
		c := r.cards[m.key]
		if c == nil {
			return
		}
		if m.failed != nil {
			// Telegram refused the card (a link it does not accept, say):
			// say the same in plain text.
			s.sendHTML(cardFallback(c.card))
			return
		}
		c.msgID = m.messageID
	case refStatus:
		line := r.statuses[m.key]
		if line == nil {
			return
		}
		line.sending = false
		if m.failed != nil {
			return
		}
		line.msgID = m.messageID
		if line.pending != "" && line.pending != line.sent {
			s.editStatus(line, line.pending)
		}
		line.pending = ""
	}
}

// onError shows an error the runtime sent. A refusal of the message being
// submitted (busy, rate limited, disk full) resolves that submit: the
// user is told and the update is done.
func (s *session) onError(e errorEvent) {
	r := &s.rs
	if !r.ready {
		// Refusals while authenticating are the link's business (a
		// refused session token is replaced by a new session).
		s.b.log.Info().Str("code", e.Code).Int64("chat", s.chat).Msg("telegram: the runtime refused the chat's session")
		return
	}
	if e.RequestType == messages.TypeMessage && len(r.waiting) > 0 {
		m := r.waiting[0]
		r.waiting = r.waiting[1:]
		m.done <- &errRejected{text: e.Message}
		return
	}
	if e.RequestType == messages.TypeReceived {
		return
	}
	s.sendHTML("⚠️ " + EscapeHTML(e.Message))
}

// sendText sends plain text, escaped and split.
func (s *session) sendText(text string) {
	chunks := RenderText(text)
	msgs := make([]Message, 0, len(chunks))
	for _, c := range chunks {
		msgs = append(msgs, Message{ChatID: s.chat, HTML: c})
	}
	if len(msgs) > 0 {
		s.enqueue(msgs...)
	}
}

// sendHTML sends one message of HTML the caller built and escaped.
func (s *session) sendHTML(html string) {
	s.enqueue(Message{ChatID: s.chat, HTML: html})
}

// statusLine is a work item's one status message, edited in place.
type statusLine struct {
	msgID   int
	sending bool   // the first send is in the outbox
	sent    string // the text last sent
	pending string // the text to show once the first send is delivered
}

var statusWords = map[string]string{
	"running": "⚙️ running", messages.ProgressVerificationFailed: "🔁 a check failed, retrying", "done": "✅ done",
	"failed": "❌ failed", "stuck": "⏸ paused", "blocked": "⛔ blocked", "pending": "⏳ waiting",
}

// onStatus shows a work item's progress as one message edited in place.
func (s *session) onStatus(e statusEvent) {
	r := &s.rs
	if e.WorkItemID == "" {
		return
	}
	title := r.titles[e.WorkItemID]
	if title == "" {
		title = e.WorkItemID
	}
	word := statusWords[e.Status]
	if word == "" {
		word = strings.ReplaceAll(e.Status, "_", " ")
	}
	html := "<b>" + truncateHTML(title, 256) + "</b>\n" + EscapeHTML(word)
	if e.Attempt > 0 {
		html += " · attempt " + strconv.Itoa(e.Attempt)
	}
	if strings.TrimSpace(e.Detail) != "" {
		html += "\n" + truncateHTML(e.Detail, 1500)
	}
	line := r.statuses[e.WorkItemID]
	if line == nil {
		line = &statusLine{}
		r.statuses[e.WorkItemID] = line
		r.statusOrder = append(r.statusOrder, e.WorkItemID)
		if len(r.statusOrder) > maxStatuses {
			delete(r.statuses, r.statusOrder[0])
			r.statusOrder = r.statusOrder[1:]
		}
	}
	switch {
	case line.msgID != 0:
		s.editStatus(line, html)
	case line.sending:
		line.pending = html
	default:
		if s.enqueue(Message{ChatID: s.chat, HTML: html, Ref: makeRef(refStatus, s.chat, e.WorkItemID)}) {
			line.sending, line.sent = true, html
		}
	}
}

func (s *session) editStatus(line *statusLine, html string) {
	if html == line.sent {
		return
	}
	if s.enqueue(Message{ChatID: s.chat, HTML: html, EditID: line.msgID}) {
		line.sent = html
	}
}

func (s *session) onConnectionStatus(e connectionStatusEvent) {
	html := "🔌 <b>" + truncateHTML(e.Name, 200) + "</b>: " + EscapeHTML(strings.ReplaceAll(e.Status, "_", " "))
	if strings.TrimSpace(e.Detail) != "" {
		html += "\n" + truncateHTML(e.Detail, 1500)
	}
	s.sendHTML(html)
}

func (s *session) onSkillResult(e skillResultEvent) {
	if e.Status == messages.SkillInstallInstalled {
		s.sendHTML("🧩 Skill <b>" + truncateHTML(e.Name, 200) + "</b> is installed.")
		return
	}
	s.sendHTML("🧩 Skill <b>" + truncateHTML(e.Name, 200) + "</b> was not installed (" +
		EscapeHTML(strings.ReplaceAll(e.Status, "_", " ")) + "): " + truncateHTML(e.Detail, 1500))
}
