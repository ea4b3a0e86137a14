package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/persistence"
)

// Keystore entries of the Telegram channel (kept with the other keys).
const (
	keyTelegramCards   = "telegram_card_key"
	keyTelegramWebhook = "telegram_webhook_secret"
)

// telegramBridgeHook, when set (by a build for crash tests only), adjusts
// the bridge's configuration before it starts.
var telegramBridgeHook func(*telegram.BridgeConfig)

// telegramChannel is the running Telegram channel: the bot client, the
// bridge to the runtime, and the poller or the webhook that feeds it.
type telegramChannel struct {
	client  *telegram.Client
	bridge  *telegram.Bridge
	bot     telegram.User
	mode    string // "polling" or "webhook"
	hookURL string
	webhook *telegram.Webhook
	secret  string
	store   telegramStore
	log     zerolog.Logger

	cancel context.CancelFunc
	done   chan struct{}
}

// newTelegram checks the bot token with the Bot API and builds the
// channel; it does not receive updates yet (run does). A refused token
// fails the start with an error naming the key, never the token.
func newTelegram(ctx context.Context, cfg *config.Config, d *daemon, log zerolog.Logger, o daemonOptions) (*telegramChannel, error) {
	t := cfg.Channels.Telegram
	if t.Token == "" {
		return nil, errors.New("silas.channels.telegram.token is empty; set SILAS_TELEGRAM_TOKEN to the token @BotFather gave, or disable silas.channels.telegram")
	}
	log = log.With().Str("component", "channels.telegram").Logger()
	client, err := telegram.NewClient(telegram.Config{Token: t.Token, APIURL: t.APIURL})
	if err != nil {
		return nil, fmt.Errorf("silas.channels.telegram: %w", err)
	}
	bot, err := client.GetMe(ctx)
	switch {
	case errors.Is(err, telegram.ErrUnauthorized):
		return nil, errors.New("silas.channels.telegram.token: the Bot API refused the bot token; copy it again from @BotFather (or run /token there for a new one)")
	case err != nil:
		return nil, fmt.Errorf("silas.channels.telegram: reach the Bot API at %s: %w", t.APIURL, err)
	}
	cardKey, err := secret(d.in.keystore, keyTelegramCards, &d.in.created)
	if err != nil {
		return nil, err
	}
	signer, err := telegram.NewSigner(cardKey)
	if err != nil {
		return nil, err
	}
	ch := &telegramChannel{client: client, bot: bot, mode: "polling", store: telegramStore{db: d.in.db.Telegram()}, log: log}
	ownerChat, _ := t.OwnerChat()
	bc := telegram.BridgeConfig{
		Client: client, Gateway: d.sys.Gateway(), OwnerToken: d.in.ownerToken, Store: ch.store, Signer: signer,
		OwnerChatID: ownerChat, ChatbotEnabled: cfg.Chatbot.Enabled, WebAppURL: t.WebApp(cfg.Channels.Web),
		GateTimeout: time.Duration(cfg.Gates.ApprovalTimeoutSeconds * float64(time.Second)),
		SessionTTL:  cfg.Chatbot.SessionTTL(), Now: o.now, Log: log,
		Outbox: telegram.OutboxConfig{PerChat: o.telegramPacing},
		OnPaired: func(chat int64) {
			c, cancel := context.WithTimeout(context.Background(), telegramHTTPTimeout)
			defer cancel()
			if err := appendAudit(c, d.in.db, cfg.OwnerID, "telegram_paired", map[string]any{"chat_id": chat}); err != nil {
				log.Error().Err(err).Msg("telegram: audit the pairing")
			}
		},
	}
	if telegramBridgeHook != nil {
		telegramBridgeHook(&bc)
	}
	if ch.bridge, err = telegram.NewBridge(bc); err != nil {
		return nil, fmt.Errorf("silas.channels.telegram: %w", err)
	}
	if t.WebhookURL != "" {
		raw, err := secret(d.in.keystore, keyTelegramWebhook, &d.in.created)
		if err != nil {
			return nil, err
		}
		ch.mode, ch.hookURL = "webhook", t.WebhookURL
		ch.secret = base64.RawURLEncoding.EncodeToString(raw)
		ch.webhook, err = telegram.NewWebhook(telegram.WebhookConfig{
			Secret: ch.secret, Store: ch.store, Seen: ch.bridge, Handler: ch.bridge.Handle, Log: log,
		})
		if err != nil {
			return nil, fmt.Errorf("silas.channels.telegram.webhook_url: %w", err)
		}
	}
	return ch, nil
}

// webhookPath is the path the web channel serves the webhook at, "" in
// polling mode.
func (ch *telegramChannel) webhookPath() string {
	if ch == nil || ch.webhook == nil {
		return ""
	}
	u, err := url.Parse(ch.hookURL)
	if err != nil {
		return ""
	}
	return u.EscapedPath()
}

