package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
)

// fakeTTY is a terminal for the tests: it hands out one line per Read, as
// a terminal in canonical mode does, and records whether echo was on when
// each line was read.
type fakeTTY struct {
	mu       sync.Mutex
	lines    []string
	echo     bool
	readEcho []bool // echo when each line was read
	failEcho bool   // NoEcho fails
	// hold[i], when set, holds back line i until it closes: the owner
	// is still typing it.
	hold map[int]chan struct{}
}

func newFakeTTY(lines ...string) *fakeTTY { return &fakeTTY{lines: lines, echo: true} }

func (f *fakeTTY) Read(p []byte) (int, error) {
	f.mu.Lock()
	hold := f.hold[len(f.readEcho)]
	f.mu.Unlock()
	if hold != nil {
		<-hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.lines) == 0 {
		return 0, io.EOF
	}
	l := f.lines[0] + "\n"
	if len(l) > len(p) {
		return 0, errors.New("fakeTTY: line longer than the read buffer")
	}
	f.lines = f.lines[1:]
	f.readEcho = append(f.readEcho, f.echo)
	return copy(p, l), nil
}

func (f *fakeTTY) IsTerminal() bool { return true }

func (f *fakeTTY) NoEcho() (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failEcho {
		return nil, errors.New("inappropriate ioctl for device")
	}
	if !f.echo {
		return nil, errors.New("fakeTTY: echo turned off twice")
	}
	f.echo = false
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.echo = true
	}, nil
}

func (f *fakeTTY) state() (echo bool, readEcho []bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.echo, append([]bool(nil), f.readEcho...)
}

// secureEndpoint is a fake of the daemon's POST /secrets/{ref_id}: it
// answers with the statuses given, in turn (then 200), and records what
// it was sent.
type secureEndpoint struct {
	mu       sync.Mutex
	statuses []int
	posts    []securePost
}

type securePost struct {
	path, auth, value string
}

