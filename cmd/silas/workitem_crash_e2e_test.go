package main

import (
	"sync"
	"syscall"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// TestKillNineDuringAttemptResumesWorkItem kills silas while the first
// attempt of an approved work item waits on the executor model, restarts it
// and checks that the work item carries on with a fresh, second attempt and
// finishes.
func TestKillNineDuringAttemptResumesWorkItem(t *testing.T) {
	mock := newMock(t)
	release := make(chan struct{}) // never sent on: the first process dies first
	t.Cleanup(func() { close(release) })
	reconnected := make(chan struct{})
	var mu sync.Mutex
	crashed := false
	calls := [2]int{} // executor calls before and after the crash
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		switch r.Schema {
		case "RouteDecision":
			return mockllm.Reply{Content: routeDecision("planner", "")}, true
		case "AgentResponse":
			return mockllm.Reply{Content: planReply(helloPlan)}, true
		case "ExecutorAgentOutput":
		default:
			return mockllm.Reply{}, false
		}
		mu.Lock()
		after := crashed
		if after {
			calls[1]++
		} else {
			calls[0]++
		}
		mu.Unlock()
		if !after {
			<-release // attempt 1: the process is killed while it waits here
			return mockllm.Reply{Status: 500}, true
		}
		<-reconnected // attempt 2 waits for the owner, who must see it finish
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "tool" {
			return mockllm.Reply{Content: `{"summary":"wrote hello.txt","artifact_refs":["hello.txt"],"next_steps":[]}`}, true
		}
		return mockllm.Reply{ToolCalls: []mockllm.ToolCall{{ID: "call-1", Name: "shell_exec", Arguments: `{"command":"echo hi > hello.txt"}`}}}, true
	})
	cfgPath := writeConfig(t, overrides(t, mock, t.TempDir()))

	p1 := startProcess(t, cfgPath)
	c := owner(t, p1.addr)
	c.say("please write hello.txt")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	if ev := c.next("work_item_status"); ev.str("status") != "running" || ev["attempt"] != float64(1) || ev.str("work_item_id") != "task-hello-file" {
		t.Fatalf("first status %v, want task-hello-file running at attempt 1", ev)
	}
	checkFor(t, waitLimit, func() bool { mu.Lock(); defer mu.Unlock(); return calls[0] == 1 }, "the first attempt's executor call")
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p1.cmd.Wait()
	mu.Lock()
	crashed = true
	mu.Unlock()

	p2 := startProcess(t, cfgPath)
	c2 := owner(t, p2.addr)
	close(reconnected)
	for {
		ev := c2.next("work_item_status")
		if ev.str("work_item_id") != "task-hello-file" {
			t.Fatalf("status of work item %q, want task-hello-file", ev.str("work_item_id"))
		}
		if ev["attempt"] != float64(2) {
			t.Fatalf("status %v after the restart, want attempt 2 (the interrupted attempt counts)", ev)
		}
		if st := ev.str("status"); st == "done" {
			break
		} else if st != "running" {
			t.Fatalf("status %v after the restart, want running then done", ev)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if calls[0] != 1 || calls[1] != 2 {
		t.Fatalf("executor calls %d before and %d after the crash, want 1 and a fresh attempt's 2", calls[0], calls[1])
	}
}
