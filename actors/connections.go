package actors

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/skills"
)

// ConnectionManager coordinates service connections (spec 2.5, 5.10):
// one supervised ServiceConnection child per connection, which runs the
// connection skill's scripts and owns the connection's record. The
// manager creates and removes children, routes the owner's card answers
// and stored secrets to them, relays their cards to the owner, and keeps
// the registry of active connections that work items read.
//
// Records are in Badger (persistence.Connections); at start the manager
// spawns a child for each, and each child recovers its own state (a setup
// that a crash interrupted goes back to proposed). Supervision: the
// default restart for children; their state is rebuilt from the store.
type ConnectionManager struct {
	d        *shared
	children map[string]*actor.PID          // by connection id
	records  map[string]messages.Connection // the latest of each child
	cards    map[string]pendingConnCard     // by request id
	order    []string                       // card request ids, oldest first
	outbox   []any
}

type pendingConnCard struct {
	connID string
	event  any
}

func newConnectionManager(d *shared) *ConnectionManager {
	return &ConnectionManager{d: d, children: map[string]*actor.PID{}, records: map[string]messages.Connection{}, cards: map[string]pendingConnCard{}}
}

// connectionsLoaded carries the stored records at start.
type connectionsLoaded struct {
	recs []messages.Connection
	err  error
}

// Receive handles requests, routing and the children's reports.
func (m *ConnectionManager) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *actor.Started:
		m.load(c)
	case *connectionsLoaded:
		m.onLoaded(c, msg)
	case *ProposeConnection:
		m.onPropose(c, msg)
	case *ListConnections:
		c.Respond(m.list())
	case *RemoveConnection:
		m.toChild(c, msg.ID)
	case *CheckConnection:
		m.toChild(c, msg.ID)
	case *SecretStored:
		if id, ok := strings.CutSuffix(msg.RefID, credentialRefSuffix); ok {
			if pid := m.children[id]; pid != nil {
				c.Send(pid, msg)
			}
		}
	case *ConnectionCardAnswer:
		m.onCardAnswer(c, msg)
	case *connUsed:
		m.onConnUsed(c, msg)
	case *permissionAsk:
		m.onPermissionAsk(c, msg)
	case *messages.ApprovalResponse:
		m.onApproval(c, msg)
	case *connCardsFor:
		for _, id := range m.order {
			send(msg.sink, m.cards[id].event)
		}
	case *connChanged:
		m.records[msg.rec.ConnectionID] = msg.rec
		m.d.conns.set(msg.rec)
	case *connCard:
		m.onCard(msg)
	case *connToOwner:
		m.toOwner(c, msg.events...)
	case *connGone:
		m.forget(c, msg.id)
	case *messages.ScopeRef:
		if msg.ScopeID == m.d.Config.OwnerID && msg.PID != nil && len(m.outbox) > 0 {
			c.Send(msg.PID, &ownerBroadcast{events: m.outbox})
			m.outbox = nil
		}
	}
}

func (m *ConnectionManager) load(c actor.Context) {
	self, root, db := c.Self(), m.d.sys.Root, m.d.DB
	fail := func(err error) { root.Send(self, &connectionsLoaded{err: err}) }
	if !m.d.tasks.Go("load connections", func(ctx context.Context) {
		recs, err := db.Connections().List(ctx)
		root.Send(self, &connectionsLoaded{recs: recs, err: err})
	}, fail) {
		fail(errShuttingDown)
	}
}

func (m *ConnectionManager) onLoaded(c actor.Context, msg *connectionsLoaded) {
	if msg.err != nil {
		m.d.Log.Error().Err(msg.err).Msg("load the service connections; none runs until Silas restarts")
		return
	}
	for _, rec := range msg.recs {
		m.spawn(c, rec, false)
	}
}

// spawn starts the child of rec; fresh children run discovery first.
func (m *ConnectionManager) spawn(c actor.Context, rec messages.Connection, fresh bool) *actor.PID {
	d := m.d
	props := actor.PropsFromProducer(func() actor.Actor { return newServiceConnection(d, rec, fresh) }, d.props...)
	pid, err := c.SpawnNamed(props, rec.ConnectionID)
	if err != nil {
		d.Log.Error().Err(err).Str("connection", rec.ConnectionID).Msg("start a service connection")
		return nil
	}
	m.children[rec.ConnectionID] = pid
	m.records[rec.ConnectionID] = rec
	d.conns.set(rec)
	return pid
}

