package actors

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
)

func TestAdmissionAccounting(t *testing.T) {
	type take struct {
		owner bool
		ip    string
		key   string // "" admits; else the refusal names this key
	}
	own := func(key string) take { return take{owner: true, key: key} }
	cust := func(ip, key string) take { return take{ip: ip, key: key} }
	const (
		pool  = "max_pending_turns_total less backpressure.owner_reserved_turns"
		perIP = "backpressure.max_pending_turns_per_ip"
		total = "backpressure.owner_reserved_turns, then backpressure.max_pending_turns_total"
	)
	cases := []struct {
		name                   string
		total, reserved, perIP int
		takes                  []take
		owner, customers       int // held at the end
	}{
		{name: "customers fill their pool, the owner still gets its reservation", total: 5, reserved: 2, perIP: 10,
			takes: []take{cust("a", ""), cust("b", ""), cust("c", ""), cust("d", pool), own(""), own("")},
			owner: 2, customers: 3},
		{name: "the owner spills into the customers' pool while it has room", total: 4, reserved: 1, perIP: 10,
			takes: []take{own(""), own(""), own(""), own(""), own(total), cust("a", pool)},
			owner: 1, customers: 3},
		{name: "one address is capped, others are not", total: 10, reserved: 1, perIP: 2,
			takes: []take{cust("a", ""), cust("a", ""), cust("a", perIP), cust("b", ""), cust("b", ""), cust("c", "")},
			owner: 0, customers: 5},
		{name: "no address is charged nothing per address", total: 10, reserved: 1, perIP: 1,
			takes: []take{cust("", ""), cust("", ""), cust("", "")},
			owner: 0, customers: 3},
		{name: "a refused message takes nothing", total: 3, reserved: 1, perIP: 1,
			takes: []take{cust("a", ""), cust("a", perIP), cust("b", ""), cust("c", pool), own(""), own(total)},
			owner: 1, customers: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newAdmission(tc.total, tc.reserved, tc.perIP)
			var held []slot
			for i, tk := range tc.takes {
				sl, r := a.acquire(tk.owner, tk.ip)
				switch {
				case tk.key == "" && r != nil:
					t.Fatalf("take %d (%+v) refused: %s", i, tk, r.busyText())
				case tk.key != "" && r == nil:
					t.Fatalf("take %d (%+v) admitted, want refused by %s", i, tk, tk.key)
				case tk.key != "" && !strings.Contains(r.busyText(), tk.key):
					t.Fatalf("take %d refused with %q, want it to name %s", i, r.busyText(), tk.key)
				case r != nil && sl.held:
					t.Fatalf("take %d refused but holds a slot", i)
				}
				held = append(held, sl)
			}
			if o, c, _ := a.usage(""); o != tc.owner || c != tc.customers {
				t.Fatalf("held owner %d customers %d, want %d and %d", o, c, tc.owner, tc.customers)
			}
			for _, sl := range held {
				a.release(sl) // refused ones are zero slots: no-ops
			}
			if a.depth() != 0 || len(a.ips) != 0 {
				t.Fatalf("after releasing everything: depth %d, addresses %v", a.depth(), a.ips)
			}
		})
	}
}

// TestRestartedScopeGivesBackItsSlots panics a scope with a turn in flight
// and two queued: the fresh instance reloads the three journaled messages
// and holds three slots, not six, and all are back once they are answered.
func TestRestartedScopeGivesBackItsSlots(t *testing.T) {
	release, calls := make(chan struct{}), make(chan struct{}, 16)
	h := newHarness(t, func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		calls <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return direct("done"), nil
	}, nil)
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the harness stops, even when the test fails
	c, s := h.ownerConn()
	c.Frame(&messages.Frame{Type: "message", Text: "one", MessageID: "m1"})
	<-calls
	c.Frame(&messages.Frame{Type: "message", Text: "two", MessageID: "m2"})
	c.Frame(&messages.Frame{Type: "message", Text: "three", MessageID: "m3"})
	s.wait(t, "ack of m3", typed("ack", "message_id", "m3"))
	admit := h.sys.d.admit
	if d := admit.depth(); d != 3 {
		t.Fatalf("before the restart %d slots are held, want 3", d)
	}

	root := h.sys.d.sys.Root
	res, err := root.RequestFuture(h.sys.d.stream, &messages.ScopeFor{ScopeID: "owner"}, 5*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	scope := res.(*messages.ScopeRef).PID
	// A nil message makes onUserMessage dereference nil: a panic in Receive.
	root.Send(scope, (*messages.UserMessage)(nil))
	// The reloaded scope runs m1 again: its model call is the sign that
	// the fresh instance loaded and took m1's slot; it may take those of
	// m2 and m3 just after. Had the old instance's three leaked, the depth
	// would be 4 or more from here on and never 3.
	<-calls
	checkFor(t, 5*time.Second, func() bool { return admit.depth() == 3 },
		"three slots held after the restart (the old instance's must be given back)")
	unblock()
	_, s2 := h.ownerConn() // the restart dropped the old attachment
	for i := 1; i <= 3; i++ {
		s2.wait(t, "answer", typed("message", "reply_to", fmt.Sprintf("m%d", i)))
	}
	checkFor(t, 5*time.Second, func() bool { return admit.depth() == 0 }, "every slot given back after the answers")
}

// checkFor polls fn until it returns true, failing after timeout.
func checkFor(t *testing.T, timeout time.Duration, fn func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !fn() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
