package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/persistence"
)

// telegramAPI serves the owner's Telegram endpoints (`silas telegram`):
//
//	GET    /telegram       the channel's status
//	POST   /telegram/pair  a one-time pairing code (10 minutes; only its hash is stored)
//	DELETE /telegram/pair  unpair the owner's chat
//
// and, in webhook mode, the webhook Telegram POSTs updates to (its own
// secret-token header is its credential).
type telegramAPI struct {
	ch      *telegramChannel // nil when the channel is off
	db      *persistence.DB
	ownerID string
	// gate is ownerapi.API.OwnerOnly.
	gate    func(fasthttp.RequestHandler) fasthttp.RequestHandler
	chatbot bool
	log     zerolog.Logger
}

// telegramHTTPTimeout bounds the storage work of one request.
const telegramHTTPTimeout = 10 * time.Second

// telegramStatus is GET /telegram's answer.
type telegramStatus struct {
	Enabled     bool   `json:"enabled"`
	Mode        string `json:"mode,omitempty"`
	BotUsername string `json:"bot_username,omitempty"`
	Chatbot     bool   `json:"chatbot"`
	telegram.BridgeStatus
}

// telegramPairing is POST /telegram/pair's answer.
type telegramPairing struct {
	Code        string    `json:"code"`
	ExpiresAt   time.Time `json:"expires_at"`
	BotUsername string    `json:"bot_username"`
}

// telegramUnpaired is DELETE /telegram/pair's answer.
type telegramUnpaired struct {
	Unpaired bool  `json:"unpaired"`
	ChatID   int64 `json:"chat_id,omitempty"`
}

func (a *telegramAPI) routes() map[string]fasthttp.RequestHandler {
	routes := map[string]fasthttp.RequestHandler{
		"GET /telegram":         a.owner(a.status),
		"POST /telegram/pair":   a.owner(a.pair),
		"DELETE /telegram/pair": a.owner(a.unpair),
	}
	if path := a.ch.webhookPath(); path != "" {
		hook := fasthttpadaptor.NewFastHTTPHandler(a.ch.webhook)
		routes["POST "+path] = func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) != path {
				ownerapi.WriteError(ctx, http.StatusNotFound, messages.CodeNotFound, "no such endpoint")
				return
			}
			hook(ctx)
		}
	}
	return routes
}

// owner lets only the owner through, with the owner HTTP API's gate (a
// customer's session token gets 403, anything else 401; never cached).
func (a *telegramAPI) owner(h fasthttp.RequestHandler) fasthttp.RequestHandler { return a.gate(h) }

func (a *telegramAPI) status(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/telegram" {
		ownerapi.WriteError(ctx, http.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	st := telegramStatus{Chatbot: a.chatbot}
	if a.ch != nil {
		c, cancel := context.WithTimeout(context.Background(), telegramHTTPTimeout)
		defer cancel()
		bs, err := a.ch.bridge.Status(c)
		if err != nil {
			ownerapi.WriteError(ctx, http.StatusInternalServerError, messages.CodeInternal, err.Error())
			return
		}
		st = telegramStatus{Enabled: true, Mode: a.ch.mode, BotUsername: a.ch.bot.Username, Chatbot: a.chatbot, BridgeStatus: bs}
	}
	ownerapi.WriteJSON(ctx, http.StatusOK, st)
}

func (a *telegramAPI) pair(ctx *fasthttp.RequestCtx) {
	if !a.enabled(ctx) {
		return
	}
	c, cancel := context.WithTimeout(context.Background(), telegramHTTPTimeout)
	defer cancel()
	code, expires, err := a.ch.bridge.Pair(c)
	if errors.Is(err, telegram.ErrPairingConfigured) {
		ownerapi.WriteError(ctx, http.StatusConflict, "conflict", err.Error())
		return
	}
	if err != nil {
		ownerapi.WriteError(ctx, http.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	// The code itself is never audited or logged: only that one exists.
	if err := a.audit(c, "telegram_pairing_code_issued", map[string]any{"expires_at": expires.UTC()}); err != nil {
		ownerapi.WriteError(ctx, http.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	ownerapi.WriteJSON(ctx, http.StatusOK, telegramPairing{Code: code, ExpiresAt: expires.UTC(), BotUsername: a.ch.bot.Username})
}

func (a *telegramAPI) unpair(ctx *fasthttp.RequestCtx) {
	if !a.enabled(ctx) {
		return
	}
	c, cancel := context.WithTimeout(context.Background(), telegramHTTPTimeout)
	defer cancel()
	was, err := a.ch.bridge.Unpair(c)
	if errors.Is(err, telegram.ErrPairingConfigured) {
		ownerapi.WriteError(ctx, http.StatusConflict, "conflict", err.Error())
		return
	}
	if err != nil {
		ownerapi.WriteError(ctx, http.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	if err := a.audit(c, "telegram_unpaired", map[string]any{"chat_id": was}); err != nil {
		ownerapi.WriteError(ctx, http.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	ownerapi.WriteJSON(ctx, http.StatusOK, telegramUnpaired{Unpaired: was != 0, ChatID: was})
}

func (a *telegramAPI) enabled(ctx *fasthttp.RequestCtx) bool {
	if string(ctx.Path()) != "/telegram/pair" {
		ownerapi.WriteError(ctx, http.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return false
	}
	if a.ch == nil {
		ownerapi.WriteError(ctx, http.StatusConflict, "conflict", "the Telegram channel is off; set silas.channels.telegram.enabled: true and the bot token, then restart silas")
		return false
	}
	return true
}

// audit appends one entry to the audit chain before the answer is given.
func (a *telegramAPI) audit(ctx context.Context, event string, data map[string]any) error {
	return appendAudit(ctx, a.db, a.ownerID, event, data)
}

func appendAudit(ctx context.Context, db *persistence.DB, ownerID, event string, data map[string]any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = db.Audit().Append(ctx, persistence.AuditEntry{Event: event, Scope: ownerID, Data: b})
	return err
}
