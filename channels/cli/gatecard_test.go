package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

// gateEvent is a gate_approval as the scope sends it (actors/scope_gate.go):
// a value with terminal controls and a bidi override, and a context.
func gateEvent() messages.GateApprovalEvent {
	return messages.GateApprovalEvent{Type: messages.EventGateApproval, RequestID: "gate-1", GateName: "pii",
		Value:   "send \x1b[8mhidden\x1b[0m to bob\u202e@example.com",
		Context: map[string]any{"sender": "owner", "tool_args": map[string]any{"to": "bob@example.com", "force": false}}}
}

// A gate approval is answered from the chat: a, approve or y approve; b,
// block, n or an empty line block; anything else is asked again, unsent.
// At end of input the gate is blocked.
func TestChatGateApproval(t *testing.T) {
	tests := []struct {
		name    string
		input   string // after the chat line
		verdict string
		said    string // printed after the question
		stderr  string
	}{
		{"a approves", "a\n", verdictApproved, "approve\n", ""},
		{"approve", " Approve \n", verdictApproved, "approve\n", ""},
		{"y approves", "y\n", verdictApproved, "approve\n", ""},
		{"b blocks", "b\n", verdictDeclined, "block\n", ""},
		{"block", "block\n", verdictDeclined, "block\n", ""},
		{"Enter blocks", "\n", verdictDeclined, "block\n", ""},
		{"anything else asks again", "maybe\na\n", verdictApproved, gateQuestion + "approve\n", "answer a (approve) or b (block)\n"},
		{"end of input blocks", "", verdictDeclined, "\n", "gate approval pii answered block: end of input\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log wireLog
			responses := make(chan frame, 4)
			url := startLoggedServer(t, "tok", &log, func(p *peer) {
				f, ok := p.read()
				if !ok || f.Text != "send it" {
					t.Errorf("server: first frame %+v", f)
					return
				}
				p.send(gateEvent())
				resp, ok := p.read()
				if !ok {
					return
				}
				responses <- resp
				p.answer(f, "sent")
				p.read() // client's close
			})
			r := run(t, context.Background(), url, "tok", strings.NewReader("send it\n"+tt.input))
			if r.runErr != nil {
				t.Fatalf("Run: %v (stderr %q)", r.runErr, r.err)
			}
			resp := <-responses
			if resp.Type != messages.TypeGateResponse || resp.RequestID != "gate-1" || resp.Verdict != tt.verdict {
				t.Fatalf("server got %+v, want gate_response gate-1 %s", resp, tt.verdict)
			}
			if want := gateQuestion + tt.said + "silas> sent\n"; !strings.HasSuffix(r.out, want) {
				t.Errorf("stdout %q does not end with %q", r.out, want)
			}
			if r.err != tt.stderr {
				t.Errorf("stderr = %q, want %q", r.err, tt.stderr)
			}
			// One chat message and one verdict: a line that was no answer
			// went nowhere.
			var types []string
			for _, f := range log.all() {
				types = append(types, strings.SplitN(strings.TrimPrefix(f, `{"type":"`), `"`, 2)[0])
			}
			if got := strings.Join(types, " "); got != "auth message gate_response" {
				t.Errorf("frames %q, want auth, message, gate_response", got)
			}
		})
	}
}

// The card shows the gate, the value and the context, with terminal
// controls escaped and long values shortened, saying how much is left out.
func TestGateCardRendering(t *testing.T) {
	ev := gateEvent()
	var out bytes.Buffer
	writeGateCard(&out, &ev)
	got := out.String()
	for _, want := range []string{
		"gate approval requested: pii\n",
		`  value: send \u001b[8mhidden\u001b[0m to bob\u202e@example.com` + "\n",
		"  sender: owner\n",
		`  tool_args: {"force":false,"to":"bob@example.com"}` + "\n",
		"  approve: it goes ahead; block: the gate stops it\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("card lacks %q:\n%s", want, got)
		}
	}
	if strings.ContainsAny(got, "\x1b\u202e") {
		t.Errorf("card carries raw control characters: %q", got)
	}

	long := messages.GateApprovalEvent{GateName: "length", Value: strings.Repeat("é", maxGateValueRunes+50) + "\nEND",
		Context: map[string]any{}}
	for i := range maxGateContextKeys + 3 {
		long.Context[fmt.Sprintf("k%02d", i)] = strings.Repeat("x", maxGateContextRunes+10)
	}
	out.Reset()
	writeGateCard(&out, &long)
	got = out.String()
	if strings.Contains(got, "END") {
		t.Errorf("the long value was not shortened:\n%s", got)
	}
	for _, want := range []string{
		"  value: " + strings.Repeat("é", maxGateValueRunes) + "… (54 more characters)\n",
		"  k00: " + strings.Repeat("x", maxGateContextRunes) + "… (10 more characters)\n",
		"  (3 more context entries; see them in the web app)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("card lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "k20:") {
		t.Errorf("card shows more than %d context entries:\n%s", maxGateContextKeys, got)
	}
}
