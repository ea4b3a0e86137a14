package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/channels/web"
	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// How long /ready reuses a probe's result. A write probe costs one group
// commit and a model provider probe one TCP handshake, so a load balancer
// polling every second costs no more than this.
const (
	dbProbeEvery    = 5 * time.Second
	modelProbeEvery = 15 * time.Second
	modelDialLimit  = 2 * time.Second
)

// readiness answers /ready: the store takes writes, the actors answer, the
// disk is above persistence.min_free_mb, and every model role has a
// provider in its chain that accepts connections (a fallback that answers
// keeps the daemon ready while the primary is down; the detail names the
// providers that are not reachable). A TCP handshake with each, cached, is
// what "reachable" means here; the model router's circuit breakers decide
// per call, not here.
type readiness struct {
	db  *persistence.DB
	sys *actors.System
	log zerolog.Logger
	// providers maps a provider name to the host:port of its base URL;
	// roles maps each model role to the providers of its chain, in order.
	providers map[string]string
	roles     map[string][]string
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)

	mu       sync.Mutex // guards the cached probes; held while one runs
	dbAt     time.Time
	dbErr    error
	modelAt  time.Time
	modelBad []string // providers that refused the last probe
}

func newReadiness(cfg *config.Config, db *persistence.DB, sys *actors.System, log zerolog.Logger) *readiness {
	r := &readiness{db: db, sys: sys, log: log, providers: map[string]string{}, roles: map[string][]string{}, dial: (&net.Dialer{}).DialContext}
	for role, chain := range cfg.Models.ByRole() {
		for _, ref := range chain {
			name, _, err := config.ParseModelRef(ref)
			if err != nil {
				continue // config validation refused it already
			}
			if addr, ok := providerAddr(cfg.Providers[name].BaseURL); ok {
				r.providers[name] = addr
				r.roles[role] = append(r.roles[role], name)
			}
		}
	}
	return r
}

// providerAddr returns host:port of a base URL, the scheme's port implied.
func providerAddr(base string) (string, bool) {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if port == "" {
		return "", false
	}
	return net.JoinHostPort(u.Hostname(), port), true
}

// Ready runs the checks; details name no path, URL or error body, since
// /ready answers callers without a token.
func (r *readiness) Ready(ctx context.Context) []web.ReadyCheck {
	checks := make([]web.ReadyCheck, 0, 4)

	dbErr := r.probeDB(ctx)
	db := web.ReadyCheck{Name: "database", OK: dbErr == nil, Detail: "takes writes"}
	if dbErr != nil {
		db.Detail = "a test write failed; see the log"
	}
	checks = append(checks, db)

	actorsOK := web.ReadyCheck{Name: "actors", OK: true, Detail: "answering"}
	if err := r.sys.Alive(ctx); err != nil {
		actorsOK = web.ReadyCheck{Name: "actors", Detail: err.Error()}
	}
	checks = append(checks, actorsOK)

	s := r.db.Space()
	disk := web.ReadyCheck{Name: "disk", OK: !s.Low()}
	switch {
	case s.MinFreeBytes == 0:
		disk.Detail = "no watermark (persistence.min_free_mb is 0)"
	case s.Err != nil:
		disk.Detail = "free space cannot be measured; the watermark is not enforced"
	case s.Low():
		disk.Detail = fmt.Sprintf("%d MB free, below persistence.min_free_mb (%d MB): new messages are refused", s.FreeBytes>>20, s.MinFreeBytes>>20)
	default:
		disk.Detail = fmt.Sprintf("%d MB free, watermark %d MB", s.FreeBytes>>20, s.MinFreeBytes>>20)
	}
	checks = append(checks, disk)

	return append(checks, r.modelCheck(r.probeModels(ctx)))
}

// modelCheck judges the probe: ready when every role has a reachable
// provider in its chain.
func (r *readiness) modelCheck(bad []string) web.ReadyCheck {
	var stranded []string // roles whose whole chain is unreachable
	for role, chain := range r.roles {
		if !slices.ContainsFunc(chain, func(p string) bool { return !slices.Contains(bad, p) }) {
			stranded = append(stranded, role)
		}
	}
	slices.Sort(stranded)
	switch {
	case len(stranded) > 0:
		return web.ReadyCheck{Name: "model", Detail: fmt.Sprintf("cannot connect to provider(s) %v: no provider reachable for %v", bad, stranded)}
	case len(bad) > 0:
		return web.ReadyCheck{Name: "model", OK: true, Detail: fmt.Sprintf("cannot connect to provider(s) %v; every role has a reachable fallback", bad)}
	}
	return web.ReadyCheck{Name: "model", OK: true, Detail: fmt.Sprintf("%d provider(s) reachable", len(r.providers))}
}

// probeDB writes through the store at most every dbProbeEvery.
func (r *readiness) probeDB(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.dbAt.IsZero() && time.Since(r.dbAt) < dbProbeEvery {
		return r.dbErr
	}
	r.dbErr, r.dbAt = r.db.Probe(ctx), time.Now()
	if r.dbErr != nil {
		r.log.Warn().Err(r.dbErr).Msg("readiness: the database does not take writes")
	}
	return r.dbErr
}

// probeModels connects to every provider at most every modelProbeEvery
// and returns the names of those that refused.
func (r *readiness) probeModels(ctx context.Context) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.modelAt.IsZero() && time.Since(r.modelAt) < modelProbeEvery {
		return r.modelBad
	}
	var bad []string
	for name, addr := range r.providers {
		c, cancel := context.WithTimeout(ctx, modelDialLimit)
		conn, err := r.dial(c, "tcp", addr)
		cancel()
		if err != nil {
			r.log.Warn().Err(err).Str("provider", name).Msg("readiness: cannot connect to the model provider")
			bad = append(bad, name)
			continue
		}
		_ = conn.Close()
	}
	slices.Sort(bad)
	r.modelBad, r.modelAt = bad, time.Now()
	return bad
}

// readyGateway is the actors' gateway with /ready's checks: the web
// channel finds web.ReadyReporter on its Gateway by type assertion.
type readyGateway struct {
	messages.Gateway
	*readiness
}

var _ web.ReadyReporter = readyGateway{}
