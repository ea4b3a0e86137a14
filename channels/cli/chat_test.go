package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
)

// syncBuffer is a bytes.Buffer safe to read while Run writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

type result struct {
	out, err string
	runErr   error
}

func run(t *testing.T, ctx context.Context, url, token string, in io.Reader) result {
	t.Helper()
	var out, errOut syncBuffer
	err := Run(ctx, Options{URL: url, Token: token, In: in, Out: &out, Err: &errOut})
	return result{out: out.String(), err: errOut.String(), runErr: err}
}

func TestChatRoundTrip(t *testing.T) {
	got := make(chan frame, 16)
	url := startServer(t, "s3cret", func(p *peer) {
		for {
			f, ok := p.read()
			if !ok {
				return
			}
			got <- f
			p.answer(f, "echo: "+f.Text)
		}
	})
	r := run(t, context.Background(), url, "s3cret", strings.NewReader("hello\n\n   \nwörld \"quoted\"\n"))
	if r.runErr != nil {
		t.Fatalf("Run: %v (stderr %q)", r.runErr, r.err)
	}
	if want := "silas> echo: hello\nsilas> echo: wörld \"quoted\"\n"; r.out != want {
		t.Fatalf("stdout = %q, want %q", r.out, want)
	}
	if r.err != "" {
		t.Fatalf("stderr = %q, want nothing (acks are silent)", r.err)
	}
	close(got)
	var texts []string
	for f := range got {
		if f.Type != "message" {
			t.Errorf("frame type %q, want message", f.Type)
		}
		if _, err := uuid.Parse(f.MessageID); err != nil {
			t.Errorf("message_id %q is not a UUID", f.MessageID)
		}
		texts = append(texts, f.Text)
	}
	if strings.Join(texts, "|") != "hello|wörld \"quoted\"" {
		t.Fatalf("server got %q", texts)
	}
}

// TestChatWaitsForAnswerAtEOF: the input ends at once, but the answer is
// sent only after the server has seen the client's message; Run must still
// print it before returning.
func TestChatWaitsForAnswerAtEOF(t *testing.T) {
	url := startServer(t, "", func(p *peer) {
		f, ok := p.read()
		if !ok {
			return
		}
		p.send(map[string]string{"type": "message", "text": "unrelated notice", "reply_to": "someone-else"})
		p.answer(f, "late answer")
		p.read() // client's close
	})
	r := run(t, context.Background(), url, "", strings.NewReader("question"))
	if r.runErr != nil {
		t.Fatalf("Run: %v", r.runErr)
	}
	if want := "silas> unrelated notice\nsilas> late answer\n"; r.out != want {
		t.Fatalf("stdout = %q, want %q", r.out, want)
	}
}

func TestChatApproval(t *testing.T) {
	tests := []struct {
		answer  string
		verdict string
	}{
		{"y", "approved"},
		{"YES ", "approved"},
		{"", "declined"},
		{"n", "declined"},
		{"maybe", "declined"},
	}
	for _, tt := range tests {
		t.Run(tt.verdict+"/"+tt.answer, func(t *testing.T) {
			verdicts := make(chan frame, 1)
			url := startServer(t, "tok", func(p *peer) {
				f, ok := p.read()
				if !ok || f.Text != "deploy" {
					t.Errorf("server: first frame %+v", f)
					return
				}
				p.send(map[string]any{"type": "approval_request", "request_id": "req-1",
					"title": "Deploy the site", "body": "3 steps", "budget": map[string]int{"max_attempts": 3}})
				resp, ok := p.read()
				if !ok {
					return
				}
				verdicts <- resp
				p.answer(f, "done: "+resp.Verdict)
				f, ok = p.read()
				if ok {
					p.answer(f, "second")
					p.read() // client's close
				}
			})
			r := run(t, context.Background(), url, "tok", strings.NewReader("deploy\n"+tt.answer+"\nnext\n"))
			if r.runErr != nil {
				t.Fatalf("Run: %v", r.runErr)
			}
			resp := <-verdicts
			if resp.Type != "approval_response" || resp.RequestID != "req-1" || resp.Verdict != tt.verdict {
				t.Fatalf("server got %+v, want approval_response req-1 %s", resp, tt.verdict)
			}
			for _, want := range []string{"approval requested: Deploy the site\n3 steps\n", "3 attempts",
				"approve? [y/N] " + tt.verdict + "\n", "silas> done: " + tt.verdict + "\nsilas> second\n"} {
				if !strings.Contains(r.out, want) {
					t.Errorf("stdout %q lacks %q", r.out, want)
				}
			}
		})
	}
}

func TestChatDeclinesApprovalAtEOF(t *testing.T) {
	verdicts := make(chan string, 1)
	url := startServer(t, "", func(p *peer) {
		f, ok := p.read()
		if !ok {
			return
		}
		p.send(map[string]any{"type": "approval_request", "request_id": "r", "title": "Delete files"})
		resp, ok := p.read()
		if !ok {
			return
		}
		verdicts <- resp.Verdict
		p.answer(f, "cancelled")
		p.read() // client's close
	})
	r := run(t, context.Background(), url, "", strings.NewReader("clean up\n"))
	if r.runErr != nil {
		t.Fatalf("Run: %v", r.runErr)
	}
	if v := <-verdicts; v != "declined" {
		t.Fatalf("verdict %q, want declined", v)
	}
	if !strings.Contains(r.err, `approval "Delete files" declined: end of input`) {
		t.Fatalf("stderr = %q", r.err)
	}
	if !strings.HasSuffix(r.out, "silas> cancelled\n") {
		t.Fatalf("stdout = %q", r.out)
	}
}

