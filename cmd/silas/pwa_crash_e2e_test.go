package main

import (
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/silas-ai/silas/bench/mockllm"
)

// freePort returns a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Spec 8.2, 0.5: the page stays open while the daemon dies by SIGKILL
// with a plan approval pending; the app shows the disconnection, reconnects
// by itself once the binary is back on the same port and data dir, and the
// plan comes back to Review.
//
// A pending approval lives only in the dead process's memory. What brings
// the plan back is the restarted daemon replaying the journaled turn, which
// asks again only if an owner connection is attached when the replayed
// plan is ready (actors/scope_plan.go requestApproval). The model holds the
// replayed plan until the page is back online, so this test follows the
// path where the app is attached in time; the card of the dead process stays
// in the queue until it is answered, and then shows it expired.
func TestPWAReconnectsAfterKillNine(t *testing.T) {
	mock := newMock(t)
	var held atomic.Pointer[chan struct{}] // set: planner replies wait for it
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		switch r.Schema {
		case "RouteDecision":
			if strings.Contains(currentMessage(r), "are you back?") {
				return mockllm.Reply{Content: routeDecision("direct", "I am back.")}, true
			}
			return mockllm.Reply{Content: routeDecision("planner", "")}, true
		case "AgentResponse":
			if hold := held.Load(); hold != nil {
				select {
				case <-*hold:
				case <-time.After(pwaStep):
				}
			}
			return mockllm.Reply{Content: planReply(helloPlan)}, true
		case "ExecutorAgentOutput":
			if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "tool" {
				return mockllm.Reply{Content: `{"summary":"wrote hello.txt","artifact_refs":["hello.txt"],"next_steps":[]}`}, true
			}
			return mockllm.Reply{ToolCalls: []mockllm.ToolCall{{ID: "call-1", Name: "shell_exec", Arguments: `{"command":"echo hi > hello.txt"}`}}}, true
		}
		return mockllm.Reply{}, false
	})
	ov := overrides(t, mock, t.TempDir())
	ov["silas.channels.web.port"] = freePort(t)
	cfgPath := writeConfig(t, ov)

	first := startProcess(t, cfgPath)
	p := openPWA(t, first.addr, 375, 812)
	p.login()
	p.say("please write hello.txt")
	p.tab("review")
	p.waitFor("the plan card", hasText(card("plan")+" .intent", "Write hello.txt"))
	stale := eval[string](p, `document.querySelector('.review-root > .card').dataset.cardId`)

	hold := make(chan struct{})
	held.Store(&hold)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	p.waitFor("the app showing it is offline", `document.querySelector('#conn').dataset.state === 'offline' && document.querySelector('#conn').textContent.includes('Offline')`)
	if !eval[bool](p, hasText(card("plan")+" .intent", "Write hello.txt")) {
		t.Error("the pending card is gone while the daemon is down")
	}
	p.screenshot("killed")

	startProcess(t, cfgPath)
	p.waitFor("the app reconnected by itself", `document.querySelector('#conn').dataset.state === 'online'`)
	// An acknowledged message proves the connection is attached to the
	// owner's scope (the session event comes before that).
	p.say("are you back?")
	p.waitFor("the message acknowledged", `[...document.querySelectorAll('.msg-user')].at(-1)?.dataset.state === 'delivered'`)
	held.Store(nil)
	close(hold) // the replayed turn's plan, now that the owner is attached
	p.tab("review")
	p.waitFor("the replayed plan's card", `document.querySelector('#review-badge').textContent === '2'`)

	// The dead process's card is refused by the new one: nothing runs.
	p.waitFor("the old card first", fmt.Sprintf(`document.querySelector('.review-root > .card')?.dataset.cardId === %s`, js(stale)))
	p.do("approve the old card", chromedp.Click(chromedp.CSS(card("plan")+" .btn-primary")), chromedp.Click(chromedp.CSS(".chip-confirm")))
	p.waitFor("the old card marked expired", hasText(".card.expired .expired-note", "expired"))
	if n := len(executorCalls(mock)); n != 0 {
		t.Fatalf("an approval of the dead process made %d executor calls", n)
	}
	p.do("dismiss it", chromedp.Click(chromedp.CSS(".card.expired .btn-primary")))

	// The plan asked again by the restarted daemon runs when approved.
	p.waitFor("the new plan card", fmt.Sprintf(`(() => { const c = document.querySelector('.review-root > .card.kind-plan'); return c && c.dataset.cardId !== %s; })()`, js(stale)))
	p.do("approve the new card", chromedp.Click(chromedp.CSS(card("plan")+" .btn-primary")), chromedp.Click(chromedp.CSS(".chip-confirm")))
	p.waitFor("the results card", `!!document.querySelector('.card.kind-post [data-check="hello_exists"] .check-pass')`)
	if n := len(executorCalls(mock)); n != 2 {
		t.Errorf("%d executor calls after approving the replayed plan, want 2", n)
	}
}
