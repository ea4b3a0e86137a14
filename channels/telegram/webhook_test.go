package telegram_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
)

func newWebhook(t *testing.T, secret string, h telegram.Handler, offsets *memOffsets, j *journal) *httptest.Server {
	t.Helper()
	wh, err := telegram.NewWebhook(telegram.WebhookConfig{Secret: secret, Store: offsets, Seen: j, Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(wh)
	t.Cleanup(srv.Close)
	return srv
}

// End to end through the fake's webhook delivery: updates arrive in order,
// a failed one is delivered again and handled once, offsets are saved.
func TestWebhookEndToEnd(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{WebhookRetry: 1})
	secret, err := telegram.GenerateWebhookSecret()
	if err != nil {
		t.Fatal(err)
	}
	offsets, j := &memOffsets{}, newJournal()
	var fails atomic.Int32
	fails.Store(1)
	srv := newWebhook(t, secret, func(_ context.Context, u telegram.Update) error {
		if u.Text == "flaky" && fails.Add(-1) >= 0 {
			return errors.New("journal busy")
		}
		j.add(u)
		return nil
	}, offsets, j)

	c := newClient(t, s)
	if err := c.SetWebhook(testCtx(t), srv.URL, secret); err != nil {
		t.Fatal(err)
	}
	a := s.PushMessage(1, 1, "flaky")
	b := s.PushMessage(1, 1, "steady")
	if err := s.WaitFor(testCtx(t), func(sn fakebot.Snapshot) bool { return sn.Pending == 0 }); err != nil {
		t.Fatal(err)
	}
	got := j.snapshot()
	if len(got) != 2 || got[0].ID != a || got[1].ID != b || j.times(a) != 1 {
		t.Fatalf("journal = %+v", got)
	}
	if offsets.get() != b {
		t.Fatalf("offset %d, want %d", offsets.get(), b)
	}
	d := s.Snapshot().Deliveries
	if len(d) != 3 || d[0].Status != http.StatusInternalServerError {
		t.Fatalf("deliveries = %+v, want a 500 then two 200s", d)
	}
	// setWebhook asked for one connection and only the kinds Silas handles.
	var setReq fakebot.Request
	for _, r := range s.Snapshot().Requests {
		if r.Method == "setWebhook" {
			setReq = r
		}
	}
	if setReq.Params["max_connections"] != "1" || !strings.Contains(setReq.Params["allowed_updates"], "callback_query") {
		t.Fatalf("setWebhook params %v", setReq.Params)
	}
}

func TestWebhookRefusesStrangers(t *testing.T) {
	secret := strings.Repeat("k", 40)
	var called atomic.Int32
	srv := newWebhook(t, secret, func(context.Context, telegram.Update) error {
		called.Add(1)
		return nil
	}, &memOffsets{}, newJournal())

	update := `{"update_id":1,"message":{"message_id":1,"chat":{"id":1,"type":"private"},"date":1,"text":"hi"}}`
	tests := []struct {
		name   string
		method string
		secret string
		body   string
		want   int
	}{
		{"no secret", http.MethodPost, "", update, http.StatusUnauthorized},
		{"wrong secret", http.MethodPost, strings.Repeat("k", 39) + "K", update, http.StatusUnauthorized},
		{"secret prefix", http.MethodPost, secret[:20], update, http.StatusUnauthorized},
		{"secret with suffix", http.MethodPost, secret + "x", update, http.StatusUnauthorized},
		{"GET", http.MethodGet, secret, "", http.StatusMethodNotAllowed},
		{"not JSON", http.MethodPost, secret, "hello", http.StatusBadRequest},
		{"too large", http.MethodPost, secret, `{"update_id":1,"pad":"` + strings.Repeat("x", 2<<20) + `"}`, http.StatusRequestEntityTooLarge},
		{"good", http.MethodPost, secret, update, http.StatusOK},
		{"duplicate", http.MethodPost, secret, update, http.StatusOK},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL, strings.NewReader(tt.body))
		if tt.secret != "" {
			req.Header.Set(telegram.SecretTokenHeader, tt.secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.want)
		}
	}
	if n := called.Load(); n != 1 {
		t.Fatalf("handler called %d times, want once (the good request; the duplicate is skipped)", n)
	}
}

func TestWebhookSecretRules(t *testing.T) {
	h := func(context.Context, telegram.Update) error { return nil }
	for _, secret := range []string{"", "short", strings.Repeat("a", 31), strings.Repeat("a", 257), strings.Repeat("a", 31) + "!"} {
		if _, err := telegram.NewWebhook(telegram.WebhookConfig{Secret: secret, Store: &memOffsets{}, Handler: h}); !errors.Is(err, telegram.ErrInvalidConfig) {
			t.Errorf("secret %q accepted", secret)
		}
	}
	a, _ := telegram.GenerateWebhookSecret()
	b, _ := telegram.GenerateWebhookSecret()
	if a == b {
		t.Fatal("two generated secrets are equal")
	}
	if _, err := telegram.NewWebhook(telegram.WebhookConfig{Secret: a, Store: &memOffsets{}, Handler: h}); err != nil {
		t.Fatalf("generated secret refused: %v", err)
	}
}
