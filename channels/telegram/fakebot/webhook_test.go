package fakebot

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestWebhookDeliversWithSecretAndRetries(t *testing.T) {
	s := Start(t, Options{WebhookRetry: 1})
	var mu sync.Mutex
	var got []int64
	var secrets []string
	refuse := 1 // the first delivery gets a 500
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var u struct {
			UpdateID int64 `json:"update_id"`
		}
		_ = json.Unmarshal(body, &u)
		mu.Lock()
		defer mu.Unlock()
		secrets = append(secrets, r.Header.Get(SecretTokenHeader))
		if refuse > 0 {
			refuse--
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		got = append(got, u.UpdateID)
	}))
	defer hook.Close()

	a := s.PushMessage(1, 1, "before the webhook")
	mustOK(t, s, "setWebhook", map[string]any{"url": hook.URL, "secret_token": "s3cret_-token"})
	b := s.PushMessage(1, 1, "after")

	ctx := waitCtx(t)
	if err := s.WaitFor(ctx, func(sn Snapshot) bool { return sn.Pending == 0 }); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("webhook got %v, want [%d %d] (the refused one redelivered, in order)", got, a, b)
	}
	for _, sec := range secrets {
		if sec != "s3cret_-token" {
			t.Fatalf("delivery carried secret %q", sec)
		}
	}
	d := s.Snapshot().Deliveries
	if len(d) != 3 || d[0].Status != 500 || d[0].UpdateID != a {
		t.Fatalf("deliveries = %+v", d)
	}
}

func TestWebhookBlocksGetUpdatesUntilDeleted(t *testing.T) {
	s := Start(t, Options{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable) // keep updates pending
	}))
	defer hook.Close()
	mustOK(t, s, "setWebhook", map[string]any{"url": hook.URL})
	if r, code := call(t, s, "getUpdates", nil); code != http.StatusConflict || !strings.Contains(r.Description, "webhook is active") {
		t.Fatalf("getUpdates with webhook: %d %q", code, r.Description)
	}
	var info struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal(mustOK(t, s, "getWebhookInfo", nil), &info)
	if info.URL != hook.URL {
		t.Fatalf("webhook info url %q", info.URL)
	}
	id := s.PushMessage(1, 1, "x")
	mustOK(t, s, "deleteWebhook", nil)
	if got := updateIDs(t, mustOK(t, s, "getUpdates", nil)); len(got) != 1 || got[0] != id {
		t.Fatalf("after deleteWebhook getUpdates = %v, want the undelivered update", got)
	}
}

func TestSetWebhookValidation(t *testing.T) {
	s := Start(t, Options{})
	for _, tt := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"url": "ftp://x.example/hook"}, "HTTPS URL"},
		{map[string]any{"url": "https://x.example/hook", "secret_token": "has space"}, "unallowed characters"},
		{map[string]any{"url": "https://x.example/hook", "secret_token": strings.Repeat("a", 257)}, "unallowed characters"},
	} {
		if r, code := call(t, s, "setWebhook", tt.params); code != 400 || !strings.Contains(r.Description, tt.want) {
			t.Errorf("setWebhook(%v) = %d %q, want 400 with %q", tt.params, code, r.Description, tt.want)
		}
	}
}
