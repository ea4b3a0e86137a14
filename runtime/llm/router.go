package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Role is a model tier (spec: models.proxy, planner, executor, scorer).
type Role string

// Roles.
const (
	RoleProxy    Role = "proxy"
	RolePlanner  Role = "planner"
	RoleExecutor Role = "executor"
	RoleScorer   Role = "scorer"
)

// Roles lists every role.
func Roles() []Role { return []Role{RoleProxy, RolePlanner, RoleExecutor, RoleScorer} }

// entry is one resolved "<provider>:<model id>" of a role's chain.
type entry struct {
	ref          string
	providerName string
	provider     Provider
	model        string
	breaker      *breaker
}

// RouterOptions tunes a [Router]'s fallback chains, circuit breakers and
// pricing. The zero value uses the defaults.
type RouterOptions struct {
	// CircuitFailures is how many consecutive failures of a provider
	// (transient, rate limited, refused key) open its circuit. Default 3.
	CircuitFailures int
	// CircuitCooldown is how long an open circuit makes chains skip its
	// provider before one probe call may try it again. Default 30s.
	CircuitCooldown time.Duration
	// Prices are price tables by provider name. A call whose provider
	// reports no cost is priced from its table, so that budgets in USD
	// hold on every provider.
	Prices map[string]PriceTable
	// OnUnpriced is called once per chain entry ("<provider>:<model id>")
	// whose calls count as $0 because the provider reports no cost and
	// no price is configured for it; nil ignores it. The daemon logs a
	// warning, since a budget in USD does not hold for that model.
	OnUnpriced func(ref string)
	// Now is the breakers' clock; nil uses time.Now.
	Now func() time.Time
}

// Router sends each role's calls to its models, in the order configured:
// a call that fails in a way another provider may not (a transient error,
// a timeout, a rate limit, a refused key, a refused request), or whose
// provider's circuit is open, goes to the next entry of the role's chain.
// Its chains are fixed at construction; its breakers and its record of
// unpriced models change as calls are made. It is safe for concurrent use.
//
// Which errors fall back, and why:
//   - transient, rate limited, a timeout of the entry: another provider
//     has its own outage, its own quota and its own latency.
//   - auth (no key, 401, 403): a key belongs to one provider; provider B
//     answers with its own. The refusal still reaches the audit and the
//     log with the entry that answered instead, for the owner to fix.
//   - bad request (400, 404, 422): every entry is another model on
//     another server, which may know the model id, accept the schema or
//     hold the context that this one refused. A request every entry
//     refuses costs one refused call per entry, and none is billed.
//   - not a content filter: a provider's content policy refused the
//     content; sending the same content elsewhere would route around it.
//   - not when the caller gave up (canceled, its own deadline), and not
//     for a request that cannot be sent at all ([ErrInvalidRequest]).
type Router struct {
	roles     map[Role][]entry
	prices    map[string]PriceTable
	now       func() time.Time
	unpriced  func(ref string)
	warnMu    sync.Mutex
	warnedFor map[string]bool
}

// NewRouter resolves roles, each one model reference, against providers;
// see [NewChainRouter].
func NewRouter(providers map[string]Provider, roles map[Role]string) (*Router, error) {
	chains := make(map[Role][]string, len(roles))
	for role, ref := range roles {
		chains[role] = []string{ref}
	}
	return NewChainRouter(providers, chains, RouterOptions{})
}

