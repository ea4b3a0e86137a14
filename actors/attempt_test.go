package actors

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/executor"
)

// brokenOnce is a sandbox backend whose first instance is a nil instance
// without an error: the bug an attempt trips over when it uses it.
type brokenOnce struct {
	sandbox.Manager
	created atomic.Int32
}

func (b *brokenOnce) Create(ctx context.Context, cfg messages.SandboxConfig) (sandbox.Instance, error) {
	if b.created.Add(1) == 1 {
		return nil, nil
	}
	return b.Manager.Create(ctx, cfg)
}

func TestPanickingAttemptIsAFailedAttempt(t *testing.T) {
	var broken *brokenOnce
	h := newExecHarness(t, func(d *Deps) {
		broken = &brokenOnce{Manager: d.Sandbox}
		d.Sandbox = broken
	})
	evs := h.run(t, h.approved(t))
	if got := statuses(evs); got != "running,verification_failed,running,done" {
		t.Fatalf("statuses %s (%+v), want the crashed attempt failed and the next one done", got, evs)
	}
	if !strings.Contains(evs[1].Detail, "attempt 1 failed: the attempt crashed") {
		t.Fatalf("detail %q, want the crash named", evs[1].Detail)
	}
	if evs[3].Attempt != 2 {
		t.Fatalf("done at attempt %d, want 2", evs[3].Attempt)
	}
	if n := broken.created.Load(); n != 2 {
		t.Fatalf("%d sandboxes created, want one per attempt", n)
	}
	if n := h.execCalls.Load(); n != 2 {
		t.Fatalf("%d executor calls, want the second attempt's 2", n)
	}
}

func TestExecutorToolsOfferWebSearchOnlyWhenConfigured(t *testing.T) {
	h := newExecHarness(t)
	names := func(tools []llm.Tool) string {
		var out []string
		for _, tl := range tools {
			out = append(out, tl.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(executorTools(h.d.Executors)); got != "shell_exec,python_exec" {
		t.Fatalf("tools %s without a search provider, want shell_exec,python_exec", got)
	}
	reg, err := executor.NewRegistry(executor.Options{Sandbox: h.d.Sandbox, Search: executor.SearchOptions{Provider: "tavily", APIKey: "k", BaseURL: "http://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(executorTools(reg)); got != "shell_exec,python_exec,web_search" {
		t.Fatalf("tools %s with a search provider, want web_search too", got)
	}
}
