package main

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// pushService is a fake push service: it records every Web Push request
// and answers status (201 unless set).
type pushService struct {
	*httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    []pushRequest
}

type pushRequest struct {
	header http.Header
	body   []byte
}

func newPushService(t *testing.T) *pushService {
	t.Helper()
	p := &pushService{}
	p.status.Store(http.StatusCreated)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		p.mu.Lock()
		p.got = append(p.got, pushRequest{header: r.Header.Clone(), body: b})
		p.mu.Unlock()
		w.WriteHeader(int(p.status.Load()))
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *pushService) requests() []pushRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]pushRequest(nil), p.got...)
}

// browserSub is a browser's side of a push subscription: its ECDH key
// pair and authentication secret (RFC 8291), which decrypt what is sent.
type browserSub struct {
	endpoint string
	priv     *ecdh.PrivateKey
	auth     []byte
}

func newBrowserSub(t *testing.T, endpoint string) *browserSub {
	t.Helper()
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	return &browserSub{endpoint: endpoint, priv: priv, auth: auth}
}

func (b *browserSub) json() string {
	enc := base64.RawURLEncoding
	v, _ := json.Marshal(map[string]any{"endpoint": b.endpoint, "expirationTime": nil,
		"keys": map[string]string{"p256dh": enc.EncodeToString(b.priv.PublicKey().Bytes()), "auth": enc.EncodeToString(b.auth)}})
	return string(v)
}

// decrypt opens an aes128gcm Web Push body (RFC 8291, RFC 8188): one
// record, header salt(16) | rs(4) | idlen(1) | the server's ephemeral key.
func (b *browserSub) decrypt(t *testing.T, body []byte) []byte {
	t.Helper()
	if len(body) < 21 {
		t.Fatalf("push body of %d bytes", len(body))
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if idlen != 65 || len(body) < 21+idlen || rs < 18 {
		t.Fatalf("push header: key id of %d bytes, record size %d", idlen, rs)
	}
	asPub, ct := body[21:21+idlen], body[21+idlen:]
	serverKey, err := ecdh.P256().NewPublicKey(asPub)
	if err != nil {
		t.Fatalf("server key: %v", err)
	}
	shared, err := b.priv.ECDH(serverKey)
	if err != nil {
		t.Fatal(err)
	}
	prkKey, err := hkdf.Extract(sha256.New, shared, b.auth)
	if err != nil {
		t.Fatal(err)
	}
	info := append(append([]byte("WebPush: info\x00"), b.priv.PublicKey().Bytes()...), asPub...)
	ikm, err := hkdf.Expand(sha256.New, prkKey, string(info), 32)
	if err != nil {
		t.Fatal(err)
	}
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		t.Fatal(err)
	}
	cek, _ := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	nonce, _ := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	block, err := aes.NewCipher(cek)
	if err != nil {
		t.Fatal(err)
	}
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, nonce, ct, nil)
	if err != nil {
		t.Fatalf("the push payload does not decrypt with the subscription's keys: %v", err)
	}
	plain = bytes.TrimRight(plain, "\x00")
	if len(plain) == 0 || plain[len(plain)-1] != 0x02 {
		t.Fatalf("the last record does not end with the 0x02 delimiter")
	}
	return plain[:len(plain)-1]
}

