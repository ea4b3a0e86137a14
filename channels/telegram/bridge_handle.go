package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
)

// What the bridge says in Telegram on its own account.
const (
	textRefusal = "Hello! This is a private assistant: it answers its owner only. " +
		"If you are its owner, pair this chat with <code>silas telegram pair</code>."
	textGreeting     = "Hello! Write your question and Silas will answer."
	textPaired       = "✅ Paired: this is now your Silas chat. Write to Silas here; approvals that can be given in Telegram come here too."
	textAlreadyPair  = "This chat is paired with Silas: just write to it."
	textPairRefused  = "That pairing code is wrong or has expired. Run <code>silas telegram pair</code> for a new one."
	textTextOnly     = "Silas reads text messages only."
	textPrivateOnly  = "Silas talks in private chats only."
	textNotHere      = "This button does not work in this chat."
	textForged       = "This button is not valid; nothing was run."
	textExpired      = "This card has expired; nothing was run."
	textExpiredCard  = "⌛ Expired: nothing was run"
	textReplayed     = "This card was answered already."
	textRejectedHead = "⚠️ "
)

// Seen answers whether an update was handled before (the dispatcher's
// Seen), from the store.
func (b *Bridge) Seen(ctx context.Context, updateID int64) (bool, error) {
	return b.cfg.Store.Seen(ctx, updateID)
}

