package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/runtime/llm"
)

// streamedAnswer is long enough to arrive in many chunks, with text that
// the JSON of a RouteDecision escapes.
var streamedAnswer = strings.Repeat("Streaming works: \"quoted\", a\\slash, café, 😀.\n", 12) + "The end."

// noOutputGates keeps the default input gate and drops pii_scrub, the
// default policy-lane output gate: answers of such a deployment stream.
func noOutputGates(ov map[string]any) map[string]any {
	ov["silas.gates.system"] = []any{map[string]any{
		"name": "input_guard", "on": "every_user_message", "provider": "guardrails_ai", "check": "jailbreak", "on_block": "polite_redirect",
	}}
	return ov
}

// collectUntilAnswer reads events up to the answer to id and returns the
// text the message_delta events before it add up to (a reset discards
// what came before it) and how many there were.
func collectUntilAnswer(t *testing.T, c *client, id string) (answer event, preview string, deltas int) {
	t.Helper()
	for {
		ev := c.nextAny()
		switch ev.str("type") {
		case "message_delta":
			if ev.str("reply_to") != id {
				t.Fatalf("delta replies to %q, want %q", ev.str("reply_to"), id)
			}
			if reset, _ := ev["reset"].(bool); reset {
				preview = ""
			}
			preview += ev.str("delta")
			deltas++
		case "message":
			if ev.str("reply_to") != id {
				t.Fatalf("answer replies to %q, want %q", ev.str("reply_to"), id)
			}
			return ev, preview, deltas
		}
	}
}

func TestAnswerStreamsAsDeltasThenOneMessage(t *testing.T) {
	mock := newMock(t)
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if r.Schema != llm.SchemaRouteDecision {
			return "", 0, false
		}
		if strings.Contains(currentMessage(r), "draft") && !strings.Contains(requestText(r), llm.SchemaErrorMarker) {
			// A first answer that does not decode: the repair replaces it.
			return `{"route":"direct","response":{"message":"A rough draft that must vanish"}}`, 0, true
		}
		return routeDecision("direct", streamedAnswer), 0, true
	})
	d := startTest(t, loadConfig(t, noOutputGates(overrides(t, mock, t.TempDir()))))
	c := owner(t, d.Addr())

	id := c.say("tell me a long story")
	ans, preview, n := collectUntilAnswer(t, c, id)
	if n == 0 {
		t.Fatal("no message_delta came before the answer")
	}
	t.Logf("%d message_delta events before the answer", n)
	if ans.str("text") != streamedAnswer || preview != ans.str("text") {
		t.Fatalf("the deltas add up to %q, the answer is %q, want both %q", preview, ans.str("text"), streamedAnswer)
	}
	reqs := mock.Requests()
	if len(reqs) != 1 || !reqs[0].Stream {
		t.Fatalf("the mock saw %d requests; the answer was not asked for as a stream", len(reqs))
	}

	// A repaired answer: the invalid first answer is reset, the repair
	// streams, and the answer is the repair's.
	id = c.say("write a draft")
	ans, preview, _ = collectUntilAnswer(t, c, id)
	if ans.str("text") != streamedAnswer || preview != streamedAnswer {
		t.Fatalf("after a repair the deltas add up to %q, the answer is %q", preview, ans.str("text"))
	}
	sawDraft, sawReset := false, false
	for _, f := range c.received() {
		sawDraft = sawDraft || bytes.Contains(f, []byte("rough draft"))
		sawReset = sawReset || (bytes.Contains(f, []byte(`"message_delta"`)) && bytes.Contains(f, []byte(`"reset":true`)))
	}
	if sawDraft && !sawReset {
		t.Fatal("the invalid first answer was streamed and never reset")
	}
}

// With the default gates (pii_scrub checks every answer) nothing streams:
// not one message_delta frame crosses the WebSocket, and the personal data
// of the unscrubbed answer never does.
func TestAnswerDoesNotStreamPastAPIIOutputGate(t *testing.T) {
	mock := newMock(t)
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if r.Schema != llm.SchemaRouteDecision {
			return "", 0, false
		}
		return routeDecision("direct", strings.Repeat("Some harmless text before it. ", 10)+"Write to jane.doe@example.com, card 4111 1111 1111 1111."), 0, true
	})
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	c := owner(t, d.Addr())

	id := c.say("how do I contact you?")
	ans, _, n := collectUntilAnswer(t, c, id)
	if n != 0 {
		t.Fatalf("%d message_delta events went out past a PII output gate", n)
	}
	if strings.Contains(ans.str("text"), "jane.doe@example.com") || !strings.Contains(ans.str("text"), "Write to") {
		t.Fatalf("answer %q: want it scrubbed by the gate", ans.str("text"))
	}
	for _, f := range c.received() {
		if bytes.Contains(f, []byte("message_delta")) || bytes.Contains(f, []byte("jane.doe")) || bytes.Contains(f, []byte("4111 1111")) {
			t.Fatalf("frame %s crossed the WebSocket with a PII output gate configured", f)
		}
	}
	for _, r := range mock.Requests() {
		if r.Stream && r.Schema == llm.SchemaRouteDecision {
			t.Fatal("the answer was asked for as a stream although a policy output gate must see it whole")
		}
	}
}

// The PWA shows the deltas in a pending bubble, which the answer replaces:
// one answer bubble, no preview left.
func TestPWAShowsAStreamedAnswerThenTheAnswer(t *testing.T) {
	mock := newMock(t)
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if r.Schema != llm.SchemaRouteDecision {
			return "", 0, false
		}
		return routeDecision("direct", "Streamed to the PWA."), 0, true
	})
	ov := noOutputGates(overrides(t, mock, t.TempDir()))
	d := startTest(t, loadConfig(t, ov))
	p := openPWA(t, d.Addr(), 375, 812)
	p.login()
	// Record every preview the stream shows, however briefly.
	eval[bool](p, `(() => { window.__previews = []; new MutationObserver((ms) => { for (const m of ms) for (const n of m.addedNodes) if (n.classList?.contains('msg-preview')) window.__previews.push(n); }).observe(document.querySelector('#stream-list'), { childList: true }); return true; })()`)
	p.say("stream it")
	p.waitFor("the answer", hasText(".msg-silas:not(.msg-preview) .bubble", "Streamed to the PWA."))
	if n := eval[int](p, `window.__previews.length`); n != 1 {
		t.Fatalf("%d previews were shown, want 1", n)
	}
	if got := eval[string](p, `window.__previews[0].querySelector('.bubble').textContent`); got != "Streamed to the PWA." {
		t.Fatalf("the preview read %q", got)
	}
	if n := eval[int](p, `document.querySelectorAll('.msg-preview').length`); n != 0 {
		t.Fatalf("%d previews remain after the answer", n)
	}
	if n := eval[int](p, `[...document.querySelectorAll('.msg-silas .bubble')].filter((b) => b.textContent.includes('Streamed to the PWA.')).length`); n != 1 {
		t.Fatalf("%d bubbles hold the answer, want 1", n)
	}
}