// onPropose checks the skill and starts a new connection's child.
func (m *ConnectionManager) onPropose(c actor.Context, p *ProposeConnection) {
	answer := func(a *ConnectionAnswer) {
		if c.Sender() != nil {
			c.Respond(a)
		}
	}
	var snap *skills.Snapshot
	if m.d.Skills != nil {
		snap = m.d.Skills()
	}
	if snap == nil || snap.Catalog == nil {
		answer(&ConnectionAnswer{Err: fmt.Errorf("connect with %s: %w; no skills are loaded", p.Skill, ErrNotConnectionSkill)})
		return
	}
	e, ok := snap.Catalog.Get(p.Skill)
	if !ok || e.Skill.Connection == nil {
		answer(&ConnectionAnswer{Err: fmt.Errorf("connect with %q: %w; `silas skills list` shows the installed ones (type connection)", p.Skill, ErrNotConnectionSkill)})
		return
	}
	sk := e.Skill
	id := "cn-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:20]
	name := p.Name
	if name == "" {
		name = sk.UI.DisplayName
	}
	if name == "" {
		name = sk.Name
	}
	perms := slices.Clone(p.Permissions)
	if len(perms) == 0 {
		perms = []messages.ConnectionPermission{messages.PermissionObserve}
	}
	now := m.d.now()
	rec := messages.Connection{
		ConnectionID: id, Name: name, Domain: p.Domain, SkillName: sk.Name,
		AuthStrategy: messages.AuthStrategy(sk.Connection.AuthStrategy), Permissions: perms,
		PermissionsGranted: []string{}, PermissionsAvailable: slices.Clone(sk.Connection.AvailablePermissions),
		InitialPermissions: slices.Clone(sk.Connection.InitialPermissions), Status: messages.ConnectionProposed,
		HealthCheck: m.d.Config.Connections.HealthCheckDefault, CredentialRef: id + credentialRefSuffix,
		Settings: p.Settings, CreatedAt: now, UpdatedAt: now,
	}
	if rec.Settings == nil {
		rec.Settings = map[string]any{}
	}
	if p.IdentityHint != nil {
		rec.Settings["identity_hint"] = p.IdentityHint
	}
	if err := rec.Validate(); err != nil {
		answer(&ConnectionAnswer{Err: fmt.Errorf("connect with %s: %w", p.Skill, err)})
		return
	}
	if m.spawn(c, rec, true) == nil {
		answer(&ConnectionAnswer{Err: fmt.Errorf("connect with %s: could not start the connection; see the log", p.Skill)})
		return
	}
	answer(&ConnectionAnswer{Connection: rec.Summary()})
}

// credentialRefSuffix makes a connection's keystore ref from its id.
const credentialRefSuffix = "-cred"

// toChild forwards a request about one connection, keeping its sender.
func (m *ConnectionManager) toChild(c actor.Context, id string) {
	pid := m.children[id]
	if pid == nil {
		c.Respond(&ConnectionAnswer{Err: fmt.Errorf("connection %q: %w; `silas connections list` shows them", id, ErrNoSuchConnection)})
		return
	}
	c.Forward(pid)
}

func (m *ConnectionManager) list() *ConnectionList {
	out := &ConnectionList{Connections: make([]messages.ConnectionSummary, 0, len(m.records))}
	for _, r := range m.records {
		out.Connections = append(out.Connections, r.Summary())
	}
	slices.SortFunc(out.Connections, func(a, b messages.ConnectionSummary) int { return strings.Compare(a.ConnectionID, b.ConnectionID) })
	return out
}

func (m *ConnectionManager) onCard(msg *connCard) {
	if msg.event == nil {
		delete(m.cards, msg.requestID)
		if i := slices.Index(m.order, msg.requestID); i >= 0 {
			m.order = slices.Delete(m.order, i, i+1)
		}
		return
	}
	if _, ok := m.cards[msg.requestID]; !ok {
		m.order = append(m.order, msg.requestID)
	}
	m.cards[msg.requestID] = pendingConnCard{connID: msg.connID, event: msg.event}
}

func (m *ConnectionManager) onCardAnswer(c actor.Context, a *ConnectionCardAnswer) {
	card, ok := m.cards[a.RequestID]
	if pid := m.children[card.connID]; ok && pid != nil {
		c.Send(pid, a)
		return
	}
	send(a.Sink, webError(messages.CodeBadRequest, "no connection card is pending with request_id "+quote(a.RequestID)+"; it was already answered or is gone", a.Type))
}

func (m *ConnectionManager) onApproval(c actor.Context, a *messages.ApprovalResponse) {
	card, ok := m.cards[a.RequestID]
	if pid := m.children[card.connID]; ok && pid != nil {
		c.Send(pid, a)
		return
	}
	send(a.Sink, webError(messages.CodeBadRequest, "no approval is pending with request_id "+quote(a.RequestID)+"; it was already answered or timed out", messages.TypeApprovalResponse))
}

// toOwner sends events to every owner connection, through the owner scope.
func (m *ConnectionManager) toOwner(c actor.Context, events ...any) {
	m.outbox = append(m.outbox, events...)
	c.Request(m.d.stream, &messages.ScopeFor{ScopeID: m.d.Config.OwnerID, Kind: messages.ScopeOwner})
}

func (m *ConnectionManager) forget(c actor.Context, id string) {
	if pid := m.children[id]; pid != nil {
		c.Stop(pid)
	}
	delete(m.children, id)
	delete(m.records, id)
	m.d.conns.remove(id)
	for _, rid := range slices.Clone(m.order) {
		if m.cards[rid].connID == id {
			m.onCard(&connCard{requestID: rid})
		}
	}
}

// connCardPrefix starts the request id of every connection card, so that
// the owner scope can route answers without asking around.
const connCardPrefix = "conn-"

// isConnCard reports whether an approval response belongs to a connection.
func isConnCard(requestID string) bool { return strings.HasPrefix(requestID, connCardPrefix) }

// connRegistry is the active connections by id and by skill, for attempts
// that run a connection skill's scripts. The manager writes it; attempts'
// tool goroutines read it.
type connRegistry struct {
	mu   sync.RWMutex
	byID map[string]messages.Connection
}

func newConnRegistry() *connRegistry { return &connRegistry{byID: map[string]messages.Connection{}} }

func (r *connRegistry) set(c messages.Connection) {
	r.mu.Lock()
	r.byID[c.ConnectionID] = c
	r.mu.Unlock()
}

func (r *connRegistry) remove(id string) {
	r.mu.Lock()
	delete(r.byID, id)
	r.mu.Unlock()
}

// active returns the active connection of skill (the oldest, when there
// are several), or false.
func (r *connRegistry) active(skill string) (messages.Connection, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var best messages.Connection
	found := false
	for _, c := range r.byID {
		if c.SkillName == skill && c.Status == messages.ConnectionActive && (!found || c.CreatedAt.Before(best.CreatedAt)) {
			best, found = c, true
		}
	}
	return best, found
}
