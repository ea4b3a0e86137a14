package ownerapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/session"
)

// Actors is what the owner API asks of the actor system: pending
// approvals, skill installs, connections, persona changes and the news
// that a secure input was stored. *actors.System implements it; tests pass
// a fake.
type Actors interface {
	PendingApprovals(ctx context.Context, ownerID string) ([]messages.ApprovalRequestEvent, error)
	SkillRequests(ctx context.Context) ([]messages.SkillInstallRequestEvent, []actors.SkillInstallOutcome, error)
	InstallSkill(ctx context.Context, req actors.InstallSkill) (*actors.SkillInstallAnswer, error)
	RemoveSkill(ctx context.Context, name string) (*actors.SkillRemoveAnswer, error)
	Connections(ctx context.Context) ([]messages.ConnectionSummary, error)
	ProposeConnection(ctx context.Context, p actors.ProposeConnection) (messages.ConnectionSummary, error)
	CheckConnection(ctx context.Context, id string) (messages.ConnectionSummary, error)
	RemoveConnection(ctx context.Context, id string) (messages.ConnectionSummary, error)
	Persona(ctx context.Context, scopeID string, kind messages.ScopeKind, op actors.PersonaOp) (messages.PersonaView, error)
	// SecretStored tells the connection manager a secure input was stored.
	SecretStored(refID string)
}

var _ Actors = (*actors.System)(nil)

// Vault stores the answer to a secure-input request; *keys.Vault
// implements it.
type Vault interface {
	Fulfil(ctx context.Context, ref string, value []byte) error
}

// Deps are what the handlers need. All are required but SkillsDir and
// Goals.
type Deps struct {
	// DB is the daemon's database: the audit chain (every change is
	// audited before it is answered), devices, secure inputs, owner
	// visits, skill records and backups.
	DB *persistence.DB
	// OwnerToken is the bearer token that opens the owner routes.
	OwnerToken string
	// OwnerID is the owner's scope: audit entries are written under it
	// and the activity feed filters by it.
	OwnerID string
	// Sessions verifies chatbot customers' session tokens: a customer
	// reaches the persona routes of its own scope, and gets 403 rather
	// than 401 from the owner routes.
	Sessions *session.Minter
	// Devices is the set of active owner device keys the device routes
	// change.
	Devices *DeviceRegistry
	// Vault stores secure-input values.
	Vault Vault
	// Actors is the actor system the approval, skill, connection and
	// persona routes ask.
	Actors Actors
	// SkillsDir is silas.skills_dir: `GET /skills` reads it as it is now,
	// not as the last snapshot saw it.
	SkillsDir string
	// Goals lists, pauses, resumes and removes the scheduled goals; nil
	// (a daemon that cannot execute plans) answers the goal routes with
	// 503.
	Goals Goals
	// PushKey is the VAPID public key browsers subscribe to notifications
	// with (package notify); empty: the push routes answer 503.
	PushKey string
}

// API serves the owner HTTP API; build it with New.
type API struct {
	d    Deps
	gate gate
}

// New checks d and returns the API. It starts nothing: the routes run only
// when the web channel serves them.
func New(d Deps) (*API, error) {
	missing := ""
	switch {
	case d.DB == nil:
		missing = "DB"
	case d.OwnerToken == "":
		missing = "OwnerToken"
	case d.OwnerID == "":
		missing = "OwnerID"
	case d.Sessions == nil:
		missing = "Sessions"
	case d.Devices == nil:
		missing = "Devices"
	case d.Vault == nil:
		missing = "Vault"
	case d.Actors == nil:
		missing = "Actors"
	}
	if missing != "" {
		return nil, fmt.Errorf("%w: Deps.%s is required", ErrIncomplete, missing)
	}
	return &API{d: d, gate: gate{token: d.OwnerToken, sessions: d.Sessions}}, nil
}

// Routes are the web channel's extra HTTP routes (web.Options.Extra): the
// persona endpoints (owner or customer) and the owner-only endpoints
// behind the owner gate.
func (a *API) Routes() map[string]fasthttp.RequestHandler {
	owner := map[string]fasthttp.RequestHandler{}
	maps.Copy(owner, a.deviceRoutes())
	maps.Copy(owner, a.secretRoutes())
	maps.Copy(owner, a.activityRoutes())
	maps.Copy(owner, a.uxRoutes())
	maps.Copy(owner, a.approvalRoutes())
	maps.Copy(owner, a.skillRoutes())
	maps.Copy(owner, a.connectionRoutes())
	maps.Copy(owner, a.backupRoutes())
	maps.Copy(owner, a.goalRoutes())
	maps.Copy(owner, a.webauthnRoutes())
	maps.Copy(owner, a.pushRoutes())
	routes := a.personaRoutes()
	for k, h := range owner {
		routes[k] = a.OwnerOnly(h)
	}
	return routes
}

// OwnerOnly puts h behind the owner gate, for owner routes the daemon
// serves next to these: the owner token passes, a customer's session
// token gets 403, anything else 401, and no answer is cached.
func (a *API) OwnerOnly(h fasthttp.RequestHandler) fasthttp.RequestHandler { return a.gate.wrap(h) }

// audit appends one entry to the audit chain. The chain's head is guarded
// by persistence, so writing next to the Audit actor keeps one chain; an
// HTTP answer is only given once its audit entry is durable.
func (a *API) audit(ctx context.Context, event string, data map[string]any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode audit %s: %w", event, err)
	}
	if _, err := a.d.DB.Audit().Append(ctx, persistence.AuditEntry{Event: event, Scope: a.d.OwnerID, Data: b}); err != nil {
		return fmt.Errorf("audit %s: %w", event, err)
	}
	return nil
}