// NewChainRouter resolves roles, each a chain of model references
// "<provider>:<model id>" tried in order, against providers. A reference is
// split on its first colon (so "openrouter:meta/llama:free" is provider
// "openrouter", model "meta/llama:free"). Every problem is reported at
// once, each naming the role and, in a chain of several, the entry's index.
func NewChainRouter(providers map[string]Provider, roles map[Role][]string, o RouterOptions) (*Router, error) {
	if o.CircuitFailures <= 0 {
		o.CircuitFailures = DefaultCircuitFailures
	}
	if o.CircuitCooldown <= 0 {
		o.CircuitCooldown = DefaultCircuitCooldown
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &Router{roles: make(map[Role][]entry, len(roles)), prices: o.Prices, now: o.Now, unpriced: o.OnUnpriced, warnedFor: map[string]bool{}}
	breakers := map[string]*breaker{}
	var errs []error
	keys := make([]Role, 0, len(roles))
	for role := range roles {
		keys = append(keys, role)
	}
	slices.Sort(keys)
	for _, role := range keys {
		refs := roles[role]
		if !slices.Contains(Roles(), role) {
			errs = append(errs, fmt.Errorf("role %q is not one of proxy, planner, executor, scorer", role))
			continue
		}
		if len(refs) == 0 {
			errs = append(errs, fmt.Errorf("role %s: no model configured; name at least one \"<provider>:<model id>\"", role))
			continue
		}
		chain := make([]entry, 0, len(refs))
		for i, ref := range refs {
			where := "role " + string(role)
			if len(refs) > 1 {
				where += fmt.Sprintf(" entry %d", i)
			}
			name, model, ok := strings.Cut(ref, ":")
			if !ok || name == "" || model == "" {
				errs = append(errs, fmt.Errorf("%s: model %q must be \"<provider>:<model id>\", e.g. \"openrouter:anthropic/claude-sonnet-4\"", where, ref))
				continue
			}
			p, ok := providers[name]
			if !ok || p == nil {
				errs = append(errs, fmt.Errorf("%s: model %q names provider %q, which is not configured", where, ref, name))
				continue
			}
			b := breakers[name]
			if b == nil {
				b = newBreaker(o.CircuitFailures, o.CircuitCooldown)
				breakers[name] = b
			}
			chain = append(chain, entry{ref: ref, providerName: name, provider: p, model: model, breaker: b})
		}
		r.roles[role] = chain
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("llm router: %w", err)
	}
	return r, nil
}

// Model returns the provider name and model id of role's first entry.
func (r *Router) Model(role Role) (provider, model string, ok bool) {
	chain, ok := r.roles[role]
	if !ok || len(chain) == 0 {
		return "", "", false
	}
	return chain[0].providerName, chain[0].model, true
}

// Chain returns role's model references in the order they are tried.
func (r *Router) Chain(role Role) []string {
	refs := make([]string, len(r.roles[role]))
	for i, e := range r.roles[role] {
		refs[i] = e.ref
	}
	return refs
}

// Complete sends req to role's models in order, each receiving a copy of
// req with Model set to its model id; req itself is not modified. The
// answer names the entry that answered (Response.Ref) and the ones that
// did not before it (Response.Fallbacks), and its cost is priced from the
// price table when the provider reported none.
//
// An entry that is not the last gets at most an equal share of the time
// left before ctx's deadline, so that a provider that hangs cannot use up
// the time of the entries after it. When every entry of a chain of several
// fails, the error is a *[ChainError]; a chain of one returns its
// provider's error as it is.
func (r *Router) Complete(ctx context.Context, role Role, req *Request) (*Response, error) {
	chain, ok := r.roles[role]
	if !ok || len(chain) == 0 {
		return nil, fmt.Errorf("%w %q", ErrUnknownRole, role)
	}
	if req == nil {
		return nil, fmt.Errorf("llm router: %w: nil request", ErrInvalidRequest)
	}
	failed := &ChainError{Role: role}
	tried := false
	for i := range chain {
		e := &chain[i]
		allowed, probe := e.breaker.allow(r.now())
		if !allowed {
			failed.add(role, e.ref, fmt.Errorf("skipped: %w (provider %s)", ErrCircuitOpen, e.providerName))
			continue
		}
		tried = true
		resp, err := r.call(ctx, e, probe, req, len(chain)-i)
		if err == nil {
			return r.answered(e, resp, failed), nil
		}
		if !fallsBack(ctx, err) {
			return nil, withEarlier(err, failed)
		}
		failed.add(role, e.ref, err)
	}
	if !tried {
		// Every circuit is open. A call that may fail beats one that
		// certainly does: the first entry is tried anyway, as a probe.
		e := &chain[0]
		resp, err := r.call(ctx, e, e.breaker.force(), req, 1)
		rest := &ChainError{Role: role, Entries: failed.Entries[1:], errs: failed.errs[1:]}
		if err == nil {
			return r.answered(e, resp, &ChainError{Role: role}), nil
		}
		failed = &ChainError{Role: role}
		failed.add(role, e.ref, err)
		failed.Entries, failed.errs = append(failed.Entries, rest.Entries...), append(failed.errs, rest.errs...)
	}
	if len(chain) == 1 {
		return nil, failed.errs[0]
	}
	return nil, failed
}

// call sends req to e within its share of ctx's time and reports the
// outcome to e's breaker.
func (r *Router) call(ctx context.Context, e *entry, probe bool, req *Request, left int) (*Response, error) {
	cctx, cancel := shareOf(ctx, left)
	defer cancel()
	cp := *req
	cp.Model = e.model
	resp, err := e.provider.Complete(cctx, &cp)
	switch {
	case err == nil:
		e.breaker.done(r.now(), probe, false)
	case ctx.Err() != nil:
		e.breaker.release(probe) // the caller gave up: nothing learnt
	default:
		e.breaker.done(r.now(), probe, counts(err))
	}
	if err == nil && resp == nil {
		return nil, fmt.Errorf("llm %s: %w: no response", e.ref, ErrInvalidResponse)
	}
	return resp, err
}

// shareOf bounds ctx to an equal share of its remaining time among left
// entries; the last entry gets all of it.
func shareOf(ctx context.Context, left int) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok || left <= 1 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, time.Until(dl)/time.Duration(left))
}

