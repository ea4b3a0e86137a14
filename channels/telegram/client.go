package telegram

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// DefaultAPIURL is Telegram's Bot API server.
const DefaultAPIURL = "https://api.telegram.org"

// Config configures a Client.
type Config struct {
	// Token is the bot token from @BotFather (channels.telegram.token).
	// Required. It travels only in request paths to APIURL and never
	// appears in errors.
	Token string
	// APIURL is the Bot API server's base URL (channels.telegram.api_url),
	// default DefaultAPIURL. Plain http is allowed only to a loopback
	// address (a local Bot API server, or a fake in tests), because the
	// token is part of every request's path.
	APIURL string
	// HTTPClient makes the requests; default a client without a global
	// timeout (each request has its own, see RequestTimeout).
	HTTPClient *http.Client
	// RequestTimeout bounds each call other than getUpdates, whose bound is
	// its long-poll timeout plus this. Default 30s.
	RequestTimeout time.Duration
}

// Client calls the Bot API methods Silas uses. Sends go through the
// go-telegram/bot library; getUpdates is a direct call because the
// library's polling loop confirms updates (by asking for the next offset)
// before they are handled, which would lose an update on a crash.
// A Client is safe for concurrent use.
type Client struct {
	bot     *bot.Bot
	hc      *http.Client
	base    string
	token   string
	timeout time.Duration
}

// NewClient checks cfg and returns a Client. It makes no request; call
// GetMe at start to check the token.
func NewClient(cfg Config) (*Client, error) {
	if cfg.Token == "" {
		return nil, fmt.Errorf("%w: channels.telegram.token is empty; create a bot with @BotFather and set its token", ErrInvalidConfig)
	}
	for _, c := range cfg.Token {
		ok := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ':' || c == '_' || c == '-'
		if !ok {
			return nil, fmt.Errorf("%w: channels.telegram.token has characters a bot token never has; copy it again from @BotFather", ErrInvalidConfig)
		}
	}
	base := strings.TrimRight(cfg.APIURL, "/")
	if base == "" {
		base = DefaultAPIURL
	}
	if err := checkAPIURL(base); err != nil {
		return nil, err
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	timeout := cfg.RequestTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	b, err := bot.New(cfg.Token,
		bot.WithServerURL(base),
		bot.WithHTTPClient(timeout, hc),
		bot.WithSkipGetMe(),
		bot.WithErrorsHandler(func(error) {}), // only used by the library's own poller, which Silas does not run
	)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	return &Client{bot: b, hc: hc, base: base, token: cfg.Token, timeout: timeout}, nil
}

func checkAPIURL(base string) error {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%w: channels.telegram.api_url %q is not an absolute URL such as %s", ErrInvalidConfig, base, DefaultAPIURL)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
		return fmt.Errorf("%w: channels.telegram.api_url %q is plain http to a remote host, which would expose the bot token; use https", ErrInvalidConfig, base)
	}
	return fmt.Errorf("%w: channels.telegram.api_url %q must be https", ErrInvalidConfig, base)
}

// User is a Telegram user or bot.
type User struct {
	ID        int64
	IsBot     bool
	Username  string
	FirstName string
}

// GetMe returns the bot's own user; at start it checks the token
// (ErrUnauthorized when Telegram refuses it).
func (c *Client) GetMe(ctx context.Context) (User, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u, err := c.bot.GetMe(ctx)
	if err != nil {
		return User{}, apiError("getMe", err)
	}
	return User{ID: u.ID, IsBot: u.IsBot, Username: u.Username, FirstName: u.FirstName}, nil
}

