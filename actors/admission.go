package actors

import (
	"fmt"
	"sync"
)

// admission bounds the turns waiting or running across all scopes, so that
// a crowd of customers cannot lock the owner out (spec 5.1, issue 16):
//
//   - backpressure.max_pending_turns_total bounds every scope together;
//   - backpressure.owner_reserved_turns of those are kept for the owner's
//     scope: customers together never hold more than total minus reserved;
//     the owner takes its reservation first and then, while there is room,
//     the customers' pool;
//   - backpressure.max_pending_turns_per_ip bounds the customer turns
//     charged to one client IP, so that one address opening many sessions
//     cannot fill the customers' pool alone.
//
// (backpressure.max_pending_turns_per_scope is each scope's own queue bound,
// checked by the scope.)
//
// Scopes take a slot when they accept a message and give that slot back when
// its turn ends, when the message is dropped, or when the scope stops or
// restarts. It is the one piece of state every scope shares; its critical
// sections are a few integer operations and never block on anything else.
type admission struct {
	total    int // max_pending_turns_total
	reserved int // owner_reserved_turns
	perIP    int // max_pending_turns_per_ip

	mu        sync.Mutex
	owner     int // slots held in the owner's reservation
	customers int // slots held in the customers' pool, by customers or the owner
	ips       map[string]int
}

// slot is one admitted turn: where it was counted, so that release gives
// it back to the same place. The zero slot holds nothing.
type slot struct {
	held     bool
	reserved bool   // in the owner's reservation, else in the customers' pool
	ip       string // the client IP charged, "" when none
}

// refusal says which limit turned a message away and which key raises it.
type refusal struct {
	key  string // the config key, or keys, that raise the limit
	text string
}

// busyText is the client's error text for r.
func (r *refusal) busyText() string {
	return fmt.Sprintf("busy: %s (%s); resend in a moment", r.text, r.key)
}

func newAdmission(total, reserved, perIP int) *admission {
	return &admission{total: total, reserved: reserved, perIP: perIP, ips: make(map[string]int)}
}

// customerPool is how many slots customers may hold together.
func (a *admission) customerPool() int { return max(a.total-a.reserved, 0) }

// acquire takes a slot for a turn of the owner's scope (owner true) or of a
// customer's, charged to client IP ip ("" charges no IP: a recovered
// message or a channel without one).
func (a *admission) acquire(owner bool, ip string) (slot, *refusal) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if owner {
		if a.owner < a.reserved {
			a.owner++
			return slot{held: true, reserved: true}, nil
		}
		if a.customers < a.customerPool() {
			a.customers++
			return slot{held: true}, nil
		}
		return slot{}, &refusal{key: "backpressure.owner_reserved_turns, then backpressure.max_pending_turns_total",
			text: fmt.Sprintf("the server has %d messages waiting, its limit", a.owner+a.customers)}
	}
	if ip != "" && a.ips[ip] >= a.perIP {
		return slot{}, &refusal{key: "backpressure.max_pending_turns_per_ip",
			text: fmt.Sprintf("%d messages from your network address are already waiting, the most one address may have", a.perIP)}
	}
	if a.customers >= a.customerPool() {
		return slot{}, &refusal{key: "backpressure.max_pending_turns_total less backpressure.owner_reserved_turns",
			text: fmt.Sprintf("%d customer messages are already waiting, the most this server queues for customers", a.customerPool())}
	}
	a.customers++
	if ip != "" {
		a.ips[ip]++
	}
	return slot{held: true, ip: ip}, nil
}

// release gives s back; releasing the zero slot does nothing, so a holder
// may release unconditionally.
func (a *admission) release(s slot) {
	if !s.held {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.reserved {
		a.owner--
		return
	}
	a.customers--
	if s.ip != "" {
		if a.ips[s.ip] <= 1 {
			delete(a.ips, s.ip) // the map holds only addresses with turns waiting
		} else {
			a.ips[s.ip]--
		}
	}
}

// depth is the number of slots held.
func (a *admission) depth() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return int64(a.owner + a.customers)
}

// usage is the slots held in the owner's reservation, in the customers'
// pool and by ip, for tests and metrics.
func (a *admission) usage(ip string) (owner, customers, byIP int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.owner, a.customers, a.ips[ip]
}