// Handle handles one update; it is the Poller's or Webhook's Handler. A
// message returns nil only once the runtime acknowledged it, so that the
// update is confirmed to Telegram only then; an error makes it come again.
func (b *Bridge) Handle(ctx context.Context, u Update) error {
	var err error
	switch u.Kind {
	case KindMessage:
		err = b.onMessage(ctx, u)
	case KindCallback:
		err = b.onCallback(ctx, u)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	if err := b.cfg.Store.MarkSeen(ctx, u.ID); err != nil {
		// The offset is saved next anyway; Seen only closes the window
		// between the two writes.
		b.log.Warn().Err(err).Int64("update_id", u.ID).Msg("telegram: record a handled update")
	}
	return nil
}

// onMessage routes a message: pairing, the owner's chat, a customer, or a
// polite refusal.
func (b *Bridge) onMessage(ctx context.Context, u Update) error {
	owner := b.ownerChat()
	if name, arg, ok := u.Command(); ok && name == "start" {
		return b.onStart(ctx, u, arg, owner)
	}
	if owner != 0 && u.ChatID == owner {
		return b.submit(ctx, u, owner, 0, true)
	}
	if u.ChatType != "private" || u.From.ID == 0 || u.From.IsBot {
		b.log.Debug().Int64("chat", u.ChatID).Str("chat_type", u.ChatType).Msg("telegram: message outside a private chat ignored")
		if u.ChatType == "group" || u.ChatType == "supergroup" {
			b.notice(u.ChatID, textPrivateOnly)
		}
		return nil
	}
	if !b.cfg.ChatbotEnabled {
		b.notice(u.ChatID, textRefusal)
		return nil
	}
	return b.submit(ctx, u, u.ChatID, u.From.ID, false)
}

// onStart handles /start: a pairing code from the chat that becomes the
// owner's, or a greeting.
func (b *Bridge) onStart(ctx context.Context, u Update, code string, owner int64) error {
	if owner != 0 && u.ChatID == owner {
		b.notice(u.ChatID, textAlreadyPair)
		return nil
	}
	if code != "" && b.cfg.OwnerChatID == 0 && u.ChatType == "private" && b.pairingExpected(ctx) {
		err := b.pairer.Redeem(ctx, code, u.ChatID)
		switch {
		case errors.Is(err, ErrPairingRefused):
			b.log.Warn().Int64("chat", u.ChatID).Msg("telegram: pairing code refused")
			b.notice(u.ChatID, textPairRefused)
			return nil
		case err != nil:
			return err
		}
		b.log.Info().Int64("chat", u.ChatID).Msg("telegram: owner chat paired")
		b.bind(u.ChatID)
		b.notice(u.ChatID, textPaired)
		if b.cfg.OnPaired != nil {
			b.cfg.OnPaired(u.ChatID)
		}
		return nil
	}
	if b.cfg.ChatbotEnabled && u.ChatType == "private" {
		b.notice(u.ChatID, textGreeting)
		return nil
	}
	b.notice(u.ChatID, textRefusal)
	return nil
}

// pairingExpected reports whether /start <code> is a pairing attempt: in
// chatbot mode only while a code is pending (a customer's /start with a
// deep-link parameter is a greeting), otherwise always.
func (b *Bridge) pairingExpected(ctx context.Context) bool {
	if !b.cfg.ChatbotEnabled {
		return true
	}
	p, ok, err := b.cfg.Store.LoadPending(ctx)
	return err != nil || (ok && b.cfg.Now().Before(p.Expires))
}

// submit hands a message to chat's session as a message frame whose id is
// derived from the update, and waits for the runtime's ack.
func (b *Bridge) submit(ctx context.Context, u Update, chat, user int64, owner bool) error {
	if strings.TrimSpace(u.Text) == "" {
		b.notice(chat, textTextOnly)
		return nil
	}
	id := "tg-" + strconv.FormatInt(u.ID, 10)
	if !owner {
		// Before the runtime can journal it: after a crash, the customer's
		// session comes back for its answer.
		if err := b.cfg.Store.MarkAwaiting(ctx, user, id); err != nil {
			return fmt.Errorf("telegram: record customer %d's message: %w", user, err)
		}
	}
	if b.cfg.BeforeSubmit != nil {
		b.cfg.BeforeSubmit(u)
	}
	m := &submitItem{frame: &messages.Frame{Type: messages.TypeMessage, Text: u.Text, MessageID: id}, done: make(chan error, 1),
		// The owner's /connect is a command, not a turn: it is answered
		// with cards and never acknowledged.
		noAck: owner && isConnectCommand(u.Text)}
	if err := b.pushTo(chat, user, owner, m); err != nil {
		return err
	}
	timer := time.NewTimer(b.cfg.AckTimeout)
	defer timer.Stop()
	var err error
	select {
	case err = <-m.done:
	case <-timer.C:
		return fmt.Errorf("%w (update %d, waited %s)", ErrNotAcknowledged, u.ID, b.cfg.AckTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	if text, ok := isRejected(err); ok {
		b.notice(chat, textRejectedHead+EscapeHTML(text))
		if !owner {
			if err := b.cfg.Store.ClearAwaiting(ctx, user, id); err != nil {
				b.log.Warn().Err(err).Int64("user", user).Msg("telegram: forget a refused message")
			}
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("telegram: update %d: %w", u.ID, err)
	}
	return nil
}

// pushTo queues it on chat's session, starting a new one when the current
// one ended meanwhile.
func (b *Bridge) pushTo(chat, user int64, owner bool, it any) error {
	for range 3 {
		s, err := b.session(chat, user, owner)
		if err != nil {
			return err
		}
		if s.push(it) {
			return nil
		}
	}
	return ErrSessionEnded
}

// waitReady waits until the owner's session is authenticated.
func (b *Bridge) waitReady(ctx context.Context, owner int64) error {
	w := &readyItem{done: make(chan struct{})}
	if err := b.pushTo(owner, 0, true, w); err != nil {
		return err
	}
	timer := time.NewTimer(b.cfg.AckTimeout)
	defer timer.Stop()
	select {
	case <-w.done:
		if s, err := b.session(owner, 0, true); err != nil || !s.isReady() {
			return ErrSessionEnded
		}
		return nil
	case <-timer.C:
		return fmt.Errorf("%w: the owner's session is not ready", ErrNotAcknowledged)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// onCallback answers a tap on a card's button. Only the owner's chat
// answers cards; the data must verify (signed for this chat, not expired,
// not answered before), else nothing runs. The owner's session is made
// ready first, so that a tap the store marks answered always reaches the
// runtime.
func (b *Bridge) onCallback(ctx context.Context, u Update) error {
	owner := b.ownerChat()
	if owner == 0 || u.ChatID != owner {
		b.log.Warn().Int64("chat", u.ChatID).Msg("telegram: card button tapped outside the owner's chat; nothing run")
		b.answer(ctx, u, textNotHere)
		return nil
	}
	if err := b.waitReady(ctx, owner); err != nil {
		return err
	}
	d, err := b.cfg.Signer.Verify(ctx, u.ChatID, u.CallbackData, b.cfg.Now(), b.cfg.Store)
	switch {
	case errors.Is(err, ErrCallbackForged):
		b.log.Warn().Int64("chat", u.ChatID).Msg("telegram: forged card button refused; nothing run")
		b.answer(ctx, u, textForged)
		return nil
	case errors.Is(err, ErrCallbackExpired):
		_ = b.pushTo(owner, 0, true, &outcomeItem{reqID: requestOf(d), msgID: u.MessageID, outcome: textExpiredCard})
		b.answer(ctx, u, textExpired)
		return nil
	case errors.Is(err, ErrCallbackReplayed):
		b.answer(ctx, u, textReplayed)
		return nil
	case err != nil:
		return err
	}
	f, outcome, ok := frameFor(d)
	if !ok {
		b.answer(ctx, u, textForged)
		return nil
	}
	if err := b.pushTo(owner, 0, true, &callbackItem{frame: f, msgID: u.MessageID, outcome: outcome}); err != nil {
		return err
	}
	b.answer(ctx, u, outcome)
	return nil
}

// answer acknowledges a callback query (Telegram shows a spinner until
// then). A failure is logged: the card's edit says the same.
func (b *Bridge) answer(ctx context.Context, u Update, text string) {
	if err := b.cfg.Client.AnswerCallback(ctx, u.CallbackID, text, false); err != nil {
		b.log.Warn().Err(err).Msg("telegram: answer a card button")
	}
}

// isConnectCommand reports whether an owner's message is the /connect
// command, which the runtime answers with cards instead of a turn.
func isConnectCommand(text string) bool {
	return text == "/connect" || strings.HasPrefix(text, "/connect ")
}
