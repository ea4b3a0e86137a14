package telegram

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ErrUnauthorized means the Bot API refused the bot token. Nothing will work
// until channels.telegram.token holds the token @BotFather gave; do not
// retry.
var ErrUnauthorized = errors.New("telegram: the Bot API refused the bot token; set channels.telegram.token to the token from @BotFather")

// ErrConflict means another getUpdates poller or a webhook uses the same bot
// token. Stop the other Silas instance, or call Client.DeleteWebhook before
// polling.
var ErrConflict = errors.New("telegram: another poller or a webhook is using this bot token; stop the other instance or delete the webhook")

// ErrInvalidConfig means Config failed validation; the wrapped message names
// the field to fix.
var ErrInvalidConfig = errors.New("telegram: invalid configuration")

// ErrInvalidMessage means a Message cannot be sent as it is (no chat, empty
// text, a malformed button). It is a programming error in the caller; the
// wrapped message says what is wrong.
var ErrInvalidMessage = errors.New("telegram: invalid message")

// ErrOutboxFull means the outbox holds its maximum of queued messages, so
// the new ones were not queued. The caller decides: tell the user the
// channel is busy, or retry later; nothing was dropped silently.
var ErrOutboxFull = errors.New("telegram: outbox full; messages not queued, retry later")

// ErrOutboxRunning means Outbox.Run was called while it was already running.
var ErrOutboxRunning = errors.New("telegram: outbox already running")

// ErrCallbackForged means callback data did not verify: malformed, altered,
// signed under another key or for another chat. Answer the callback query
// with a refusal and run nothing.
var ErrCallbackForged = errors.New("telegram: callback data is not authentic")

// ErrCallbackExpired means the card behind the callback data is past its
// expiry. Answer "expired" and run nothing.
var ErrCallbackExpired = errors.New("telegram: card expired")

// ErrCallbackReplayed means the card was answered already. Answer that it
// was, and run nothing again.
var ErrCallbackReplayed = errors.New("telegram: card already answered")

// ErrCallbackTooLong means a card's request id and verdict do not fit in
// Telegram's 64-byte callback_data once signed; use a UUID request id and a
// shorter verdict.
var ErrCallbackTooLong = errors.New("telegram: request id and verdict do not fit in callback data")

// ErrKeyTooShort means a MAC key is under 32 bytes; generate one with
// crypto/rand and keep it with the other keys.
var ErrKeyTooShort = errors.New("telegram: MAC key shorter than 32 bytes")

// ErrNoWebLink means a card that must be answered in the web app (high or
// irreversible risk, or one without buttons) has no WebURL; configure the
// web app's public URL.
var ErrNoWebLink = errors.New("telegram: card needs a web app link but has no WebURL; set the web channel's public URL")

// ErrPairingRefused means a pairing code was wrong, expired, used already,
// or none was issued. The same error for all, so a guesser learns nothing;
// the owner runs `silas telegram pair` again for a fresh code.
var ErrPairingRefused = errors.New("telegram: pairing code refused; run `silas telegram pair` for a new code")

// APIError is a refusal from the Bot API: the method, HTTP status /
// error_code, Telegram's description, and for 429 how long to wait.
type APIError struct {
	Method      string
	Code        int
	Description string
	RetryAfter  time.Duration
}

func (e *APIError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("telegram %s: %d %s (retry after %s)", e.Method, e.Code, e.Description, e.RetryAfter)
	}
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
}

// Unwrap lets errors.Is find ErrUnauthorized and ErrConflict.
func (e *APIError) Unwrap() error {
	switch e.Code {
	case http.StatusUnauthorized:
		return ErrUnauthorized
	case http.StatusConflict:
		return ErrConflict
	}
	return nil
}

// retryAfter reports whether err is Telegram's flood control and how long
// it asks to wait.
func retryAfter(err error) (time.Duration, bool) {
	var e *APIError
	if errors.As(err, &e) && e.Code == http.StatusTooManyRequests {
		return max(e.RetryAfter, time.Second), true
	}
	return 0, false
}

// permanent reports whether retrying err cannot help: a 4xx other than 429
// (bad request, blocked by the user, chat not found, bad token), or a
// message that fails validation.
func permanent(err error) bool {
	if errors.Is(err, ErrInvalidMessage) {
		return true
	}
	var e *APIError
	return errors.As(err, &e) && e.Code >= 400 && e.Code < 500 && e.Code != http.StatusTooManyRequests
}

// ErrPairingConfigured means channels.telegram.owner_chat_id names the
// owner's chat, so there is nothing to pair or unpair; remove the setting
// to pair a chat with a code instead.
var ErrPairingConfigured = errors.New("telegram: channels.telegram.owner_chat_id names the owner's chat; remove it to pair a chat with `silas telegram pair`")

// ErrNotAcknowledged means the runtime did not confirm, in time, that it
// journaled a message: the update is not confirmed to Telegram and comes
// again. Check the daemon's log if it persists.
var ErrNotAcknowledged = errors.New("telegram: the runtime did not acknowledge the message in time; the update will be handled again")

// ErrSessionEnded means the chat's session with the runtime ended (a
// restart of the session, shutdown, unpairing) before the runtime took the
// message; the update comes again.
var ErrSessionEnded = errors.New("telegram: the chat's session ended before the runtime took the message; the update will be handled again")

// ErrBridgeStopped means the bridge was stopped; nothing more is handled.
var ErrBridgeStopped = errors.New("telegram: the channel is stopped")
