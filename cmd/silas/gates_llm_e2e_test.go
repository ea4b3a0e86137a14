package main

import (
	"strings"
	"testing"

	"github.com/silas-ai/silas/runtime/pipeline"
)

// llmGateYAML configures one llm gate on every answer, with a short model
// timeout; extra is appended to the gate (promote_to_policy).
func llmGateYAML(extra string) string {
	return `  gates:
    llm_defaults:
      model: "openrouter:` + gateModel + `"
    system:
      - name: answer_quality
        on: every_agent_response
        provider: llm
        check: "Does the response answer the user's question?"
        config: { timeout_seconds: 0.3 }
` + extra
}

// A quality-lane llm gate whose model never answers neither delays nor
// blocks the answer; its timeout is audited as llm_error after the turn.
func TestQualityLLMGateTimeoutDoesNotHoldTheAnswer(t *testing.T) {
	mock := newMock(t)
	held := holdGateCalls(t, mock, nil)
	dir := t.TempDir()
	d := startTest(t, loadGateConfig(t, mock, dir, llmGateYAML("")))
	c := owner(t, d.Addr())

	id := c.say("what is the capital of France?")
	got := c.answer(id).str("text")
	if !strings.Contains(got, "capital of France") {
		t.Fatalf("answer %q is not the agent's (mock echo) answer", got)
	}
	// The gate's model call was made and is still held open by the mock:
	// the answer did not wait for it.
	waitHeld(t, held)

	log := waitAudit(t, d, "llm_error", "answer_quality")
	completed := -1
	for i, e := range log {
		if e.Event == "turn_completed" {
			completed = i
		}
		if e.Event == "gate_block" {
			t.Fatalf("a quality gate blocked: %s", e.Data)
		}
	}
	if completed < 0 {
		t.Fatal("the turn completed only after the quality gate's model call timed out")
	}
	if !strings.Contains(string(log[len(log)-1].Data), "deadline") {
		t.Errorf("llm_error does not name the timeout: %s", log[len(log)-1].Data)
	}
}

// The same gate promoted to the policy lane fails closed: the model's
// timeout blocks the answer.
func TestPromotedLLMGateTimeoutBlocks(t *testing.T) {
	mock := newMock(t)
	held := holdGateCalls(t, mock, nil)
	dir := t.TempDir()
	d := startTest(t, loadGateConfig(t, mock, dir, llmGateYAML("        promote_to_policy: true\n")))
	c := owner(t, d.Addr())

	id := c.say("what is the capital of France?")
	waitHeld(t, held)
	got := c.answer(id).str("text")
	if got != pipeline.BlockedText {
		t.Fatalf("answer %q, want the blocked answer %q", got, pipeline.BlockedText)
	}
	log := waitAudit(t, d, "gate_block", "answer_quality")
	if data := string(log[len(log)-1].Data); !strings.Contains(data, "deadline") || !strings.Contains(data, `"escalated":true`) {
		t.Errorf("gate_block does not record the escalated timeout: %s", data)
	}
}