// Send sends m, or edits message m.EditID when it is set, in HTML parse mode
// with link previews off (so Telegram fetches no URL that Silas writes), and
// returns the message's id. Most callers should queue through an Outbox,
// which paces sends and honours 429s; Send itself does neither.
func (c *Client) Send(ctx context.Context, m Message) (int, error) {
	if err := m.validate(); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	noPreview := &models.LinkPreviewOptions{IsDisabled: bot.True()}
	var markup models.ReplyMarkup // stays a nil interface without a keyboard: a typed nil would be sent as "null"
	if m.Keyboard != nil {
		markup = m.Keyboard.markup()
	}
	if m.EditID != 0 {
		_, err := c.bot.EditMessageText(ctx, &bot.EditMessageTextParams{
			ChatID: m.ChatID, MessageID: m.EditID, Text: m.HTML, ParseMode: models.ParseModeHTML,
			LinkPreviewOptions: noPreview, ReplyMarkup: markup,
		})
		if err != nil {
			return 0, apiError("editMessageText", err)
		}
		return m.EditID, nil
	}
	msg, err := c.bot.SendMessage(ctx, &bot.SendMessageParams{
		ChatID: m.ChatID, Text: m.HTML, ParseMode: models.ParseModeHTML,
		LinkPreviewOptions: noPreview, ReplyMarkup: markup,
	})
	if err != nil {
		return 0, apiError("sendMessage", err)
	}
	return msg.ID, nil
}

// AnswerCallback acknowledges callback query id (Telegram shows a spinner on
// the button until it is answered), with text shown to the user as a toast,
// or as an alert when alert is true. Answer every callback query, refused
// ones included.
func (c *Client) AnswerCallback(ctx context.Context, id, text string, alert bool) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := c.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text, ShowAlert: alert})
	return apiError("answerCallbackQuery", err)
}

// SendTyping shows "typing…" in chatID for about five seconds.
func (c *Client) SendTyping(ctx context.Context, chatID int64) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := c.bot.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: chatID, Action: models.ChatActionTyping})
	return apiError("sendChatAction", err)
}

// SetWebhook switches the bot to webhook mode: Telegram POSTs updates to
// hookURL (https, port 443, 80, 88 or 8443) with secret in the
// X-Telegram-Bot-Api-Secret-Token header. It asks for one connection at a
// time, so updates arrive in order, and for the update kinds Silas handles.
func (c *Client) SetWebhook(ctx context.Context, hookURL, secret string) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := c.bot.SetWebhook(ctx, &bot.SetWebhookParams{
		URL: hookURL, SecretToken: secret, MaxConnections: 1, AllowedUpdates: allowedUpdates,
	})
	return apiError("setWebhook", err)
}

// DeleteWebhook switches the bot back to getUpdates; call it before polling
// (a webhook left set makes getUpdates fail with ErrConflict). Pending
// updates are kept unless dropPending.
func (c *Client) DeleteWebhook(ctx context.Context, dropPending bool) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := c.bot.DeleteWebhook(ctx, &bot.DeleteWebhookParams{DropPendingUpdates: dropPending})
	return apiError("deleteWebhook", err)
}

// allowedUpdates are the update kinds Silas asks for.
var allowedUpdates = []string{"message", "callback_query"}

// apiError turns the library's errors into *APIError where Telegram
// answered, so that callers can tell a refusal (do not retry), flood
// control (wait retry_after) and a network failure (retry) apart.
func apiError(method string, err error) error {
	if err == nil {
		return nil
	}
	var tmr *bot.TooManyRequestsError
	if errors.As(err, &tmr) {
		return &APIError{Method: method, Code: http.StatusTooManyRequests, Description: tmr.Message, RetryAfter: time.Duration(tmr.RetryAfter) * time.Second}
	}
	var mig *bot.MigrateError
	if errors.As(err, &mig) {
		return &APIError{Method: method, Code: http.StatusBadRequest, Description: mig.Error()}
	}
	for _, k := range []struct {
		sentinel error
		code     int
	}{
		{bot.ErrorBadRequest, http.StatusBadRequest},
		{bot.ErrorUnauthorized, http.StatusUnauthorized},
		{bot.ErrorForbidden, http.StatusForbidden},
		{bot.ErrorNotFound, http.StatusNotFound},
		{bot.ErrorConflict, http.StatusConflict},
	} {
		if errors.Is(err, k.sentinel) {
			return &APIError{Method: method, Code: k.code, Description: err.Error()}
		}
	}
	return fmt.Errorf("telegram %s: %w", method, err)
}