// webhookHost is the webhook URL's host, which the web channel must serve.
func (ch *telegramChannel) webhookHost() string {
	if ch == nil || ch.webhook == nil {
		return ""
	}
	u, err := url.Parse(ch.hookURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// run starts the bridge and then receives updates: it switches the bot to
// the webhook, or deletes any webhook and long-polls.
func (ch *telegramChannel) run(ctx context.Context) error {
	if err := ch.bridge.Start(ctx); err != nil {
		return err
	}
	if ch.webhook != nil {
		if err := ch.client.SetWebhook(ctx, ch.hookURL, ch.secret); err != nil {
			return fmt.Errorf("silas.channels.telegram.webhook_url: set the webhook: %w", err)
		}
		ch.log.Info().Str("bot", ch.bot.Username).Str("webhook", ch.hookURL).Msg("telegram channel ready (webhook)")
		return nil
	}
	if err := ch.client.DeleteWebhook(ctx, false); err != nil {
		return fmt.Errorf("silas.channels.telegram: switch the bot to polling: %w", err)
	}
	p, err := telegram.NewPoller(telegram.PollerConfig{
		Client: ch.client, Store: ch.store, Seen: ch.bridge, Handler: ch.bridge.Handle, Log: ch.log,
	})
	if err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ch.cancel, ch.done = cancel, make(chan struct{})
	go func() {
		defer close(ch.done)
		err := p.Run(pctx)
		if err != nil && !errors.Is(err, context.Canceled) {
			ch.log.Error().Err(err).Msg("telegram: polling stopped; fix the token and restart silas")
		}
	}()
	ch.log.Info().Str("bot", ch.bot.Username).Msg("telegram channel ready (long polling)")
	return nil
}

// stop stops receiving updates, then the bridge (the runtime keeps the
// answers not yet confirmed for the next start).
func (ch *telegramChannel) stop(ctx context.Context) error {
	if ch == nil {
		return nil
	}
	if ch.cancel != nil {
		ch.cancel()
		select {
		case <-ch.done:
		case <-ctx.Done():
		}
	}
	return ch.bridge.Stop(ctx)
}

// telegramStore is the Badger store of the Telegram channel, as the
// bridge, the poller and the pairer use it.
type telegramStore struct{ db persistence.Telegram }

var _ telegram.BridgeStore = telegramStore{}

// telegramSeenTTL is how long a handled update id is remembered: Telegram
// keeps an unconfirmed update for 24 hours.
const telegramSeenTTL = 48 * time.Hour

// telegramAwaitTTL is how long a customer's unanswered message brings
// their session back after a restart.
const telegramAwaitTTL = 24 * time.Hour

func (s telegramStore) Load(ctx context.Context) (int64, error)          { return s.db.Offset(ctx) }
func (s telegramStore) Save(ctx context.Context, id int64) error         { return s.db.SaveOffset(ctx, id) }
func (s telegramStore) Seen(ctx context.Context, id int64) (bool, error) { return s.db.Seen(ctx, id) }
func (s telegramStore) MarkSeen(ctx context.Context, id int64) error {
	return s.db.MarkSeen(ctx, id, telegramSeenTTL)
}

func (s telegramStore) SavePending(ctx context.Context, p telegram.PendingCode) error {
	return s.db.SavePairing(ctx, persistence.TelegramPairing{Hash: p.Hash, ExpiresAt: p.Expires})
}

func (s telegramStore) LoadPending(ctx context.Context) (telegram.PendingCode, bool, error) {
	p, ok, err := s.db.Pairing(ctx)
	return telegram.PendingCode{Hash: p.Hash, Expires: p.ExpiresAt}, ok, err
}

func (s telegramStore) Bind(ctx context.Context, chat int64) error { return s.db.BindOwner(ctx, chat) }

func (s telegramStore) Use(ctx context.Context, key string, until time.Time) (bool, error) {
	return s.db.UseCallback(ctx, key, until)
}

func (s telegramStore) OwnerChat(ctx context.Context) (int64, bool, error) {
	return s.db.OwnerChat(ctx)
}
func (s telegramStore) Unpair(ctx context.Context) (int64, error) { return s.db.Unpair(ctx) }

func (s telegramStore) CustomerToken(ctx context.Context, user int64) (string, bool, error) {
	return s.db.CustomerToken(ctx, user)
}

func (s telegramStore) SaveCustomerToken(ctx context.Context, user int64, token string, expires time.Time) error {
	return s.db.SaveCustomerToken(ctx, user, persistence.TelegramCustomer{Token: token, ExpiresAt: expires})
}

func (s telegramStore) DeleteCustomerToken(ctx context.Context, user int64) error {
	return s.db.DeleteCustomerToken(ctx, user)
}

func (s telegramStore) MarkAwaiting(ctx context.Context, user int64, id string) error {
	return s.db.MarkAwaiting(ctx, user, id, telegramAwaitTTL)
}

func (s telegramStore) ClearAwaiting(ctx context.Context, user int64, id string) error {
	return s.db.ClearAwaiting(ctx, user, id)
}

func (s telegramStore) Awaiting(ctx context.Context) ([]int64, error) {
	return s.db.Awaiting(ctx, 1000)
}

// runTelegram starts the Telegram channel, once the web channel (which
// serves its webhook) listens; a failure stops what started.
func (d *daemon) runTelegram(ctx context.Context) error {
	if d.tg == nil {
		return nil
	}
	if err := d.tg.run(ctx); err != nil {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = d.tg.stop(stopCtx)
		if d.srv != nil {
			_ = d.srv.Shutdown(stopCtx)
		}
		_ = d.sys.Stop(stopCtx)
		return err
	}
	return nil
}

// telegramRoutes are the owner's Telegram endpoints and, in webhook mode,
// the webhook.
func (d *daemon) telegramRoutes(cfg *config.Config, api *ownerapi.API, log zerolog.Logger) map[string]fasthttp.RequestHandler {
	a := &telegramAPI{ch: d.tg, db: d.in.db, ownerID: cfg.OwnerID, gate: api.OwnerOnly, chatbot: cfg.Chatbot.Enabled, log: log}
	return a.routes()
}

// allowedHosts adds the webhook URL's host to the web channel's allowed
// hosts: Telegram's requests carry it.
func (ch *telegramChannel) allowedHosts(hosts []string) []string {
	h := ch.webhookHost()
	if h == "" || slices.Contains(hosts, h) {
		return hosts
	}
	return append(slices.Clone(hosts), h)
}
