package main

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/persistence"
)

// TestKillNineDuringProjectTaskResumesProject kills the silas process while
// task B of a project waits on the executor model (task A is done),
// restarts silas on the same data dir and checks that the project carries on: A does not run again, B resumes with
// a fresh attempt, the project's own check sees both tasks' files and the
// project ends done, leaving nothing in the store.
func TestKillNineDuringProjectTaskResumesProject(t *testing.T) {
	mock := newMock(t)
	release := make(chan struct{}) // never sent on: the first process dies first
	t.Cleanup(func() { close(release) })
	reconnected := make(chan struct{})
	var mu sync.Mutex
	crashed := false
	var before, after []string // the file each executor call was briefed to write
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		switch r.Schema {
		case "RouteDecision":
			return mockllm.Reply{Content: routeDecision("planner", "")}, true
		case "AgentResponse":
			return mockllm.Reply{Content: planReply(abProject("test -f a.txt"))}, true
		case "ExecutorAgentOutput":
		default:
			return mockllm.Reply{}, false
		}
		_, rest, _ := strings.Cut(r.Messages[1].Content, "WRITE ")
		file, _, _ := strings.Cut(rest, "\n")
		mu.Lock()
		late := crashed
		if late {
			after = append(after, file)
		} else {
			before = append(before, file)
		}
		mu.Unlock()
		if !late && file == "b.txt" {
			<-release // task B's first attempt: the process is killed while it waits here
			return mockllm.Reply{Status: 500}, true
		}
		if late {
			<-reconnected // task B waits for the owner, who must see the project finish
		}
		return writeNamedFile(r), true
	})
	dir := t.TempDir()
	ov := overrides(t, mock, dir)
	cfgPath := writeConfig(t, ov)

	p1 := startProcess(t, cfgPath)
	c := owner(t, p1.addr)
	c.say("please write a then b")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	for {
		ev := c.next("work_item_status")
		if ev.str("work_item_id") == "task-b" && ev.str("status") == "running" {
			break
		}
		if id, st := ev.str("work_item_id"), ev.str("status"); st != "running" && st != "done" {
			t.Fatalf("status %s:%s before the crash, want task-a done and task-b running", id, st)
		}
	}
	checkFor(t, waitLimit, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(before) == 3 // task A's two calls, then task B's first
	}, "task B's first executor call")
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p1.cmd.Wait()
	mu.Lock()
	crashed = true
	mu.Unlock()

	// The restart runs in the test process, so that the test can watch the
	// store until the finished project has left it.
	d := startTest(t, loadConfig(t, ov))
	c2 := owner(t, d.Addr())
	close(reconnected)
	// The resumed project and task B may report running before the owner
	// connects; what follows the connection is seen.
	var got []string
	for {
		ev := c2.next("work_item_status")
		id, st := ev.str("work_item_id"), ev.str("status")
		got = append(got, id+":"+st)
		if id == "task-a" {
			t.Fatalf("status %v after the restart: task A ran again", ev)
		}
		if id == "task-b" && ev["attempt"] != float64(2) {
			t.Fatalf("task-b status %v after the restart, want attempt 2 (the interrupted attempt counts)", ev)
		}
		if id == "project-ab" && st != "running" {
			// The summary still counts the task done before the crash.
			if detail := ev.str("detail"); !strings.Contains(detail, "task-a: done") || !strings.Contains(detail, "task-b: done") {
				t.Fatalf("project's final detail %q, want both tasks done", detail)
			}
			break
		}
	}
	if s := strings.Join(got, ","); !strings.HasSuffix(s, "task-b:done,project-ab:done") {
		t.Fatalf("statuses after the restart %s, want task-b done, then project-ab done", s)
	}
	mu.Lock()
	if strings.Join(before, ",") != "a.txt,a.txt,b.txt" || strings.Join(after, ",") != "b.txt,b.txt" {
		t.Fatalf("executor calls wrote %v before and %v after the restart, want task A's two and B's first, then only B's two", before, after)
	}
	mu.Unlock()

	// The project leaves the store with its tasks' records, and no late
	// write of a task brings one back.
	checkFor(t, waitLimit, func() bool {
		left, err := d.in.db.WorkItems().List(context.Background(), "owner")
		if err != nil {
			t.Fatal(err)
		}
		return len(left) == 0
	}, "the finished project to leave the store")
	d.stop()
	db, err := persistence.Open(context.Background(), persistence.Options{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if left, err := db.WorkItems().List(context.Background(), "owner"); err != nil || len(left) != 0 {
		t.Fatalf("%d work items stored after the project finished and Silas stopped (%v), want none", len(left), err)
	}
}
