package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
)

// blockCustomers makes every model call of a message containing marker wait
// until the returned unblock runs (the test's cleanup runs it too, before
// the daemon stops). Other calls are answered at once.
func blockCustomers(t *testing.T, mock *mockllm.Server, marker string) (unblock func()) {
	t.Helper()
	gate := make(chan struct{})
	var once sync.Once
	unblock = func() { once.Do(func() { close(gate) }) }
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		if !strings.Contains(currentMessage(r), marker) {
			return mockllm.Reply{}, false
		}
		<-gate
		return mockllm.Reply{Content: routeDecision("direct", "a slow answer")}, true
	})
	return unblock
}

// ackOrError waits for the ack of id or an error event.
func (c *client) ackOrError(id string) event {
	c.t.Helper()
	for {
		ev := c.nextAny()
		switch ev.str("type") {
		case "error":
			return ev
		case "ack":
			if ev.str("message_id") == id {
				return ev
			}
		}
	}
}

// TestCustomersCannotMakeOwnerBusy: 50 anonymous customers whose model
// calls hang fill the customers' share of the pending turns, one address
// with many sessions is held to its own bound, and the owner's message is
// still accepted and answered.
func TestCustomersCannotMakeOwnerBusy(t *testing.T) {
	mock := newMock(t)
	ov := overrides(t, mock, t.TempDir())
	ov["silas.backpressure.max_pending_turns_total"] = 30
	ov["silas.backpressure.owner_reserved_turns"] = 5 // customers share 25
	ov["silas.backpressure.max_pending_turns_per_ip"] = 3
	ov["silas.channels.web.trusted_proxies"] = []string{"127.0.0.1"}
	d := startTest(t, loadConfig(t, ov))
	unblock := blockCustomers(t, mock, "slow customer")
	t.Cleanup(unblock) // runs before the daemon stops
	addr := d.Addr()

	const (
		sessionsOfOne = 10 // sessions from one address
		customers     = 50
		pool          = 25
		perIP         = 3
	)
	type admitted struct {
		c  *client
		id string
	}
	var in []admitted
	refused := map[string]int{} // by the key the busy error names
	for i := range customers {
		ip := "10.0.0.1"
		if i >= sessionsOfOne {
			ip = fmt.Sprintf("10.0.1.%d", i)
		}
		c, _, err := dial(t, addr, "/chat", http.Header{"X-Forwarded-For": {ip}})
		if err != nil {
			t.Fatalf("customer %d: dial: %v", i, err)
		}
		c.next("session")
		id := c.say(fmt.Sprintf("slow customer %d", i))
		ev := c.ackOrError(id)
		if ev.str("type") == "ack" {
			in = append(in, admitted{c, id})
			continue
		}
		msg := ev.str("message")
		if ev.str("code") != "busy" {
			t.Fatalf("customer %d: error %v, want busy", i, ev)
		}
		switch {
		case strings.Contains(msg, "backpressure.max_pending_turns_per_ip"):
			refused["per_ip"]++
			if ip != "10.0.0.1" {
				t.Fatalf("customer %d from its own address refused per address: %q", i, msg)
			}
		case strings.Contains(msg, "backpressure.max_pending_turns_total less backpressure.owner_reserved_turns"):
			refused["pool"]++
		default:
			t.Fatalf("customer %d: busy error %q does not name the limit and its key", i, msg)
		}
	}
	if len(in) != pool || refused["per_ip"] != sessionsOfOne-perIP || refused["pool"] != customers-pool-(sessionsOfOne-perIP) {
		t.Fatalf("admitted %d, refused %v; want %d admitted, %d refused per address, %d for the full pool",
			len(in), refused, pool, sessionsOfOne-perIP, customers-pool-(sessionsOfOne-perIP))
	}

	// The customers' turns all hang on the model; the owner is served.
	o := owner(t, addr)
	for range 3 {
		id := o.say("owner here: status?")
		if ev := o.ackOrError(id); ev.str("type") != "ack" {
			t.Fatalf("owner's message refused while customers fill their pool: %v", ev)
		}
		o.answerTo(id)
	}

	unblock()
	for _, a := range in {
		if got := a.c.answer(a.id).str("text"); got != "a slow answer" {
			t.Fatalf("customer answer %q", got)
		}
	}
	checkFor(t, waitLimit, func() bool { return d.sys.Pending() == 0 }, "every admission slot given back")
}

// TestDeliveredMarkDurableWhileScopeBusy: an answer's delivered mark is
// written on its own, not with the scope's next turn. The scope's next turn
// hangs on the model, so a mark waiting for that turn's commit (or for the
// scope to go idle) would never reach the store.
func TestDeliveredMarkDurableWhileScopeBusy(t *testing.T) {
	mock := newMock(t)
	cfg := loadConfig(t, overrides(t, mock, t.TempDir()))
	d := startTest(t, cfg)
	unblock := blockCustomers(t, mock, "hang on this")
	t.Cleanup(unblock)
	o := owner(t, d.Addr())
	first := o.say("answer this one")
	second := o.say("hang on this")
	o.answerTo(first)

	ctx := context.Background()
	outbox := d.in.db.Outbox()
	undelivered := func(id string) bool {
		recs, err := outbox.Pending(ctx, cfg.OwnerID)
		if err != nil {
			t.Fatalf("read outbox: %v", err)
		}
		for _, r := range recs {
			if r.ReplyTo == id {
				return true
			}
		}
		return false
	}
	checkFor(t, waitLimit, func() bool { return !undelivered(first) }, "the delivered mark of the first answer in the store while the next turn runs")

	unblock()
	o.answerTo(second)
	checkFor(t, waitLimit, func() bool { return !undelivered(second) }, "the delivered mark of the second answer")
}

// TestKillNineRedeliversSameBytes kills the daemon right after each answer
// reaches the client. Whether the answer's delivered mark made it to disk
// first is a race of milliseconds; when it did not, the answer comes again
// after the restart and must be byte for byte the first, with the same
// reply_to, so that clients drop it. Nothing acknowledged is lost.
func TestKillNineRedeliversSameBytes(t *testing.T) {
	mock := newMock(t)
	cfgPath := writeConfig(t, overrides(t, mock, t.TempDir()))
	redelivered := 0
	const kills = 3
	for round := range kills {
		p := startProcess(t, cfgPath)
		c := owner(t, p.addr)
		id := c.say(fmt.Sprintf("round %d", round))
		c.answerTo(id)
		var first []byte
		for _, f := range c.received() {
			if bytes.Contains(f, []byte(`"reply_to":"`+id+`"`)) {
				first = f
			}
		}
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = p.cmd.Wait()

		p2 := startProcess(t, cfgPath)
		c2 := owner(t, p2.addr)
		// A fresh message's answer comes after any redelivered one: the
		// outbox is flushed when the connection attaches.
		probe := c2.say("anything left?")
		c2.answerTo(probe)
		for _, f := range c2.received() {
			if !bytes.Contains(f, []byte(`"reply_to":"`+id+`"`)) {
				continue
			}
			redelivered++
			if !bytes.Equal(f, first) {
				t.Fatalf("redelivered answer differs:\nfirst %s\nagain %s", first, f)
			}
		}
		if err := p2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := p2.cmd.Wait(); err != nil {
			t.Fatalf("silas exited with %v after SIGTERM", err)
		}
	}
	t.Logf("%d of %d answers redelivered after kill -9", redelivered, kills)
}
