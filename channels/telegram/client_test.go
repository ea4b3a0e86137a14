package telegram_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
)

func TestNewClientConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  telegram.Config
		ok   bool
	}{
		{"default URL", telegram.Config{Token: "123:abc-DEF_g"}, true},
		{"https", telegram.Config{Token: "123:abc", APIURL: "https://tg.example/"}, true},
		{"http loopback", telegram.Config{Token: "123:abc", APIURL: "http://127.0.0.1:8081"}, true},
		{"http localhost", telegram.Config{Token: "123:abc", APIURL: "http://localhost:8081"}, true},
		{"no token", telegram.Config{}, false},
		{"token with a path", telegram.Config{Token: "123:abc/../x"}, false},
		{"token with a query", telegram.Config{Token: "123:abc?x=1"}, false},
		{"http remote", telegram.Config{Token: "123:abc", APIURL: "http://tg.example"}, false},
		{"relative", telegram.Config{Token: "123:abc", APIURL: "/api"}, false},
		{"ftp", telegram.Config{Token: "123:abc", APIURL: "ftp://tg.example"}, false},
	}
	for _, tt := range tests {
		_, err := telegram.NewClient(tt.cfg)
		if tt.ok != (err == nil) {
			t.Errorf("%s: NewClient = %v", tt.name, err)
		}
		if err != nil && !errors.Is(err, telegram.ErrInvalidConfig) {
			t.Errorf("%s: %v is not ErrInvalidConfig", tt.name, err)
		}
		if err != nil && tt.cfg.Token != "" && strings.Contains(err.Error(), tt.cfg.Token) {
			t.Errorf("%s: error shows the token", tt.name)
		}
	}
}

func TestClientGetMeAndErrors(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	c := newClient(t, s)
	me, err := c.GetMe(testCtx(t))
	if err != nil || !me.IsBot || me.Username != "silas_test_bot" {
		t.Fatalf("GetMe = %+v, %v", me, err)
	}

	bad, _ := telegram.NewClient(telegram.Config{Token: "1:nope", APIURL: s.URL()})
	if _, err := bad.GetMe(testCtx(t)); !errors.Is(err, telegram.ErrUnauthorized) {
		t.Fatalf("GetMe with a wrong token: %v, want ErrUnauthorized", err)
	}

	_, err = c.Send(testCtx(t), telegram.Message{ChatID: 404, HTML: "hello"})
	var apiErr *telegram.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != http.StatusBadRequest || !strings.Contains(apiErr.Description, "chat not found") {
		t.Fatalf("send to an unknown chat: %v", err)
	}

	s.KnownChat(1)
	s.RateLimit("sendMessage", 1, 9)
	_, err = c.Send(testCtx(t), telegram.Message{ChatID: 1, HTML: "x"})
	if !errors.As(err, &apiErr) || apiErr.Code != http.StatusTooManyRequests || apiErr.RetryAfter != 9*time.Second {
		t.Fatalf("429: %v", err)
	}

	if _, err := c.Send(testCtx(t), telegram.Message{ChatID: 1}); !errors.Is(err, telegram.ErrInvalidMessage) {
		t.Fatalf("empty message: %v", err)
	}
}

// Link previews are off: Telegram must not fetch the URLs Silas writes (a
// secure-form link, a private host).
func TestClientSendsWithoutPreviewAndWithOwnKeyboard(t *testing.T) {
	s := fakebot.Start(t, fakebot.Options{})
	s.KnownChat(1)
	c := newClient(t, s)
	_, err := c.Send(testCtx(t), telegram.Message{ChatID: 1, HTML: "see https://silas.example/x",
		Keyboard: telegram.Keyboard{{{Text: "Go", CallbackData: "go"}, {Text: "Open", URL: "https://silas.example/x"}}}})
	if err != nil {
		t.Fatalf("Telegram refused the keyboard: %v", err)
	}
	req := s.Snapshot().Requests[0]
	if !strings.Contains(req.Params["link_preview_options"], `"is_disabled":true`) {
		t.Fatalf("link_preview_options = %q", req.Params["link_preview_options"])
	}
	if strings.Contains(req.Params["reply_markup"], "copy_text") {
		t.Fatalf("reply_markup carries extra button fields: %s", req.Params["reply_markup"])
	}
	if _, ok := req.Params["reply_markup"]; !ok {
		t.Fatal("keyboard not sent")
	}
	if _, err := c.Send(testCtx(t), telegram.Message{ChatID: 1, HTML: "no keyboard"}); err != nil {
		t.Fatal(err)
	}
	if rm, ok := s.Snapshot().Requests[1].Params["reply_markup"]; ok {
		t.Fatalf("a message without keyboard sent reply_markup %q", rm)
	}
}

// A network failure's error must not carry the token, which net/http puts
// in the URL it quotes.
func TestClientErrorsHideToken(t *testing.T) {
	s := fakebot.New(fakebot.Options{Token: "4242:SECRET-token-value"})
	url := s.URL()
	s.Close()
	c, err := telegram.NewClient(telegram.Config{Token: "4242:SECRET-token-value", APIURL: url})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Send(testCtx(t), telegram.Message{ChatID: 1, HTML: "x"})
	if err == nil || strings.Contains(err.Error(), "SECRET-token-value") {
		t.Fatalf("send error: %v", err)
	}
	var logs syncBuffer
	clk := newFakeClock()
	p, _ := telegram.NewPoller(telegram.PollerConfig{Client: c, Store: &memOffsets{}, Handler: journalHandler(newJournal()), Clock: clk, Log: zerolog.New(&logs)})
	runBG(t, p.Run)
	clk.waitWaiters(t, 1) // getUpdates failed, logged, backing off
	if out := logs.String(); !strings.Contains(out, "getUpdates") || strings.Contains(out, "SECRET-token-value") {
		t.Fatalf("poller log: %s", out)
	}
}
