package main

import (
	"strings"
	"testing"

	"github.com/silas-ai/silas/runtime/pipeline"
)

// approvalGateYAML is one gate that asks the owner about every message.
func approvalGateYAML(timeout string) string {
	return `  gates:
    approval_timeout_seconds: ` + timeout + `
    system:
      - name: owner_ok
        on: every_user_message
        provider: predicate
        type: approval_always
        on_block: report
`
}

// A gate that requires approval asks the owner's connection with a
// gate_approval event and waits for the gate_response without blocking
// the scope: a second message queues meanwhile. Approved, the turn goes
// on; declined, it stops before any model call.
func TestGateApprovalOverWebSocket(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	d := startTest(t, loadGateConfig(t, mock, dir, approvalGateYAML("120")))
	c := owner(t, d.Addr())

	first := c.say("please rename the report")
	ask := c.next("gate_approval")
	if ask.str("gate_name") != "owner_ok" || ask.str("request_id") == "" {
		t.Fatalf("gate_approval %v: want gate_name owner_ok and a request_id", ask)
	}
	ctx, _ := ask["context"].(map[string]any)
	if ctx["message"] != "please rename the report" {
		t.Fatalf("gate_approval context %v does not hold the message", ask["context"])
	}
	if _, ok := ask["value"]; !ok {
		t.Fatalf("gate_approval %v has no value field", ask)
	}

	// The scope keeps taking messages while the turn waits.
	second := c.say("and delete the old one")
	c.send(map[string]any{"type": "gate_response", "request_id": "not-pending", "verdict": "approved"})
	if ev := c.next("error"); ev.str("request_type") != "gate_response" {
		t.Fatalf("an unknown request_id was not refused: %v", ev)
	}
	if n := len(mock.Requests()); n != 0 {
		t.Fatalf("%d model calls before the owner approved", n)
	}
	c.send(map[string]any{"type": "gate_response", "request_id": ask.str("request_id"), "verdict": "approved"})
	if got := c.answer(first).str("text"); !strings.Contains(got, "rename the report") {
		t.Fatalf("approved message answered %q, want the agent's answer", got)
	}

	ask2 := c.next("gate_approval")
	if ask2.str("request_id") == ask.str("request_id") {
		t.Fatal("the queued message reused the first request_id")
	}
	c.send(map[string]any{"type": "gate_response", "request_id": ask2.str("request_id"), "verdict": "declined"})
	if got, want := c.answer(second).str("text"), pipeline.GateNotApprovedAnswer("declined"); got != want {
		t.Fatalf("declined message answered %q, want %q", got, want)
	}
	for _, r := range mock.Requests() {
		if strings.Contains(requestText(&r), "delete the old one") {
			t.Fatal("a declined message reached the model")
		}
	}
	waitAudit(t, d, "gate_approval_denied", "owner_ok")
}

// No gate_response within gates.approval_timeout_seconds blocks.
func TestGateApprovalTimeoutBlocks(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	d := startTest(t, loadGateConfig(t, mock, dir, approvalGateYAML("0.2")))
	c := owner(t, d.Addr())

	id := c.say("please rename the report")
	c.next("gate_approval")
	if got, want := c.answer(id).str("text"), pipeline.GateNotApprovedAnswer("timeout"); got != want {
		t.Fatalf("answer %q, want %q", got, want)
	}
	if n := len(mock.Requests()); n != 0 {
		t.Fatalf("a message whose approval timed out made %d model calls", n)
	}
	log := waitAudit(t, d, "gate_approval_answered", "owner_ok")
	if data := string(log[len(log)-1].Data); !strings.Contains(data, `"reason":"timeout"`) {
		t.Errorf("gate_approval_answered %s", data)
	}
}

// An owner who disconnects while being asked blocks the gate at once; the
// turn never hangs, and its answer waits for the next connection.
func TestGateApprovalOwnerGoneBlocks(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	d := startTest(t, loadGateConfig(t, mock, dir, approvalGateYAML("120")))
	c := owner(t, d.Addr())

	id := c.say("please rename the report")
	c.next("gate_approval")
	_ = c.conn.Close()

	log := waitAudit(t, d, "gate_approval_answered", "owner_ok")
	if data := string(log[len(log)-1].Data); !strings.Contains(data, `"reason":"no_owner_connection"`) {
		t.Fatalf("gate_approval_answered %s", data)
	}
	c2 := owner(t, d.Addr())
	if got, want := c2.answerTo(id).str("text"), pipeline.GateNotApprovedAnswer("no_owner_connection"); got != want {
		t.Fatalf("answer %q, want %q", got, want)
	}
	if n := len(mock.Requests()); n != 0 {
		t.Fatalf("%d model calls for a message nobody approved", n)
	}
}

// A customer's gate asks the owner: the gate_approval goes to the owner's
// connection and the owner's gate_response lets the customer's turn go on.
// With no owner connected the customer's gate blocks at once, and a
// customer cannot answer gate approvals.
func TestGateApprovalInCustomerScopeAsksTheOwner(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	d := startTest(t, loadGateConfig(t, mock, dir, approvalGateYAML("120")))
	cust := mustDial(t, d.Addr(), "/chat")
	cust.next("session")

	id := cust.say("please refund my order")
	if got, want := cust.answer(id).str("text"), pipeline.GateNotApprovedAnswer("no_owner_connection"); got != want {
		t.Fatalf("answer with no owner connected %q, want %q", got, want)
	}

	o := owner(t, d.Addr())
	id = cust.say("please refund my order now")
	ask := o.next("gate_approval")
	if ctx, _ := ask["context"].(map[string]any); ctx["message"] != "please refund my order now" {
		t.Fatalf("gate_approval %v does not hold the customer's message", ask)
	}
	cust.send(map[string]any{"type": "gate_response", "request_id": ask.str("request_id"), "verdict": "approved"})
	if ev := cust.next("error"); ev.str("code") != "not_supported" {
		t.Fatalf("a customer's gate_response was not refused: %v", ev)
	}
	if n := len(mock.Requests()); n != 0 {
		t.Fatalf("%d model calls before the owner approved", n)
	}
	o.send(map[string]any{"type": "gate_response", "request_id": ask.str("request_id"), "verdict": "approved"})
	if got := cust.answer(id).str("text"); !strings.Contains(got, "refund my order now") {
		t.Fatalf("approved customer message answered %q, want the agent's answer", got)
	}
	// A second answer to the same request is refused.
	o.send(map[string]any{"type": "gate_response", "request_id": ask.str("request_id"), "verdict": "approved"})
	if ev := o.next("error"); ev.str("request_type") != "gate_response" {
		t.Fatalf("a stale gate_response was not refused: %v", ev)
	}
}

// An owner who disconnects while asked about a customer's gate blocks it.
func TestCustomerGateApprovalOwnerGoneBlocks(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	d := startTest(t, loadGateConfig(t, mock, dir, approvalGateYAML("120")))
	o := owner(t, d.Addr())
	cust := mustDial(t, d.Addr(), "/chat")
	cust.next("session")

	id := cust.say("please refund my order")
	o.next("gate_approval")
	_ = o.conn.Close()
	if got, want := cust.answer(id).str("text"), pipeline.GateNotApprovedAnswer("no_owner_connection"); got != want {
		t.Fatalf("answer %q, want %q", got, want)
	}
	if n := len(mock.Requests()); n != 0 {
		t.Fatalf("%d model calls for a message nobody approved", n)
	}
}
