package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/persistence"
)

// auditOf decodes the data of the last entry of log whose event is event.
func auditOf(t *testing.T, log []persistence.AuditEntry, event string) map[string]any {
	t.Helper()
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Event == event {
			var data map[string]any
			if err := json.Unmarshal(log[i].Data, &data); err != nil {
				t.Fatalf("audit %s: %v", event, err)
			}
			return data
		}
	}
	t.Fatalf("no %s audit entry in %d entries", event, len(log))
	return nil
}

func TestFallbackAnswersWhenTheFirstProviderFails(t *testing.T) {
	tests := []struct {
		name string
		fail func(t *testing.T, primary *mockllm.Server)
	}{
		{"HTTP 500", func(_ *testing.T, primary *mockllm.Server) {
			primary.Handle(func(*mockllm.RecordedRequest) (string, int, bool) {
				return "upstream exploded", http.StatusInternalServerError, true
			})
		}},
		{"timeout", func(t *testing.T, primary *mockllm.Server) {
			release := make(chan struct{})
			t.Cleanup(func() { close(release) }) // before the mock closes
			primary.HandleReply(func(*mockllm.RecordedRequest) (mockllm.Reply, bool) {
				<-release
				return mockllm.Reply{}, false
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			primary, backup := newMock(t), newMock(t)
			tt.fail(t, primary)
			backup.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
				if r.Schema == "RouteDecision" {
					return routeDecision("direct", "answered by the backup"), 0, true
				}
				return "", 0, false
			})
			ov := overrides(t, primary, t.TempDir())
			// A second provider, second in the proxy's chain.
			ov["silas.providers.backup.base_url"] = backup.URL()
			ov["silas.providers.backup.api_key_env"] = "TEST_MODEL_KEY"
			ov["silas.models.proxy"] = []string{"openrouter:" + proxyModel, "backup:" + proxyModel}
			// The primary hangs for its 2 s (the client's timeout, and its share
			// of the call's 4 s); the backup has the other 2 s.
			ov["silas.llm.timeout_seconds"] = 2
			d := startTest(t, loadConfig(t, ov))
			c := owner(t, d.Addr())

			if got := c.answer(c.say("hello?")).str("text"); got != "answered by the backup" {
				t.Fatalf("answer %q, want the backup's", got)
			}
			if n := len(primary.Requests()); n != 1 {
				t.Errorf("the primary received %d requests, want 1 (tried first, once: max_retries 0)", n)
			}
			log := waitAudit(t, d, "turn_completed", "")
			done := auditOf(t, log, "turn_completed")
			if models, _ := done["models"].([]any); len(models) != 1 || models[0] != "backup:"+proxyModel {
				t.Errorf("turn_completed models = %v, want [backup:%s]", done["models"], proxyModel)
			}
			fb := auditOf(t, log, "model_fallback")
			if fb["role"] != "proxy" || fb["model"] != "openrouter:"+proxyModel || fb["answered_by"] != "backup:"+proxyModel || fb["kind"] != "transient" {
				t.Errorf("model_fallback %v, want the primary failing transiently and the backup answering", fb)
			}
			if e, _ := fb["error"].(string); tt.name == "HTTP 500" && !strings.Contains(e, "500") {
				t.Errorf("model_fallback error %q does not say HTTP 500", e)
			}
		})
	}
}

// meteredServer is a keyless OpenAI-compatible server that reports usage
// but no cost, the way OpenAI, llama.cpp or Ollama answer; it refuses a
// request that carries a key it never issued. Every answer is a final
// ExecutorAgentOutput of 1000 prompt and 1000 completion tokens.
func meteredServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			http.Error(w, `{"error":{"message":"unexpected key"}}`, http.StatusUnauthorized)
			return
		}
		calls.Add(1)
		content, _ := json.Marshal(`{"summary":"did nothing","artifact_refs":[],"next_steps":[]}`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"model":"test/exec-model","choices":[{"message":{"role":"assistant","content":` + string(content) +
			`},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":1000,"total_tokens":2000}}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestPriceTableTripsUSDBudget(t *testing.T) {
	mock := newMock(t)
	// The plan allows $0.50; one executor call of the metered provider
	// costs (1000 × 400 + 1000 × 400) / 1e6 = $0.80 by its price table.
	scriptPlan(mock, strings.Replace(helloPlan, "title: Write hello.txt", "title: Write hello.txt\nbudget: { max_cost_usd: 0.5 }", 1))
	metered, calls := meteredServer(t)
	ov := overrides(t, mock, t.TempDir())
	ov["silas.providers.metered.base_url"] = metered.URL + "/v1"
	ov["silas.providers.metered.prices"] = map[string]any{"test/exec-model": map[string]any{"input_per_mtok": 400, "output_per_mtok": 400}}
	ov["silas.models.executor"] = "metered:test/exec-model"
	d := startTest(t, loadConfig(t, ov))
	c := owner(t, d.Addr())

	c.say("please write hello.txt")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})

	failed := auditOf(t, waitAudit(t, d, "work_item_failed", ""), "work_item_failed")
	exhausted, _ := failed["exhausted"].([]any)
	if !slices.Contains(exhausted, any("max_cost_usd")) {
		t.Fatalf("work_item_failed %v, want max_cost_usd exhausted", failed)
	}
	// One attempt of five ran: the cost, not the attempts, stopped it.
	if n := calls.Load(); n != 1 {
		t.Errorf("the metered provider answered %d calls, want 1", n)
	}
}
