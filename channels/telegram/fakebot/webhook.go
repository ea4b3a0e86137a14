package fakebot

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"time"
)

// SecretTokenHeader is the header in which Telegram sends a webhook's
// secret_token with every delivery.
const SecretTokenHeader = "X-Telegram-Bot-Api-Secret-Token"

// WebhookDelivery is one POST of an update to the webhook and the status it
// got (0 when the request failed).
type WebhookDelivery struct {
	UpdateID int64
	Status   int
}

type webhookState struct {
	url    string
	secret string
	cancel context.CancelFunc
}

// setWebhook switches the fake to webhook mode: pending and future updates
// are POSTed, one at a time and in order, to url with the secret token
// header, and removed once the webhook answers 2xx. Telegram insists on
// HTTPS; the fake also takes http:// so tests can use httptest servers.
func (s *Server) setWebhook(_ context.Context, p params) (any, *apiError) {
	raw := p["url"]
	if raw == "" {
		return s.deleteWebhook(context.Background(), p)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, badRequest("bad webhook: An HTTPS URL must be provided for webhook")
	}
	secret := p["secret_token"]
	if !validSecretToken(secret) {
		return nil, badRequest("secret token contains unallowed characters")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closed:
		return nil, &apiError{Code: http.StatusServiceUnavailable, Description: "server closing"}
	default:
	}
	if s.webhook != nil {
		s.webhook.cancel()
	}
	if p.bool("drop_pending_updates") {
		s.updates = nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := &webhookState{url: raw, secret: secret, cancel: cancel}
	s.webhook = st
	if s.poll != nil {
		close(s.poll)
		s.poll = nil
	}
	s.notifyLocked()
	s.wg.Add(1)
	go s.deliver(ctx, st)
	return true, nil
}

// validSecretToken follows setWebhook's rule: empty, or 1-256 characters
// from A-Z, a-z, 0-9, _ and -.
func validSecretToken(s string) bool {
	if len(s) > 256 {
		return false
	}
	for _, c := range []byte(s) {
		ok := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

func (s *Server) deleteWebhook(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.webhook != nil {
		s.webhook.cancel()
		s.webhook = nil
	}
	if p.bool("drop_pending_updates") {
		s.updates = nil
	}
	s.notifyLocked()
	return true, nil
}

func (s *Server) getWebhookInfo(context.Context, params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := struct {
		URL                  string `json:"url"`
		HasCustomCertificate bool   `json:"has_custom_certificate"`
		PendingUpdateCount   int    `json:"pending_update_count"`
	}{PendingUpdateCount: len(s.updates)}
	if s.webhook != nil {
		info.URL = s.webhook.url
	}
	return info, nil
}

// deliver POSTs pending updates to the webhook until ctx ends.
func (s *Server) deliver(ctx context.Context, st *webhookState) {
	defer s.wg.Done()
	client := &http.Client{Timeout: 10 * time.Second}
	for {
		s.mu.Lock()
		if len(s.updates) == 0 {
			ch := s.changed
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return
			}
		}
		u := s.updates[0]
		s.mu.Unlock()

		status := post(ctx, client, st, u.json)
		s.mu.Lock()
		s.deliveries = append(s.deliveries, WebhookDelivery{UpdateID: u.id, Status: status})
		delivered := status >= 200 && status < 300
		if delivered && len(s.updates) > 0 && s.updates[0].id == u.id {
			s.updates = s.updates[1:]
		}
		s.notifyLocked()
		s.mu.Unlock()
		if delivered {
			continue
		}
		t := time.NewTimer(s.opts.WebhookRetry)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

func post(ctx context.Context, client *http.Client, st *webhookState, body []byte) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, st.url, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	if st.secret != "" {
		req.Header.Set(SecretTokenHeader, st.secret)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}
