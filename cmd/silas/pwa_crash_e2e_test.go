package main

import (
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/chromedp/cdproto/network"
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
// the plan back is the restarted daemon replaying the journaled turn. The
// page's WebSocket is blocked until the replayed plan waits for approval,
// so the plan is asked while no owner connection is attached: it must wait
// for the app (actors/scope_plan.go requestApproval) and reach it when it
// reconnects. The card of the dead process shows expired as soon as the
// app is back (GET /approvals/pending no longer lists it).
func TestPWAReconnectsAfterKillNine(t *testing.T) {
	mock := newMock(t)
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		switch r.Schema {
		case "RouteDecision":
			return mockllm.Reply{Content: routeDecision("planner", "")}, true
		case "AgentResponse":
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

	p.offline(true)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	p.waitFor("the app showing it is offline", `document.querySelector('#conn').dataset.state === 'offline' && document.querySelector('#conn').textContent.includes('Offline')`)
	if !eval[bool](p, hasText(card("plan")+" .intent", "Write hello.txt")) {
		t.Error("the pending card is gone while the daemon is down")
	}
	p.screenshot("killed")

	second := startProcess(t, cfgPath)
	var replayed []string
	checkFor(t, pwaStep, func() bool {
		_, replayed = pendingApprovals(t, second.addr, pwaToken)
		return len(replayed) == 1
	}, "the replayed plan to wait for approval")
	if replayed[0] == stale {
		t.Fatalf("the restarted daemon lists the dead process's request %s", stale)
	}
	if n := wsConnections(t, second.addr); n != 0 {
		t.Fatalf("%d connections while the replayed plan was asked, want none", n)
	}
	p.offline(false)
	p.waitFor("the app reconnected by itself", `document.querySelector('#conn').dataset.state === 'online'`)

	// The dead process's card shows expired without being answered; the
	// replayed plan's card is the one pending decision.
	p.waitFor("the old card marked expired and the replayed one pending", fmt.Sprintf(`(() => {
		const old = document.querySelector('.review-root > .card');
		return old?.dataset.cardId === %s && old.dataset.state === 'expired' && old.querySelector('.expired-note')?.textContent.includes('expired') &&
			document.querySelector('#review-badge').textContent === '1' && document.querySelectorAll('.upnext-item').length === 1;
	})()`, js(stale)))
	if n := len(executorCalls(mock)); n != 0 {
		t.Fatalf("%d executor calls before any approval", n)
	}
	p.do("dismiss the old card", chromedp.Click(chromedp.CSS(".card.expired .btn-primary")))

	// The plan asked again by the restarted daemon runs when approved.
	p.waitFor("the replayed plan's card", fmt.Sprintf(`document.querySelector('.review-root > .card.kind-plan')?.dataset.cardId === %s`, js(replayed[0])))
	p.do("approve the new card", chromedp.Click(chromedp.CSS(card("plan")+" .btn-primary")), chromedp.Click(chromedp.CSS(".chip-confirm")))
	p.waitFor("the results card", `!!document.querySelector('.card.kind-post [data-check="hello_exists"] .check-pass')`)
	if n := len(executorCalls(mock)); n != 2 {
		t.Errorf("%d executor calls after approving the replayed plan, want 2", n)
	}
}

// offline takes the page's network away (or gives it back), so the app
// stays offline while the daemon is up.
func (p *pwa) offline(off bool) {
	p.t.Helper()
	p.enableNetwork()
	rule := network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: []*network.Conditions{{
		Offline: off, DownloadThroughput: -1, UploadThroughput: -1,
	}}}
	if _, err := chromedp.Call(p.ctx, network.EmulateNetworkConditionsByRule, rule); err != nil {
		p.t.Fatalf("emulate the network offline=%v: %v", off, err)
	}
}
