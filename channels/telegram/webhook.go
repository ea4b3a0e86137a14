package telegram

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"

	"github.com/rs/zerolog"
)

// SecretTokenHeader carries the webhook's secret token in every request
// Telegram makes to it.
const SecretTokenHeader = "X-Telegram-Bot-Api-Secret-Token"

// maxWebhookBody bounds one update's JSON.
const maxWebhookBody = 1 << 20

// minSecretLen is the shortest webhook secret accepted: anyone who can
// reach the URL and guess the secret can inject updates as any user.
const minSecretLen = 32

// WebhookConfig configures a Webhook.
type WebhookConfig struct {
	// Secret is the secret token given to SetWebhook: at least 32 characters
	// from A-Z, a-z, 0-9, _ and - (GenerateWebhookSecret makes one).
	Secret string
	// Store, Seen and Handler are as for the Poller.
	Store   OffsetStore
	Seen    Seen
	Handler Handler
	// Log receives refused and failed requests; the zero value discards
	// them.
	Log zerolog.Logger
}

// Webhook receives updates in webhook mode (channels.telegram.webhook_url):
// mount it at the webhook's path. It refuses, with 401 and without reading
// the body, any request whose secret-token header does not match (compared
// in constant time: the go-telegram/bot library's own webhook handler
// compares with ==). It answers 200 only once the handler returned nil and
// the offset was saved; any other answer makes Telegram deliver the update
// again later. Call Client.SetWebhook, which asks for one connection at a
// time, so updates arrive in order.
type Webhook struct {
	secret [sha256.Size]byte
	d      *dispatcher
	log    zerolog.Logger
}

// NewWebhook checks cfg and returns the handler.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	if len(cfg.Secret) < minSecretLen || len(cfg.Secret) > 256 {
		return nil, fmt.Errorf("%w: the webhook secret must be 32-256 characters; use GenerateWebhookSecret", ErrInvalidConfig)
	}
	for _, c := range []byte(cfg.Secret) {
		ok := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return nil, fmt.Errorf("%w: the webhook secret may hold only A-Z, a-z, 0-9, _ and -", ErrInvalidConfig)
		}
	}
	d, err := newDispatcher(cfg.Store, cfg.Seen, cfg.Handler)
	if err != nil {
		return nil, err
	}
	return &Webhook{secret: sha256.Sum256([]byte(cfg.Secret)), d: d, log: cfg.Log}, nil
}

// GenerateWebhookSecret returns a fresh secret token (256 bits, URL-safe
// base64) for SetWebhook and WebhookConfig.
func GenerateWebhookSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("telegram: generate webhook secret: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// ServeHTTP handles one webhook delivery.
func (w *Webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		http.Error(rw, "POST only", http.StatusMethodNotAllowed)
		return
	}
	// Hashing both sides makes the comparison's time independent of the
	// secret's length as well as its content.
	got := sha256.Sum256([]byte(r.Header.Get(SecretTokenHeader)))
	if subtle.ConstantTimeCompare(got[:], w.secret[:]) != 1 {
		w.log.Warn().Str("remote", r.RemoteAddr).Msg("telegram: webhook request with a wrong secret token refused")
		http.Error(rw, "unauthorized", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody+1))
	if err != nil {
		http.Error(rw, "read error", http.StatusBadRequest)
		return
	}
	if len(body) > maxWebhookBody {
		http.Error(rw, "update too large", http.StatusRequestEntityTooLarge)
		return
	}
	u, err := parseUpdate(body)
	if err != nil {
		w.log.Warn().Err(err).Msg("telegram: webhook update not understood")
		http.Error(rw, "not an update", http.StatusBadRequest)
		return
	}
	if err := w.d.dispatch(r.Context(), u); err != nil {
		w.log.Warn().Err(err).Int64("update_id", u.ID).Msg("telegram: webhook update not handled; Telegram will deliver it again")
		http.Error(rw, "not handled, try again", http.StatusInternalServerError)
		return
	}
	rw.WriteHeader(http.StatusOK)
}
