package main

import (
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/config"
)

// shopGoal is a chatbot goal: customers start at "anonymous" with the FAQ
// tool and reach "verified" (order lookups, their customer context) by
// sending their order code, which a custom_check gate verifies; the level
// expires after an hour.
const shopGoal = `---
id: goal-shop
type: goal
title: Help shop customers with their orders
schedule: always_on
gates:
  - name: verify_customer
    on: every_user_message
    provider: script
    type: custom_check
    check: printenv SILAS_GATE_VALUE
    check_command: printenv SILAS_GATE_VALUE
    check_expect: { contains: "VERIFY-4711" }
    on_block: ask_code
access_levels:
  anonymous:
    description: Public FAQ only
    tools: [faq_search]
  verified:
    description: Verified customer
    tools: [faq_search, order_lookup]
    requires: [verify_customer]
    expires_after: 3600
escalation:
  ask_code:
    action: respond
    message: "Please send your order code first."
---

Help customers with their orders.
`

// testClock is a clock the test moves forward; the daemon's actors read it.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// startTestClock is startTest with the actors on clock.
func startTestClock(t *testing.T, cfg *config.Config, clock *testClock) *testDaemon {
	t.Helper()
	log := zerolog.New(io.Discard)
	d, err := startDaemonWith(context.Background(), cfg, log, daemonOptions{now: clock.now})
	if err != nil {
		t.Fatalf("start daemon: %v", err)
	}
	td := &testDaemon{daemon: d, t: t}
	t.Cleanup(td.stop)
	return td
}

// scopeOfToken reads the scope id out of a customer session token (see
// runtime/session: "st1." + base64url(expiry:8 | scope | mac:32)).
func scopeOfToken(t *testing.T, token string) string {
	t.Helper()
	body, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, "st1."))
	if err != nil || len(body) < 8+32+1 {
		t.Fatalf("undecodable session token %q: %v", token, err)
	}
	return string(body[8 : len(body)-32])
}

// ownerOnlyTools are tools of the owner's toolset that no level of the goal
// grants.
var ownerOnlyTools = []string{"memory_search", "context_inspect", "shell_exec", "python_exec", "web_search"}

// requestsSince returns the requests recorded after the first n.
func requestsSince(mock *mockllm.Server, n int) []mockllm.RecordedRequest {
	reqs := mock.Requests()
	return reqs[min(n, len(reqs)):]
}

// offered returns the tool names a request shows the model: its function
// tools and the tool list of its system prompt.
func offered(r *mockllm.RecordedRequest, tool string) bool {
	for _, name := range r.Tools {
		if name == tool {
			return true
		}
	}
	for _, m := range r.Messages {
		if m.Role == "system" && strings.Contains(m.Content, "- "+tool) {
			return true
		}
	}
	return false
}

func TestCustomerAccessLevels(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	goal := filepath.Join(t.TempDir(), "goal.md")
	if err := os.WriteFile(goal, []byte(shopGoal), 0o600); err != nil {
		t.Fatal(err)
	}
	ov := overrides(t, mock, dir)
	ov["silas.active_goal"] = goal
	cfg := loadConfig(t, ov)
	clock := &testClock{}
	d := startTestClock(t, cfg, clock)

	cust := mustDial(t, d.Addr(), "/chat")
	token := cust.next("session").str("session_token")
	scope := scopeOfToken(t, token)
	ctxFile := filepath.Join(cfg.Sandbox.CustomerContextDir, scope+".json")
	if err := os.WriteFile(ctxFile, []byte(`{"name":"Ada Lovelace","open_order":"4711"}`), 0o600); err != nil {
		t.Fatal(err)
	}

	// checkTurn sends text and returns the proxy requests it caused, after
	// checking that none of them shows an owner-only tool.
	checkTurn := func(c *client, text string) []mockllm.RecordedRequest {
		t.Helper()
		before := len(mock.Requests())
		c.answer(c.say(text))
		reqs := requestsSince(mock, before)
		for i := range reqs {
			for _, tool := range ownerOnlyTools {
				if offered(&reqs[i], tool) {
					t.Fatalf("a customer turn showed the model the owner's tool %s:\n%s", tool, requestText(&reqs[i]))
				}
			}
		}
		return reqs
	}

	// Unverified: the gate blocks, the model is never asked.
	before := len(mock.Requests())
	if got := cust.answer(cust.say("hello, where is my parcel?")).str("text"); got != "Please send your order code first." {
		t.Fatalf("unverified message answered %q, want the gate's escalation", got)
	}
	if n := len(requestsSince(mock, before)); n != 0 {
		t.Fatalf("a blocked message reached the model (%d requests)", n)
	}

	// The code passes the gate: this turn still runs at the base level,
	// and the level rises for the next one (spec 5.1 step 14).
	reqs := checkTurn(cust, "my code is VERIFY-4711")
	if len(reqs) == 0 || !offered(&reqs[0], "faq_search") || offered(&reqs[0], "order_lookup") {
		t.Fatalf("the verifying turn should see the anonymous tools only:\n%s", requestText(&reqs[0]))
	}
	if strings.Contains(requestText(&reqs[0]), "Ada Lovelace") {
		t.Fatal("customer context shown before the customer was verified")
	}

	reqs = checkTurn(cust, "VERIFY-4711: when does order 4711 arrive?")
	if len(reqs) == 0 || !offered(&reqs[0], "order_lookup") {
		t.Fatalf("a verified customer does not see order_lookup:\n%s", requestText(&reqs[0]))
	}
	if !strings.Contains(requestText(&reqs[0]), "Ada Lovelace") {
		t.Fatalf("verified customer's context is not in the model's context:\n%s", requestText(&reqs[0]))
	}

	// The level survives a restart: it is persisted with the scope.
	d.stop()
	d = startTestClock(t, cfg, clock)
	cust = mustDial(t, d.Addr(), "/chat")
	cust.next("session")
	cust.send(map[string]any{"type": "auth", "session_token": token})
	if ev := cust.next("session"); ev["resumed"] != true {
		t.Fatalf("session not resumed: %v", ev)
	}
	reqs = checkTurn(cust, "VERIFY-4711 and the invoice?")
	if len(reqs) == 0 || !offered(&reqs[0], "order_lookup") {
		t.Fatalf("the verified level was lost over a restart:\n%s", requestText(&reqs[0]))
	}

	// After expires_after the customer is back at the base level before
	// the gate can grant it again.
	clock.advance(61 * time.Minute)
	reqs = checkTurn(cust, "VERIFY-4711 one more question")
	if len(reqs) == 0 || offered(&reqs[0], "order_lookup") || strings.Contains(requestText(&reqs[0]), "Ada Lovelace") {
		t.Fatalf("the verified level outlived expires_after:\n%s", requestText(&reqs[0]))
	}

	// The owner bypasses the levels and holds its full toolset.
	o := owner(t, d.Addr())
	before = len(mock.Requests())
	o.answer(o.say("hi, it is me"))
	reqs = requestsSince(mock, before)
	if len(reqs) == 0 || !offered(&reqs[0], "memory_search") {
		t.Fatalf("owner turn does not show the owner's toolset:\n%s", requestText(&reqs[0]))
	}
}
