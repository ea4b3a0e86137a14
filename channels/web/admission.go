package web

import (
	"net/http"
	"strconv"
	"sync"
)

// pool is the class a socket is counted in. Each has its own caps, so
// that one class filling up cannot lock out another: customers cannot
// crowd out the owner, and clients that never authenticate cannot crowd
// out either.
type pool int

const (
	poolCustomer pool = iota // /chat
	poolPending              // /ws before the owner token was seen
	poolOwner                // /ws with the owner token
	poolCount
)

// poolLimit is one pool's caps and the config keys that set them.
type poolLimit struct {
	total, perIP       int // perIP 0: no per-IP cap
	totalKey, perIPKey string
	what               string // "customer sockets", for messages
}

// refusal says why a socket was not admitted.
type refusal struct {
	status int    // HTTP status before the upgrade: 503 (total) or 429 (per IP)
	key    string // the config key that would admit it
	limit  int
	what   string
	perIP  bool
}

// message is what the client is told: which limit, and what to do.
func (r *refusal) message() string {
	scope := "are open on this server"
	if r.perIP {
		scope = "are open from your address"
	}
	return "Too many " + r.what + " " + scope + " (" + strconv.Itoa(r.limit) +
		", silas." + r.key + "); close one or try again later."
}

// reason is the short form for a close frame.
func (r *refusal) reason() string { return "too many sockets: silas." + r.key }

// admission counts open sockets per pool and per client IP. It is the one
// place that decides whether another socket fits.
type admission struct {
	limits [poolCount]poolLimit

	mu    sync.Mutex
	total [poolCount]int
	perIP [poolCount]map[string]int
}

func newAdmission(o *Options) *admission {
	a := &admission{limits: [poolCount]poolLimit{
		poolCustomer: {total: o.MaxSockets, perIP: o.MaxSocketsPerIP,
			totalKey: "channels.web.max_sockets", perIPKey: "channels.web.max_sockets_per_ip", what: "customer sockets"},
		poolPending: {total: o.MaxUnauthenticatedSockets, perIP: o.MaxUnauthenticatedSocketsPerIP,
			totalKey: "channels.web.max_unauthenticated_sockets", perIPKey: "channels.web.max_unauthenticated_sockets_per_ip",
			what: "unauthenticated sockets"},
		poolOwner: {total: o.MaxOwnerSockets, totalKey: "channels.web.max_owner_sockets", what: "owner sockets"},
	}}
	for i := range a.perIP {
		a.perIP[i] = map[string]int{}
	}
	return a
}

// check reports whether one more socket of p from ip would fit now,
// without taking it: the refusal before an upgrade, answered as HTTP.
func (a *admission) check(p pool, ip string) *refusal {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fits(p, ip)
}

// take counts one more socket of p from ip, or says why it does not fit.
func (a *admission) take(p pool, ip string) *refusal {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := a.fits(p, ip); r != nil {
		return r
	}
	a.total[p]++
	a.perIP[p][ip]++
	return nil
}

// release uncounts a socket taken with take.
func (a *admission) release(p pool, ip string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.uncount(p, ip)
}

// move recounts a socket from one pool to another, or says why it does
// not fit there; then it stays in from.
func (a *admission) move(from, to pool, ip string) *refusal {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := a.fits(to, ip); r != nil {
		return r
	}
	a.uncount(from, ip)
	a.total[to]++
	a.perIP[to][ip]++
	return nil
}

// open returns the number of sockets counted in p.
func (a *admission) open(p pool) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.total[p]
}

func (a *admission) fits(p pool, ip string) *refusal {
	l := a.limits[p]
	if a.total[p] >= l.total {
		return &refusal{status: http.StatusServiceUnavailable, key: l.totalKey, limit: l.total, what: l.what}
	}
	if l.perIP > 0 && a.perIP[p][ip] >= l.perIP {
		return &refusal{status: http.StatusTooManyRequests, key: l.perIPKey, limit: l.perIP, what: l.what, perIP: true}
	}
	return nil
}

func (a *admission) uncount(p pool, ip string) {
	a.total[p]--
	if n := a.perIP[p][ip] - 1; n > 0 {
		a.perIP[p][ip] = n
	} else {
		delete(a.perIP[p], ip)
	}
}
