package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/keys"
)

// syncBuffer is a log sink the daemon's goroutines can share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startLogged starts a daemon that logs everything, at debug level, into
// the returned buffer.
func startLogged(t *testing.T, ov map[string]any) (*testDaemon, *syncBuffer) {
	t.Helper()
	ov["silas.log.level"] = "debug"
	buf := &syncBuffer{}
	d, err := startDaemon(context.Background(), loadConfig(t, ov), zerolog.New(buf).Level(zerolog.DebugLevel), false)
	if err != nil {
		t.Fatalf("start daemon: %v", err)
	}
	td := &testDaemon{daemon: d, t: t}
	t.Cleanup(td.stop)
	return td, buf
}

func TestSecureInputStoresValueOnlyInKeystore(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	d, logs := startLogged(t, overrides(t, mock, dir))
	addr := d.Addr()
	ctx := context.Background()
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	value := "ntn_" + hex.EncodeToString(raw)
	const ref = "notion-setup-1"

	c := owner(t, addr)
	// The runtime asks for a secret when a connection skill needs one.
	if err := d.secrets.Request(ctx, persistence.SecureInputRequest{
		RefID: ref, Label: "Notion integration token", InputHint: "ntn_", Scope: "owner",
	}); err != nil {
		t.Fatal(err)
	}
	var pending ownerapi.PendingSecrets
	pwaJSON(t, addr, "GET", "/secrets/pending", "owner-secret-token", "", http.StatusOK, &pending)
	if len(pending.Requests) != 1 || pending.Requests[0].RefID != ref || pending.Requests[0].InputHint != "ntn_" {
		t.Fatalf("pending: %+v", pending)
	}

	body := `{"value":"` + value + `"}`
	for _, r := range []struct {
		path, token, body string
		want              int
	}{
		{"/secrets/" + ref, "", body, http.StatusUnauthorized},
		{"/secrets/" + ref, pwaCustomer(t, addr), body, http.StatusForbidden},
		{"/secrets/no-such-ref", "owner-secret-token", body, http.StatusNotFound},
		{"/secrets/" + ref, "owner-secret-token", `{"value":""}`, http.StatusBadRequest},
		{"/secrets/" + ref, "owner-secret-token", `{"value":"` + value + `","echo":1}`, http.StatusBadRequest},
		{"/secrets/" + ref, "owner-secret-token", body, http.StatusOK},
		{"/secrets/" + ref, "owner-secret-token", body, http.StatusConflict},
	} {
		status, b := pwaCall(t, addr, "POST", r.path, r.token, r.body)
		if status != r.want {
			t.Fatalf("POST %s: %d %s, want %d", r.path, status, b, r.want)
		}
		if r.want == http.StatusOK && string(b) != `{"stored":true}` {
			t.Fatalf("success body %s, want exactly {\"stored\":true}", b)
		}
		if strings.Contains(string(b), value) {
			t.Fatalf("the response echoes the value: %s", b)
		}
	}
	pwaJSON(t, addr, "GET", "/secrets/pending", "owner-secret-token", "", http.StatusOK, &pending)
	if len(pending.Requests) != 0 {
		t.Fatalf("fulfilled request still pending: %+v", pending)
	}
	got, err := d.secrets.Value(ctx, ref)
	if err != nil || string(got) != value {
		t.Fatalf("stored value: %v (matches: %v)", err, string(got) == value)
	}
	info, err := os.Stat(filepath.Join(dir, "keys", keys.VaultKeyName(ref)))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("keystore file: %v %v", err, info)
	}
	// A cancelled setup leaves neither the request nor the value behind.
	const cancelled = "cancelled-setup"
	if err := d.secrets.Request(ctx, persistence.SecureInputRequest{RefID: cancelled, Label: "GitHub PAT"}); err != nil {
		t.Fatal(err)
	}
	pwaJSON(t, addr, "POST", "/secrets/"+cancelled, "owner-secret-token", `{"value":"half-done"}`, http.StatusOK, nil)
	if err := d.secrets.Cancel(ctx, cancelled); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "keys", keys.VaultKeyName(cancelled))); !os.IsNotExist(err) {
		t.Fatalf("cancelled secret still on disk: %v", err)
	}
	if status, _ := pwaCall(t, addr, "POST", "/secrets/"+cancelled, "owner-secret-token", `{"value":"again"}`); status != http.StatusNotFound {
		t.Fatalf("post to a cancelled ref: %d, want 404", status)
	}

	// The PWA confirms over the socket, without the value; then a turn runs.
	c.send(map[string]any{"type": "secure_input_completed", "ref_id": ref, "success": true})
	id := c.say("is the connection ready?")
	for {
		ev := c.nextAny()
		b, _ := json.Marshal(ev)
		if strings.Contains(string(b), value) {
			t.Fatalf("the value crossed the WebSocket: %s", b)
		}
		if ev.str("type") == "message" && ev.str("reply_to") == id {
			break
		}
	}
	stored := pwaAudit(t, d, "secret_stored")
	if len(stored) != 2 || string(stored[0].Data) != `{"ref_id":"`+ref+`"}` {
		t.Fatalf("secret_stored audit entries: %+v", stored)
	}
	all, err := d.in.db.Audit().Range(ctx, 1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range all {
		if strings.Contains(string(e.Data), value) {
			t.Fatalf("the value is in audit entry %d (%s)", e.Seq, e.Event)
		}
	}
	for _, r := range mock.Requests() {
		if strings.Contains(requestText(&r), value) {
			t.Fatal("the value reached the model")
		}
	}

	d.stop()
	if logs.String() == "" {
		t.Fatal("no log output captured: the log check below would prove nothing")
	}
	if strings.Contains(logs.String(), value) {
		t.Fatal("the value is in the daemon's log")
	}
	// Nor anywhere in the database files.
	err = filepath.WalkDir(filepath.Join(dir, "db"), func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(value)) {
			t.Errorf("the value is stored in %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