func (e *secureEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Value string `json:"value"`
	}
	err := json.NewDecoder(r.Body).Decode(&body)
	e.mu.Lock()
	e.posts = append(e.posts, securePost{path: r.Method + " " + r.URL.Path, auth: r.Header.Get("Authorization"), value: body.Value})
	status := http.StatusOK
	if len(e.statuses) > 0 {
		status, e.statuses = e.statuses[0], e.statuses[1:]
	}
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case err != nil:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"type":"error","code":"bad_request","message":"the body must be {\"value\":\"<secret>\"}"}`))
	case status == http.StatusOK:
		_, _ = w.Write([]byte(`{"stored":true}`))
	default:
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(messages.ErrorEvent{Type: "error", Code: messages.CodeInternal, Message: http.StatusText(status)})
	}
}

func (e *secureEndpoint) all() []securePost {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]securePost(nil), e.posts...)
}

// startSecureEndpoint serves e on loopback and returns its base URL.
func startSecureEndpoint(t *testing.T, e *secureEndpoint) string {
	t.Helper()
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv.URL
}

// secretServer plays the daemon's side of a /connect with an API key: the
// approval, then the secure-input card. It answers a stored secret (the
// secure_input_completed that says so) with "active", a cancel with
// "proposed", and records every frame. done closes once the client has
// closed the connection and every frame is in log.
func secretServer(t *testing.T, log *wireLog) (url string, done <-chan struct{}) {
	const command = "/connect api-key name=GitHub"
	ended := make(chan struct{})
	return startLoggedServer(t, "tok", log, func(p *peer) {
		defer close(ended)
		if _, ok := proposeAndApprove(p, command); !ok {
			return
		}
		p.send(connStatus("cn-gh", "GitHub", messages.ConnectionConnecting, ""))
		card := secretCardEvent("cn-gh-cred")
		card.ConnectionID = "cn-gh"
		p.send(card)
		for {
			f, ok := p.read()
			if !ok {
				return
			}
			switch {
			case f.Type == messages.TypeSecureInputCompleted && f.Success:
				p.send(connStatus("cn-gh", "GitHub", messages.ConnectionActive, "signed in"))
			case f.Action == actionCancel:
				p.send(connStatus("cn-gh", "GitHub", messages.ConnectionProposed, "you cancelled the setup; nothing was stored"))
			}
		}
	}), ended
}

// assertSecretKept fails when secret crossed the WebSocket or was printed.
func assertSecretKept(t *testing.T, secret string, log *wireLog, r result) {
	t.Helper()
	frames := log.all()
	if len(frames) == 0 {
		t.Fatal("the server recorded no frame")
	}
	for _, f := range frames {
		if strings.Contains(f, secret) {
			t.Errorf("the secret crossed the WebSocket: %s", f)
		}
	}
	if strings.Contains(r.out+r.err, secret) {
		t.Errorf("the CLI printed the secret:\nstdout %s\nstderr %s", r.out, r.err)
	}
}

// framesOf returns the frames of log after the auth frame, the /connect
// message and the approval_response.
func framesOf(log *wireLog) []string {
	f := log.all()
	if len(f) < 3 {
		return nil
	}
	out := f[3:]
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// From a terminal, the secret of a secure-input card is typed with echo
// off, posted to the daemon's secure endpoint with the owner token, and
// the WebSocket carries only secure_input_completed {ref_id, success}.
func TestChatSecureInputTyped(t *testing.T) {
	const (
		command = "/connect api-key name=GitHub"
		secret  = "sk-live-7f3a9c0e5b1d"
		other   = "sk-live-second-try-42"
	)
	completed := func(ok bool) string {
		if ok {
			return `{"type":"secure_input_completed","ref_id":"cn-gh-cred","success":true}`
		}
		return `{"type":"secure_input_completed","ref_id":"cn-gh-cred"}`
	}
	cancel := `{"type":"connection_setup_response","request_id":"cn-gh-cred","step_type":"secure_input","action":"cancel"}`
	tests := []struct {
		name     string
		typed    []string // the lines typed at the secret prompt
		statuses []int    // the endpoint's answers
		posted   []string // the values the endpoint received
		frames   []string // what the WebSocket carried after the approval
		out, err []string
	}{
		{name: "stored", typed: []string{secret}, posted: []string{secret}, frames: []string{completed(true)},
			out: []string{"stored in the daemon's secure store (the chat never carried it)\n", "connection GitHub: active (signed in)\n"}},
		{name: "a failure asks again", typed: []string{secret, other}, statuses: []int{http.StatusInternalServerError},
			posted: []string{secret, other}, frames: []string{completed(true)},
			err: []string{"the secret was not stored: the daemon did not store it (HTTP 500: Internal Server Error); type it again"}},
		{name: "already answered", typed: []string{secret}, statuses: []int{http.StatusConflict}, posted: []string{secret},
			frames: []string{completed(false)}, err: []string{"the secure input request is no longer pending (HTTP 409"}},
		{name: "an empty line cancels", typed: []string{""}, frames: []string{cancel},
			out: []string{"connection GitHub: proposed (you cancelled the setup; nothing was stored)\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log wireLog
			url, served := secretServer(t, &log)
			ep := &secureEndpoint{statuses: tt.statuses}
			base := startSecureEndpoint(t, ep)
			tty := newFakeTTY(append([]string{command, "y"}, tt.typed...)...)
			var out, errOut syncBuffer
			err := Run(context.Background(), Options{URL: url, Token: "tok", In: tty, Out: &out, Err: &errOut,
				Terminal: tty, SecretsURL: base})
			r := result{out: out.String(), err: errOut.String(), runErr: err}
			if r.runErr != nil {
				t.Fatalf("Run: %v (stderr %q)", r.runErr, r.err)
			}
			<-served
			for _, s := range tt.typed {
				if s != "" {
					assertSecretKept(t, s, &log, r)
				}
			}
			var posted []string
			for _, p := range ep.all() {
				if p.path != "POST /secrets/cn-gh-cred" || p.auth != "Bearer tok" {
					t.Errorf("endpoint got %s with Authorization %q, want POST /secrets/cn-gh-cred with the owner token", p.path, p.auth)
				}
				posted = append(posted, p.value)
			}
			if strings.Join(posted, "|") != strings.Join(tt.posted, "|") {
				t.Errorf("endpoint got %q, want %q", posted, tt.posted)
			}
			if got := framesOf(&log); strings.Join(got, "\n") != strings.Join(tt.frames, "\n") {
				t.Errorf("WebSocket frames after the approval:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.frames, "\n"))
			}
			echo, readEcho := tty.state()
			if !echo {
				t.Error("echo is still off after Run returned")
			}
			// The command and "y" were read with echo on, every line
			// typed at the secret prompt with echo off.
			want := []bool{true, true}
			for range tt.typed {
				want = append(want, false)
			}
			if len(readEcho) < len(want) || !equalBools(readEcho[:len(want)], want) {
				t.Errorf("echo while each line was read: %v, want %v", readEcho, want)
			}
			for _, w := range append([]string{"Type it below: it is not shown", "secret (not shown; an empty line cancels the setup): \n"}, tt.out...) {
				if !strings.Contains(r.out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.out)
				}
			}
			if strings.Contains(r.out, "silas connections secret") {
				t.Errorf("a terminal session still sends the owner to another command:\n%s", r.out)
			}
			for _, w := range tt.err {
				if !strings.Contains(r.err, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.err)
				}
			}
		})
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Where the secret cannot be typed safely (a pipe, plain http to another
// host, a terminal whose echo cannot be turned off), the CLI reads none:
// the card shows `silas connections secret`, a pasted secret is dropped,
// and nothing reaches the secure endpoint or the WebSocket.
func TestChatSecureInputRefused(t *testing.T) {
	const (
		command = "/connect api-key name=GitHub"
		secret  = "sk-live-7f3a9c0e5b1d"
	)
	lines := []string{command, "y", secret, "cancel"}
	noEcho := newFakeTTY(lines...)
	noEcho.failEcho = true
	tests := []struct {
		name   string
		in     io.Reader
		term   Terminal
		remote bool // SecretsURL is plain http to another host
		why    string
	}{
		{name: "pipe", in: strings.NewReader(strings.Join(lines, "\n") + "\n"),
			why: "the CLI will not read the secret here: standard input is not a terminal"},
		{name: "plain http to another host", in: newFakeTTY(lines...), remote: true,
			why: "the CLI will not read the secret here: the daemon is reached over plain http on 192.0.2.1:8420"},
		{name: "echo cannot be turned off", in: noEcho, term: noEcho,
			why: "the CLI will not read the secret here: inappropriate ioctl for device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log wireLog
			url, served := secretServer(t, &log)
			ep := &secureEndpoint{}
			secretsURL := startSecureEndpoint(t, ep)
			term := tt.term
			if tty, ok := tt.in.(*fakeTTY); ok && term == nil {
				term = tty
			}
			if tt.remote {
				secretsURL = "http://192.0.2.1:8420"
			}
			var out, errOut syncBuffer
			err := Run(context.Background(), Options{URL: url, Token: "tok", In: tt.in, Out: &out, Err: &errOut,
				Terminal: term, SecretsURL: secretsURL})
			r := result{out: out.String(), err: errOut.String(), runErr: err}
			if r.runErr != nil {
				t.Fatalf("Run: %v (stderr %q)", r.runErr, r.err)
			}
			<-served
			assertSecretKept(t, secret, &log, r)
			if p := ep.all(); len(p) != 0 {
				t.Errorf("the secure endpoint was called: %+v", p)
			}
			want := `{"type":"connection_setup_response","request_id":"cn-gh-cred","step_type":"secure_input","action":"cancel"}`
			if got := framesOf(&log); strings.Join(got, "\n") != want {
				t.Errorf("WebSocket frames after the approval: %q, want only the cancel", got)
			}
			if !strings.Contains(r.out, "    silas connections secret cn-gh-cred\n") {
				t.Errorf("stdout lacks the command to type the secret with:\n%s", r.out)
			}
			for _, w := range []string{tt.why, "that line was not sent: a secret never goes through the chat"} {
				if !strings.Contains(r.err, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.err)
				}
			}
		})
	}
}

func TestSecretsBase(t *testing.T) {
	tests := []struct {
		url, secretsURL string
		want            string // "" when refused
	}{
		{"ws://127.0.0.1:8420/ws", "", "http://127.0.0.1:8420"},
		{"ws://localhost:8420/ws", "", "http://localhost:8420"},
		{"wss://silas.example.com/ws", "", "https://silas.example.com"},
		{"wss://example.com/silas/ws", "", "https://example.com/silas"},
		{"ws://silas.example.com/ws", "", ""},
		{"ws://127.0.0.1:8420/ws", "https://silas.example.com/", "https://silas.example.com"},
		{"ws://127.0.0.1:8420/ws", "http://10.0.0.2:8420", ""},
		{"ws://127.0.0.1:8420/ws", "ftp://127.0.0.1", ""},
		{"ws://127.0.0.1:8420/ws", "https://u:p@silas.example.com", ""},
	}
	for _, tt := range tests {
		got, err := secretsBase(Options{URL: tt.url, SecretsURL: tt.secretsURL})
		if tt.want == "" && err == nil || tt.want != "" && (err != nil || got != tt.want) {
			t.Errorf("secretsBase(%q, %q) = %q, %v; want %q", tt.url, tt.secretsURL, got, err, tt.want)
		}
	}
}

// When the daemon closes the secure-input card while the owner is typing
// the secret (it was stored from the app meanwhile), echo stays off until
// the line ends, and the line is dropped: part of a secret must neither
// show on the screen nor go out as chat.
func TestChatSecretPromptClosedWhileTyping(t *testing.T) {
	const (
		command = "/connect api-key name=GitHub"
		secret  = "sk-live-7f3a9c0e5b1d"
	)
	var log wireLog
	ended := make(chan struct{})
	url := startLoggedServer(t, "tok", &log, func(p *peer) {
		defer close(ended)
		if _, ok := proposeAndApprove(p, command); !ok {
			return
		}
		card := secretCardEvent("cn-gh-cred")
		card.ConnectionID = "cn-gh"
		p.send(card)
		p.send(connStatus("cn-gh", "GitHub", messages.ConnectionActive, "stored from the app"))
		for {
			if _, ok := p.read(); !ok {
				return
			}
		}
	})
	release := make(chan struct{})
	tty := newFakeTTY(command, "y", secret)
	tty.hold = map[int]chan struct{}{2: release}
	ep := &secureEndpoint{}
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{URL: url, Token: "tok", In: tty, Out: &out, Err: &errOut,
			Terminal: tty, SecretsURL: startSecureEndpoint(t, ep)})
	}()
	checkFor(t, 10*time.Second, "the card to close", func() bool { return strings.Contains(out.String(), "no longer pending") })
	if echo, _ := tty.state(); echo {
		t.Error("echo came back on while the secret was being typed")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v (stderr %q)", err, errOut.String())
	}
	<-ended
	r := result{out: out.String(), err: errOut.String()}
	assertSecretKept(t, secret, &log, r)
	if p := ep.all(); len(p) != 0 {
		t.Errorf("the secure endpoint was called: %+v", p)
	}
	if got := framesOf(&log); len(got) != 0 {
		t.Errorf("WebSocket frames after the approval: %q, want none", got)
	}
	echo, readEcho := tty.state()
	if !echo || !equalBools(readEcho, []bool{true, true, false}) {
		t.Errorf("echo %v at the end, %v while each line was read; want on, then [true true false]", echo, readEcho)
	}
	for _, w := range []string{"(the card for cn-gh is no longer pending)\n",
		"(press Enter to go on: what you type until then is not shown and not sent)\n", "connection GitHub: active (stored from the app)\n"} {
		if !strings.Contains(r.out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, r.out)
		}
	}
	if !strings.Contains(r.err, "the line typed at the closed secret prompt was not sent") {
		t.Errorf("stderr = %q", r.err)
	}
}
