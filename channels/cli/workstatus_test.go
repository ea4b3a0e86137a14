package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

// A work item's progress prints one line per change, named by the title
// of its approval, with a shortened one-line detail, and the final status
// says it finished.
func TestChatWorkItemStatus(t *testing.T) {
	status := func(st string, attempt int, detail string) messages.WorkItemStatusEvent {
		return messages.WorkItemStatusEvent{Type: messages.EventWorkItemStatus, WorkItemID: "wi-1", Status: st, Attempt: attempt, Detail: detail}
	}
	long := "tests:\n 2 failed \x1b[31mred\x1b[0m " + strings.Repeat("x", maxStatusDetailRunes)
	const shown = "tests: 2 failed \x1b[31mred\x1b[0m " // the detail on one line
	url := startServer(t, "", func(p *peer) {
		f, ok := p.read()
		if !ok {
			return
		}
		p.send(messages.ApprovalRequestEvent{Type: messages.EventApprovalRequest, RequestID: "req-1", WorkItemID: "wi-1",
			Title: "Deploy the site", Body: "3 steps"})
		if resp, ok := p.read(); !ok || resp.Verdict != verdictApproved {
			t.Errorf("server: approval %+v", resp)
			return
		}
		for _, ev := range []messages.WorkItemStatusEvent{
			status("running", 1, ""),
			status("running", 1, ""), // no change: not printed again
			status(messages.ProgressVerificationFailed, 1, long),
			status("running", 2, ""),
			status("done", 2, "all checks passed"),
		} {
			p.send(ev)
		}
		p.send(messages.WorkItemStatusEvent{Type: messages.EventWorkItemStatus, WorkItemID: "wi-2", Status: "failed"})
		p.answer(f, "finished")
		p.read() // client's close
	})
	r := run(t, context.Background(), url, "", strings.NewReader("deploy\ny\n"))
	if r.runErr != nil {
		t.Fatalf("Run: %v (stderr %q)", r.runErr, r.err)
	}
	want := "approve? [y/N] approved\n" +
		"work item wi-1 (Deploy the site): running, attempt 1\n" +
		`work item wi-1 (Deploy the site): verification_failed, attempt 1: tests: 2 failed \u001b[31mred\u001b[0m ` +
		strings.Repeat("x", maxStatusDetailRunes-len(shown)) + fmt.Sprintf("… (%d more characters)\n", len(shown)) +
		"work item wi-1 (Deploy the site): running, attempt 2\n" +
		"work item wi-1 (Deploy the site) finished: done, attempt 2: all checks passed\n" +
		"work item wi-2 finished: failed\n" +
		"silas> finished\n"
	if !strings.HasSuffix(r.out, want) {
		t.Fatalf("stdout:\n%s\nwant it to end with:\n%s", r.out, want)
	}
}

// An answer to a failed turn says whether sending it again may help.
func TestChatTurnErrorHint(t *testing.T) {
	tests := []struct {
		err  *messages.TurnError
		want string
	}{
		{&messages.TurnError{Kind: "rate_limited", Retryable: true}, "turn error rate_limited (retryable)\n"},
		{&messages.TurnError{Kind: "auth"}, "turn error auth (will fail again until fixed)\n"},
		{&messages.TurnError{Kind: messages.TurnErrorInternal}, "turn error internal (will fail again until fixed)\n"},
		{nil, ""},
	}
	for _, tt := range tests {
		url := startServer(t, "", func(p *peer) {
			f, ok := p.read()
			if !ok {
				return
			}
			p.send(map[string]any{"type": "message", "text": "That did not work.", "sender": "silas", "reply_to": f.MessageID, "error": tt.err})
			p.read() // client's close
		})
		r := run(t, context.Background(), url, "", strings.NewReader("hi\n"))
		if r.runErr != nil {
			t.Fatalf("Run: %v", r.runErr)
		}
		if r.out != "silas> That did not work.\n" || r.err != tt.want {
			t.Errorf("error %+v: stdout %q stderr %q, want stderr %q", tt.err, r.out, r.err, tt.want)
		}
	}
}