func TestChatServerEvents(t *testing.T) {
	url := startServer(t, "", func(p *peer) {
		f, ok := p.read()
		if !ok {
			return
		}
		p.send(map[string]any{"type": "work_item_progress", "step": 1})
		p.send(map[string]any{"type": "checkpoint", "request_id": "c"})
		p.send(map[string]string{"type": "error", "code": "busy", "message": "too many pending turns", "reply_to": f.MessageID})
		p.read()
	})
	r := run(t, context.Background(), url, "", strings.NewReader("hi\n"))
	if r.runErr != nil {
		t.Fatalf("Run: %v", r.runErr)
	}
	if r.out != "" {
		t.Fatalf("stdout = %q, want nothing", r.out)
	}
	want := "silas sent a checkpoint card, which the CLI cannot answer; use the web UI\n" +
		"error: too many pending turns (busy)\n"
	if r.err != want {
		t.Fatalf("stderr = %q, want %q", r.err, want)
	}
}

func TestChatUnauthorized(t *testing.T) {
	url := startServer(t, "right", func(p *peer) {
		t.Error("script ran for an unauthorized client")
	})
	for _, token := range []string{"wrong", ""} {
		r := run(t, context.Background(), url, token, strings.NewReader("hi\n"))
		if !errors.Is(r.runErr, ErrUnauthorized) {
			t.Fatalf("token %q: Run = %v, want ErrUnauthorized", token, r.runErr)
		}
		if want := "unauthorized: check the auth token (silas.channels.web.auth_token)"; r.runErr.Error() != want {
			t.Fatalf("error %q, want %q", r.runErr, want)
		}
	}
}

func TestChatUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	url := "ws://" + addr + "/ws"
	r := run(t, context.Background(), url, "", strings.NewReader("hi\n"))
	if !errors.Is(r.runErr, ErrUnreachable) {
		t.Fatalf("Run = %v, want ErrUnreachable", r.runErr)
	}
	if want := "cannot reach silas at " + url + ": is `silas serve` running?"; r.runErr.Error() != want {
		t.Fatalf("error %q, want %q", r.runErr, want)
	}
}

func TestChatServerClosesMidConversation(t *testing.T) {
	url := startServer(t, "", func(p *peer) {
		if _, ok := p.read(); ok {
			p.closeWith(1011, "internal error")
		}
	})
	r := run(t, context.Background(), url, "", strings.NewReader("hi\n"))
	if !errors.Is(r.runErr, ErrClosed) || !strings.Contains(r.runErr.Error(), "1011 internal error") {
		t.Fatalf("Run = %v, want ErrClosed with the close code", r.runErr)
	}
}

func TestChatContextCancel(t *testing.T) {
	received := make(chan struct{})
	url := startServer(t, "", func(p *peer) {
		if _, ok := p.read(); ok {
			close(received)
		}
		p.conn.ReadMessage() // never answer; wait for the client to go
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-received
		cancel()
	}()
	in, inW := io.Pipe() // input that never ends
	defer inW.Close()
	go inW.Write([]byte("hi\n"))
	r := run(t, ctx, url, "", in)
	if !errors.Is(r.runErr, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", r.runErr)
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url, token string
		insecure   bool
		want       error // nil: accepted; errAny: any error
	}{
		{"ws://127.0.0.1:8420/ws", "t", false, nil},
		{"ws://localhost:8420/ws", "t", false, nil},
		{"ws://[::1]:8420/ws", "t", false, nil},
		{"wss://silas.example.com/ws", "t", false, nil},
		{"ws://silas.example.com/ws", "", false, nil},
		{"ws://silas.example.com/ws", "t", false, ErrInsecureURL},
		{"ws://192.168.1.5:8420/ws", "t", false, ErrInsecureURL},
		{"ws://192.168.1.5:8420/ws", "t", true, nil},
		{"http://127.0.0.1:8420/ws", "", false, errAny},
		{"ws://127.0.0.1:8420/ws?token=t", "", false, errAny},
		{"ws://user:pw@127.0.0.1:8420/ws", "", false, errAny},
		{"://", "", false, errAny},
	}
	for _, tt := range tests {
		err := checkURL(Options{URL: tt.url, Token: tt.token, AllowInsecureRemote: tt.insecure})
		switch {
		case tt.want == nil && err != nil:
			t.Errorf("checkURL(%q, token %q) = %v, want nil", tt.url, tt.token, err)
		case tt.want == errAny && err == nil:
			t.Errorf("checkURL(%q) = nil, want an error", tt.url)
		case tt.want != nil && tt.want != errAny && !errors.Is(err, tt.want):
			t.Errorf("checkURL(%q, token %q) = %v, want %v", tt.url, tt.token, err, tt.want)
		}
	}
}

var errAny = errors.New("any error")
