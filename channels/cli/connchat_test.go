package cli

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
)

// checkFor polls fn until it returns true, failing the test after d.
func checkFor(t *testing.T, d time.Duration, what string, fn func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !fn() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func connStatus(id, name string, st messages.ConnectionStatus, detail string) messages.ConnectionStatusEvent {
	return messages.ConnectionStatusEvent{Type: messages.EventConnectionStatus, ConnectionID: id, Name: name, Status: st, Detail: detail}
}

// liveConnectCard is the connect card with an expiry ahead of the real
// clock.
func liveConnectCard() messages.ConnectionApprovalEvent {
	ev := connectCardEvent()
	ev.ExpiresAt = time.Now().Add(10 * time.Minute)
	return ev
}

func liveDeviceCard() messages.ConnectionSetupStepEvent {
	ev := deviceCardEvent()
	exp := time.Now().Add(15 * time.Minute)
	ev.ExpiresAt = &exp
	return ev
}

// proposeAndApprove plays the daemon's side of /connect up to the owner's
// approval, which it returns.
func proposeAndApprove(p *peer, wantText string) (frame, bool) {
	f, ok := p.read()
	if !ok {
		return f, false
	}
	if f.Type != "message" || f.Text != wantText {
		p.t.Errorf("server: first frame %+v, want the /connect message", f)
		return f, false
	}
	p.send(connStatus("cn-gh", "GitHub", messages.ConnectionProposed, `Silas is checking the service; approve the "Connect to ...?" card to sign in.`))
	p.send(liveConnectCard())
	return p.read()
}

// The whole device-code flow from the chat: /connect, the "Connect to
// GitHub?" card, the code card answered "done", and the outcome, shown
// before the CLI exits at the end of its input. Piped input answers each
// card, never racing it into a chat message.
func TestChatConnectDeviceCode(t *testing.T) {
	answers := make(chan frame, 2)
	const command = "/connect oauth-device name=GitHub client_id=Iv1.abc"
	url := startServer(t, "tok", func(p *peer) {
		resp, ok := proposeAndApprove(p, command)
		if !ok {
			return
		}
		answers <- resp
		p.send(connStatus("cn-gh", "GitHub", messages.ConnectionConnecting, ""))
		pct := 10.0
		p.send(messages.ConnectionSetupStepEvent{Type: messages.EventConnectionSetupStep, ConnectionID: "cn-gh", Service: "GitHub",
			StepType: messages.StepProgress, SetupStep: messages.SetupStep{Type: messages.StepProgress, Message: "Asking GitHub for a code", ProgressPct: &pct}})
		p.send(liveDeviceCard())
		resp, ok = p.read()
		if !ok {
			return
		}
		answers <- resp
		p.send(messages.ConnectionSetupStepEvent{Type: messages.EventConnectionSetupStep, ConnectionID: "cn-gh", Service: "GitHub",
			StepType: messages.StepCompletion, SetupStep: messages.SetupStep{Type: messages.StepCompletion, Success: true,
				Summary: "Connected as octocat", PermissionsGranted: []string{"read:user"}}})
		p.send(connStatus("cn-gh", "GitHub", messages.ConnectionActive, ""))
		if f, ok := p.read(); ok {
			t.Errorf("server: got %+v after the setup, want the client's close", f)
		}
	})
	r := run(t, context.Background(), url, "tok", strings.NewReader(command+"\ny\nd\n"))
	if r.runErr != nil {
		t.Fatalf("Run: %v (stderr %q)", r.runErr, r.err)
	}
	close(answers)
	var got []frame
	for f := range answers {
		got = append(got, f)
	}
	if len(got) != 2 {
		t.Fatalf("server got %d answers, want 2: %+v", len(got), got)
	}
	if a := got[0]; a.Type != "approval_response" || a.RequestID != "cc-approve" || a.Verdict != "approved" {
		t.Errorf("connect card answer %+v, want approval_response cc-approve approved", a)
	}
	if a := got[1]; a.Type != "connection_setup_response" || a.RequestID != "cc-device" || a.StepType != "device_code" || a.Action != "done" {
		t.Errorf("device card answer %+v, want connection_setup_response cc-device device_code done", a)
	}
	want := []string{
		"connection GitHub: proposed (Silas is checking the service",
		"approval requested: Connect to GitHub?\n",
		"connect? [y/N] approved\n",
		"connection GitHub: connecting\n",
		"connection GitHub: Asking GitHub for a code (10%)\n",
		"connection GitHub (cn-gh): sign in with a code\n",
		"  1. open https://github.com/login/device\n",
		"  2. enter the code WDJB-MJHT\n",
		"done, trouble or cancel? [D/t/c] done\n",
		"waiting for GitHub ...\n",
		"connection GitHub: signed in: Connected as octocat; granted read:user\n",
		"connection GitHub: active\n",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(r.out[at:], w)
		if i < 0 {
			t.Fatalf("stdout lacks %q after offset %d:\n%s", w, at, r.out)
		}
		at += i + len(w)
	}
	if r.err != "" {
		t.Errorf("stderr = %q, want nothing", r.err)
	}
}

// A failure card arrives in the middle of a turn, followed by the failed
// status, which must not close it. A line that is no choice is asked
// again; "1" picks the first recovery option.
func TestChatConnectionFailureCard(t *testing.T) {
	answers := make(chan frame, 1)
	url := startServer(t, "", func(p *peer) {
		f, ok := p.read()
		if !ok {
			return
		}
		p.send(failureCardEvent())
		p.send(connStatus("cn-gh", "GitHub", messages.ConnectionFailed, "The access was revoked."))
		resp, ok := p.read()
		if !ok {
			return
		}
		answers <- resp
		p.answer(f, "reconnecting")
		p.read() // client's close
	})
	in, inW := io.Pipe()
	defer inW.Close()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), Options{URL: url, In: in, Out: &out, Err: &errOut}) }()
	if _, err := io.WriteString(inW, "list my repos\n"); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 10*time.Second, "the failed status", func() bool {
		return strings.Contains(out.String(), "connection GitHub: failed (The access was revoked.)\n")
	})
	if _, err := io.WriteString(inW, "9\n1\n"); err != nil {
		t.Fatal(err)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v (stderr %q)", err, errOut.String())
	}
	if a := <-answers; a.Type != "connection_failure_response" || a.RequestID != "cc-fail" || a.SelectedAction != "reconnect" {
		t.Fatalf("server got %+v, want connection_failure_response cc-fail reconnect", a)
	}
	for _, w := range []string{
		"connection problem: GitHub (cn-gh): token_revoked\n",
		"  1. Reconnect: Run the setup again (risk low)\n",
		"choose 1-2, or s to skip [S] \nconnection GitHub: failed (The access was revoked.)\n",
		"choose 1-2, or s to skip [S] Reconnect\n",
		"silas> reconnecting\n",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("stdout lacks %q:\n%s", w, out.String())
		}
	}
	if want := "answer with a number from 1 to 2, or s (skip)\n"; errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
}