// fallsBack reports whether a failed entry's call goes to the next entry
// (see [Router] for the reasons).
func fallsBack(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, ErrInvalidRequest) {
		return false
	}
	switch KindOf(err) {
	case KindTransient, KindRateLimited, KindAuth, KindBadRequest:
		return true
	}
	return false
}

// counts reports whether err says the provider is unusable, for its
// breaker: a refused request or a content filter says it is up.
func counts(err error) bool {
	switch KindOf(err) {
	case KindTransient, KindRateLimited, KindAuth:
		return true
	}
	return false
}

// withEarlier adds the entries that failed before err's to its text,
// keeping err's kind.
func withEarlier(err error, failed *ChainError) error {
	if len(failed.Entries) == 0 {
		return err
	}
	return fmt.Errorf("%w (after %s)", err, failed.summary())
}

// answered completes e's response: which entry answered, which did not
// before it, and its cost.
func (r *Router) answered(e *entry, resp *Response, failed *ChainError) *Response {
	out := *resp
	out.Ref = e.ref
	out.Fallbacks = nil
	for _, f := range failed.Entries {
		f.To = e.ref
		out.Fallbacks = append(out.Fallbacks, f)
	}
	if out.CostReported || out.Usage.CostUSD != 0 || out.Usage.PromptTokens+out.Usage.CompletionTokens == 0 {
		return &out
	}
	if p, ok := r.prices[e.providerName].lookup(e.model); ok {
		out.Usage.CostUSD = p.Cost(out.Usage)
		return &out
	}
	r.warnUnpriced(e.ref)
	return &out
}

// warnUnpriced reports ref to OnUnpriced the first time only.
func (r *Router) warnUnpriced(ref string) {
	if r.unpriced == nil {
		return
	}
	r.warnMu.Lock()
	first := !r.warnedFor[ref]
	r.warnedFor[ref] = true
	r.warnMu.Unlock()
	if first {
		r.unpriced(ref)
	}
}

// Completer returns a [Completer] bound to role, for [RunStructured].
func (r *Router) Completer(role Role) Completer {
	return func(ctx context.Context, req *Request) (*Response, error) {
		return r.Complete(ctx, role, req)
	}
}
