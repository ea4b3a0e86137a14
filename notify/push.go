package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"

	webpush "github.com/SherClockHolmes/webpush-go"
	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/persistence"
)

// Defaults of Options.
const (
	defaultAttempts   = 3
	defaultBackoff    = time.Second
	defaultTTL        = time.Hour
	defaultSubscriber = "https://github.com/silas-ai/silas"
	// sendTimeout bounds one request to a push service.
	sendTimeout = 15 * time.Second
	// maxTitleRunes bounds the card title a notification carries.
	maxTitleRunes = 80
	// rememberCards bounds the card ids remembered as already pushed.
	rememberCards = 1024
)

// Options configure a Pusher.
type Options struct {
	// DB holds the subscriptions; a push service's 404 or 410 removes one.
	DB    *persistence.DB
	VAPID VAPID
	// Subscriber is the VAPID contact (an https URL or an e-mail
	// address) the push services may use to reach the operator.
	Subscriber string
	// Client sends the requests; nil: a client with a timeout that never
	// follows a redirect (the endpoint named is the only place a payload
	// goes).
	Client *http.Client
	// Attempts bounds the tries per subscription (default 3), with
	// Backoff (default 1s) doubling between them; only network errors,
	// 429 and 5xx are retried.
	Attempts int
	Backoff  time.Duration
	// TTL is how long the push service keeps an undelivered notification
	// (default 1h).
	TTL time.Duration
	Log zerolog.Logger
}

// Pusher sends the owner's notifications. It is safe for concurrent use:
// callers send from their own goroutines, never from an actor's mailbox.
type Pusher struct {
	o Options

	mu    sync.Mutex
	sent  map[string]bool
	order []string
}

// NewPusher returns a Pusher; it starts nothing.
func NewPusher(o Options) (*Pusher, error) {
	if o.DB == nil || o.VAPID.Public == "" || o.VAPID.Private == "" {
		return nil, errors.New("notify: a Pusher needs the database and the VAPID key pair")
	}
	if o.Subscriber == "" {
		o.Subscriber = defaultSubscriber
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: sendTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.Attempts <= 0 {
		o.Attempts = defaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = defaultBackoff
	}
	if o.TTL <= 0 {
		o.TTL = defaultTTL
	}
	return &Pusher{o: o, sent: make(map[string]bool)}, nil
}

// Payload is what a notification carries, encrypted to the subscription:
// the text to show, the card's request id (the notification's tag, so a
// card shows once) and where the app opens.
type Payload struct {
	Title string `json:"title"`
	Tag   string `json:"tag"`
	URL   string `json:"url"`
}

// ApprovalPayload is the notification of a pending approval: a short,
// single-line title and nothing of the card's body.
func ApprovalPayload(requestID, title string) Payload {
	return Payload{Title: "Silas is waiting for your approval: " + shortTitle(title), Tag: requestID, URL: "/#review"}
}

// shortTitle keeps a title to one printable line of at most maxTitleRunes.
func shortTitle(t string) string {
	t = strings.Join(strings.FieldsFunc(t, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }), " ")
	if r := []rune(t); len(r) > maxTitleRunes {
		t = string(r[:maxTitleRunes-1]) + "…"
	}
	if t == "" {
		t = "a plan"
	}
	return t
}

// NotifyPending sends one notification for the card requestID to every
// subscription, once per card: a second call for the same id does
// nothing. It returns when every subscription was tried.
func (p *Pusher) NotifyPending(ctx context.Context, requestID, title string) {
	if !p.first(requestID) {
		return
	}
	subs, err := p.o.DB.PushSubscriptions().List(ctx)
	if err != nil {
		p.o.Log.Warn().Err(err).Msg("web push: list subscriptions")
		return
	}
	body, err := json.Marshal(ApprovalPayload(requestID, title))
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.send(ctx, s, body)
		}()
	}
	wg.Wait()
}

// first records id and reports whether it was new.
func (p *Pusher) first(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sent[id] {
		return false
	}
	p.sent[id] = true
	p.order = append(p.order, id)
	if len(p.order) > rememberCards {
		delete(p.sent, p.order[0])
		p.order = p.order[1:]
	}
	return true
}

// send delivers body to one subscription within Attempts.
func (p *Pusher) send(ctx context.Context, s persistence.PushSubscription, body []byte) {
	log := p.o.Log.With().Str("push_host", hostOf(s.Endpoint)).Logger()
	if err := CheckSubscription(s.Endpoint, s.P256dh, s.Auth); err != nil {
		log.Warn().Err(err).Msg("web push: stored subscription refused")
		return
	}
	sub := &webpush.Subscription{Endpoint: s.Endpoint, Keys: webpush.Keys{P256dh: s.P256dh, Auth: s.Auth}}
	opts := &webpush.Options{
		HTTPClient: p.o.Client, Subscriber: p.o.Subscriber, TTL: int(p.o.TTL / time.Second), Urgency: webpush.UrgencyHigh,
		VAPIDPublicKey: p.o.VAPID.Public, VAPIDPrivateKey: p.o.VAPID.Private,
	}
	wait := p.o.Backoff
	for attempt := 1; ; attempt++ {
		status, err := p.post(ctx, body, sub, opts)
		switch {
		case err == nil && status/100 == 2:
			return
		case status == http.StatusNotFound || status == http.StatusGone:
			// The browser unsubscribed or the subscription expired.
			if _, err := p.o.DB.PushSubscriptions().Delete(ctx, s.Endpoint); err != nil {
				log.Warn().Err(err).Msg("web push: remove an expired subscription")
			}
			log.Info().Int("status", status).Msg("web push: subscription gone, removed")
			return
		case err == nil && status != http.StatusTooManyRequests && status < 500:
			log.Warn().Int("status", status).Msg("web push: refused by the push service")
			return
		}
		if attempt >= p.o.Attempts {
			log.Warn().Err(err).Int("status", status).Int("attempts", attempt).Msg("web push: not delivered")
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// post makes one request and returns the push service's status.
func (p *Pusher) post(ctx context.Context, body []byte, sub *webpush.Subscription, opts *webpush.Options) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	resp, err := webpush.SendNotificationWithContext(ctx, body, sub, opts)
	if err != nil {
		return 0, fmt.Errorf("send web push: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// hostOf names a push service in logs without the endpoint's path, which
// identifies the subscription.
func hostOf(endpoint string) string {
	rest, ok := strings.CutPrefix(endpoint, "https://")
	if !ok {
		rest, _ = strings.CutPrefix(endpoint, "http://")
	}
	host, _, _ := strings.Cut(rest, "/")
	return host
}