// The permission card is answered by letter; at the end of input it is
// denied.
func TestChatPermissionCard(t *testing.T) {
	tests := []struct {
		name, input, verdict, said string
	}{
		{"just this once", "open an issue\no\n", "just_this_once", "just this once\n"},
		{"approve", "open an issue\nA\n", "approve", "approve\n"},
		{"Enter denies", "open an issue\n\n", "deny", "deny\n"},
		{"end of input denies", "open an issue\n", "deny", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answers := make(chan frame, 1)
			url := startServer(t, "", func(p *peer) {
				f, ok := p.read()
				if !ok {
					return
				}
				p.send(permissionCardEvent())
				resp, ok := p.read()
				if !ok {
					return
				}
				answers <- resp
				p.answer(f, "issue opened")
				p.read() // client's close
			})
			r := run(t, context.Background(), url, "", strings.NewReader(tt.input))
			if r.runErr != nil {
				t.Fatalf("Run: %v (stderr %q)", r.runErr, r.err)
			}
			if a := <-answers; a.Type != "permission_escalation_response" || a.RequestID != "cc-perm" || a.Verdict != tt.verdict {
				t.Fatalf("server got %+v, want permission_escalation_response cc-perm %s", a, tt.verdict)
			}
			if !strings.Contains(r.out, "permission requested: give GitHub (cn-gh) more access\n") ||
				!strings.Contains(r.out, "approve, just this once, or deny? [a/o/D] "+tt.said) {
				t.Errorf("stdout = %q", r.out)
			}
			if tt.said == "" && !strings.Contains(r.err, "connection card for GitHub answered deny: end of input") {
				t.Errorf("stderr = %q, want the denial at end of input", r.err)
			}
		})
	}
}