// ownerHTTP sends an owner API request and returns its status and body.
func ownerHTTP(t *testing.T, addr, method, path, token, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// With no owner connection open, a pending approval reaches the owner's
// subscribed browser as one Web Push request that only the subscription's
// keys decrypt, carrying the card's title and nothing of its body; a plan
// asked while the app is connected sends none. Asked in chat afterwards,
// "what did you do while I was away?" is answered from the audit log.
func TestPushWhenNoClientIsConnected(t *testing.T) {
	mock := newMock(t)
	release := make(chan struct{})
	heldPlanner(mock, release)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	push := newPushService(t)
	sub := newBrowserSub(t, push.URL+"/push/abc123")

	status, body := ownerHTTP(t, d.Addr(), http.MethodGet, "/push/key", pwaToken, "")
	var key struct {
		PublicKey string `json:"public_key"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &key) != nil || key.PublicKey == "" {
		t.Fatalf("GET /push/key: %d %s", status, body)
	}
	if status, body := ownerHTTP(t, d.Addr(), http.MethodPost, "/push/subscribe", pwaToken, sub.json()); status != http.StatusCreated {
		t.Fatalf("POST /push/subscribe: %d %s", status, body)
	}

	// Connected: the card is on the screen, no push.
	close(release)
	c := owner(t, d.Addr())
	c.say("please write hello.txt")
	seen := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": seen.str("request_id"), "verdict": "declined"})
	_ = c.conn.Close()
	checkFor(t, waitLimit, func() bool { return wsConnections(t, d.Addr()) == 0 }, "the closed connection to be gone")

	// Not connected: one push.
	release2 := make(chan struct{})
	heldPlanner(mock, release2)
	ownerLeavesBeforeThePlan(t, d, release2)
	var pending []string
	checkFor(t, waitLimit, func() bool {
		_, pending = pendingApprovals(t, d.Addr(), pwaToken)
		return len(pending) == 1
	}, "the plan to wait for approval")
	checkFor(t, waitLimit, func() bool { return len(push.requests()) > 0 }, "a Web Push request")
	got := push.requests()
	if len(got) != 1 {
		t.Fatalf("%d push requests, want 1 (none for the card shown on a connected app)", len(got))
	}
	r := got[0]
	if r.header.Get("Content-Encoding") != "aes128gcm" || r.header.Get("TTL") == "" {
		t.Errorf("push headers %v, want aes128gcm with a TTL", r.header)
	}
	if a := r.header.Get("Authorization"); !strings.HasPrefix(a, "vapid t=") || !strings.HasSuffix(a, ", k="+key.PublicKey) {
		t.Errorf("Authorization %q, want VAPID with the served public key", a)
	}
	if bytes.Contains(r.body, []byte("hello")) {
		t.Error("the push body carries the title in clear")
	}
	var payload struct {
		Title string `json:"title"`
		Tag   string `json:"tag"`
		URL   string `json:"url"`
	}
	plain := sub.decrypt(t, r.body)
	dec := json.NewDecoder(bytes.NewReader(plain))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&payload); err != nil {
		t.Fatalf("payload %q: %v", plain, err)
	}
	if payload.Title != "Silas is waiting for your approval: Write hello.txt" || payload.Tag != pending[0] {
		t.Fatalf("payload %+v, want the card's title and request id %s", payload, pending[0])
	}
	if strings.Contains(string(plain), "Create the file") {
		t.Fatalf("the payload carries the plan's body: %s", plain)
	}

	// Back at the app: the summary of what happened meanwhile.
	c2 := owner(t, d.Addr())
	c2.next("approval_request")
	id := c2.say("What did you do while I was away?")
	text := c2.answerTo(id).str("text")
	for _, want := range []string{"from the audit log", "Approvals: asked 2, you approved 0, declined 1"} {
		if !strings.Contains(text, want) {
			t.Fatalf("away summary %q, want %q", text, want)
		}
	}
	if len(push.requests()) != 1 {
		t.Fatalf("%d push requests after the owner came back, want still 1", len(push.requests()))
	}
	// Last: a customer's connection would count as a connection above.
	if status, _ := ownerHTTP(t, d.Addr(), http.MethodPost, "/push/subscribe", pwaCustomer(t, d.Addr()), sub.json()); status != http.StatusForbidden {
		t.Fatalf("a customer subscribing: %d, want 403", status)
	}
}

// A push service answering 410 Gone (the browser unsubscribed) removes the
// subscription; a bad subscription is refused.
func TestPushGoneRemovesSubscription(t *testing.T) {
	mock := newMock(t)
	release := make(chan struct{})
	heldPlanner(mock, release)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	push := newPushService(t)
	push.status.Store(http.StatusGone)
	sub := newBrowserSub(t, push.URL+"/push/gone")
	if status, body := ownerHTTP(t, d.Addr(), http.MethodPost, "/push/subscribe", pwaToken, sub.json()); status != http.StatusCreated {
		t.Fatalf("POST /push/subscribe: %d %s", status, body)
	}
	bad := strings.Replace(sub.json(), "http://127.0.0.1", "http://203.0.113.9", 1)
	if status, _ := ownerHTTP(t, d.Addr(), http.MethodPost, "/push/subscribe", pwaToken, bad); status != http.StatusBadRequest {
		t.Fatalf("plain http to a remote host: %d, want 400", status)
	}
	ownerLeavesBeforeThePlan(t, d, release)
	checkFor(t, waitLimit, func() bool { return len(push.requests()) > 0 }, "a Web Push request")
	checkFor(t, waitLimit, func() bool {
		subs, err := d.in.db.PushSubscriptions().List(context.Background())
		return err == nil && len(subs) == 0
	}, "the gone subscription to be removed")
	if n := len(push.requests()); n != 1 {
		t.Fatalf("%d requests to a gone subscription, want 1 (no retry)", n)
	}
}