// A secret the owner pastes at the secure-input card never leaves the
// CLI, nor is printed back; only "cancel" is sent.
func TestChatSecureInputNeverTakesTheSecret(t *testing.T) {
	const secret = "sk-live-7f3a9c0e5b1d"
	const command = "/connect api-key name=GitHub"
	frames := make(chan string, 8)
	url := startServer(t, "", func(p *peer) {
		resp, ok := proposeAndApprove(p, command)
		if !ok {
			return
		}
		frames <- resp.Type
		p.send(connStatus("cn-gh", "GitHub", messages.ConnectionConnecting, ""))
		card := secretCardEvent("cn-gh-cred")
		card.ConnectionID = "cn-gh"
		p.send(card)
		for {
			_, data, err := p.conn.ReadMessage()
			if err != nil {
				return
			}
			frames <- strings.TrimSpace(string(data))
			var f frame
			_ = json.Unmarshal(data, &f)
			if f.Action == "cancel" {
				p.send(connStatus("cn-gh", "GitHub", messages.ConnectionProposed, "you cancelled the setup; nothing was stored"))
			}
		}
	})
	r := run(t, context.Background(), url, "", strings.NewReader(command+"\ny\n"+secret+"\n\ncancel\n"))
	if r.runErr != nil {
		t.Fatalf("Run: %v (stderr %q)", r.runErr, r.err)
	}
	close(frames)
	var got []string
	for f := range frames {
		if strings.Contains(f, secret) {
			t.Fatalf("the secret crossed the WebSocket: %s", f)
		}
		got = append(got, f)
	}
	want := []string{"approval_response", `{"type":"connection_setup_response","request_id":"cn-gh-cred","step_type":"secure_input","action":"cancel"}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("server got %q, want %q", got, want)
	}
	if strings.Contains(r.out+r.err, secret) {
		t.Fatalf("the CLI printed the secret:\nstdout %s\nstderr %s", r.out, r.err)
	}
	for _, w := range []string{"    silas connections secret cn-gh-cred\n", "type cancel: cancel\n", "connection GitHub: proposed (you cancelled the setup; nothing was stored)\n"} {
		if !strings.Contains(r.out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, r.out)
		}
	}
	for _, w := range []string{"that line was not sent: a secret never goes through the chat", "Silas is still waiting for the secret"} {
		if !strings.Contains(r.err, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.err)
		}
	}
}

// When the sign-in finishes before the owner answers the code card, the
// card closes and the next line is a chat message again.
func TestChatDeviceCardClosedByCompletion(t *testing.T) {
	const command = "/connect oauth-device name=GitHub"
	chat := make(chan frame, 1)
	url := startServer(t, "", func(p *peer) {
		if _, ok := proposeAndApprove(p, command); !ok {
			return
		}
		p.send(connStatus("cn-gh", "GitHub", messages.ConnectionConnecting, ""))
		p.send(liveDeviceCard())
		p.send(connStatus("cn-gh", "GitHub", messages.ConnectionActive, "Connected as octocat"))
		f, ok := p.read()
		if !ok {
			return
		}
		chat <- f
		p.answer(f, "hi")
		p.read() // client's close
	})
	in, inW := io.Pipe()
	defer inW.Close()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), Options{URL: url, In: in, Out: &out, Err: &errOut}) }()
	if _, err := io.WriteString(inW, command+"\ny\n"); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 10*time.Second, "the code card to close", func() bool {
		return strings.Contains(out.String(), "(the card for GitHub is no longer pending)\n")
	})
	if _, err := io.WriteString(inW, "hello\n"); err != nil {
		t.Fatal(err)
	}
	if f := <-chat; f.Type != "message" || f.Text != "hello" {
		t.Fatalf("server got %+v, want the chat message hello", f)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v (stderr %q)", err, errOut.String())
	}
	want := "done, trouble or cancel? [D/t/c] \n(the card for GitHub is no longer pending)\nconnection GitHub: active (Connected as octocat)\nsilas> hi\n"
	if !strings.HasSuffix(out.String(), want) {
		t.Fatalf("stdout ends %q, want %q", out.String(), want)
	}
}

// At end of input a pending code card is cancelled, so that no sign-in is
// left running for a CLI that is gone.
func TestChatCancelsSetupAtEOF(t *testing.T) {
	const command = "/connect oauth-device name=GitHub"
	answers := make(chan frame, 1)
	url := startServer(t, "", func(p *peer) {
		if _, ok := proposeAndApprove(p, command); !ok {
			return
		}
		p.send(connStatus("cn-gh", "GitHub", messages.ConnectionConnecting, ""))
		p.send(liveDeviceCard())
		resp, ok := p.read()
		if !ok {
			return
		}
		answers <- resp
		p.read() // client's close
	})
	r := run(t, context.Background(), url, "", strings.NewReader(command+"\ny\n"))
	if r.runErr != nil {
		t.Fatalf("Run: %v (stderr %q)", r.runErr, r.err)
	}
	if a := <-answers; a.Type != "connection_setup_response" || a.RequestID != "cc-device" || a.Action != "cancel" {
		t.Fatalf("server got %+v, want the device card cancelled", a)
	}
	if !strings.Contains(r.err, "connection card for GitHub answered cancel: end of input") {
		t.Fatalf("stderr = %q", r.err)
	}
}

// A /connect the daemon refuses ends the wait at once.
func TestChatConnectRefused(t *testing.T) {
	url := startServer(t, "", func(p *peer) {
		if _, ok := p.read(); !ok {
			return
		}
		p.send(map[string]string{"type": "error", "code": "bad_request", "message": "usage: /connect <skill>", "request_type": "message"})
		p.read() // client's close
	})
	r := run(t, context.Background(), url, "", strings.NewReader("/connect\n"))
	if r.runErr != nil {
		t.Fatalf("Run: %v", r.runErr)
	}
	if r.err != "error: usage: /connect <skill> (bad_request)\n" {
		t.Fatalf("stderr = %q", r.err)
	}
}

// "trouble" keeps the code card: the server's answer is shown and the
// card asked again; "cancel" then ends the setup, and the CLI waits for
// the outcome before it exits.
func TestChatDeviceCardTroubleThenCancel(t *testing.T) {
	const command = "/connect oauth-device name=GitHub"
	answers := make(chan frame, 2)
	url := startServer(t, "", func(p *peer) {
		if _, ok := proposeAndApprove(p, command); !ok {
			return
		}
		p.send(connStatus("cn-gh", "GitHub", messages.ConnectionConnecting, ""))
		p.send(liveDeviceCard())
		for _, detail := range []string{"Still waiting for the service. If the code expired, cancel and connect again.", ""} {
			resp, ok := p.read()
			if !ok {
				return
			}
			answers <- resp
			if resp.Action == "trouble" {
				p.send(connStatus("cn-gh", "GitHub", messages.ConnectionConnecting, detail))
			} else {
				p.send(connStatus("cn-gh", "GitHub", messages.ConnectionProposed, "you cancelled the setup; nothing was stored"))
			}
		}
		p.read() // client's close
	})
	r := run(t, context.Background(), url, "", strings.NewReader(command+"\ny\nt\nc\n"))
	if r.runErr != nil {
		t.Fatalf("Run: %v (stderr %q)", r.runErr, r.err)
	}
	close(answers)
	var actions []string
	for a := range answers {
		if a.Type != "connection_setup_response" || a.RequestID != "cc-device" {
			t.Errorf("server got %+v", a)
		}
		actions = append(actions, a.Action)
	}
	if strings.Join(actions, ",") != "trouble,cancel" {
		t.Fatalf("actions %v, want trouble then cancel", actions)
	}
	for _, w := range []string{
		"done, trouble or cancel? [D/t/c] trouble\n",
		"connection GitHub: connecting (Still waiting for the service. If the code expired, cancel and connect again.)\n",
		"cancel\nwaiting for GitHub ...\n",
		"connection GitHub: proposed (you cancelled the setup; nothing was stored)\n",
	} {
		if !strings.Contains(r.out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, r.out)
		}
	}
}
