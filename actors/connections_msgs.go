package actors

import (
	"errors"
	"time"

	"github.com/silas-ai/silas/messages"
)

// Sentinel errors of the connection manager; match them with errors.Is.
var (
	// ErrConnectionsUnavailable means this process runs no
	// ConnectionManager (no sandbox or no approval engine): run the
	// daemon (`silas serve`) with an isolating sandbox.
	ErrConnectionsUnavailable = errors.New("connections are not available in this process")
	// ErrNotConnectionSkill means the skill is not installed or is not a
	// type: connection skill.
	ErrNotConnectionSkill = errors.New("not an installed connection skill")
	// ErrNoSuchConnection means no connection has that id.
	ErrNoSuchConnection = errors.New("no such connection")
	// ErrConnectionBusy means the connection is in a state that does not
	// allow the request (setting up, say); wait or cancel first.
	ErrConnectionBusy = errors.New("the connection is busy")
)

// ProposeConnection asks for a new service connection through a connection
// skill (spec 5.10.1): discovery, then the owner's connection_manage
// card, then the setup conversation. Sender: System.ProposeConnection (a
// future). Reply: *ConnectionAnswer once the connection is recorded
// (status proposed); the rest goes to the owner as cards.
type ProposeConnection struct {
	Skill string
	// Name labels the connection ("GitHub (octocat)"); default the
	// skill's display name.
	Name   string
	Domain string
	// Settings are the non-secret settings its scripts get: endpoints,
	// client id, scopes (docs/connections.md).
	Settings     map[string]any
	IdentityHint map[string]any
	// Permissions are the Silas-level tiers asked for; default observe.
	Permissions []messages.ConnectionPermission
}

// ConnectionAnswer answers ProposeConnection, RemoveConnection and
// CheckConnection.
type ConnectionAnswer struct {
	Connection messages.ConnectionSummary
	Err        error
}

// RemoveConnection removes a connection: its scripts stop, its credential
// and record go. Sender: System (a future). Reply: *ConnectionAnswer.
type RemoveConnection struct{ ID string }

// CheckConnection runs a connection's health check now (and refresh or
// recovery as its result asks). Sender: System (a future). Reply:
// *ConnectionAnswer with the connection as it is after the check.
type CheckConnection struct{ ID string }

// ListConnections asks for every connection. Sender: System (a future).
// Reply: *ConnectionList.
type ListConnections struct{}

// ConnectionList answers ListConnections, in id order.
type ConnectionList struct{ Connections []messages.ConnectionSummary }

// SecretStored tells the ConnectionManager that the owner stored the value
// of a pending secure-input request (POST /secrets/{ref_id}). Sender: the
// web handler, through System.SecretStored. The value never travels in a
// message: the connection reads it from the vault.
type SecretStored struct{ RefID string }

// ConnectionCardAnswer is the owner's answer to a connection card:
// connection_setup_response (Action), connection_failure_response
// (SelectedAction) or permission_escalation_response (Verdict). Sender: the owner's web
// Connection actor. Receiver: the ConnectionManager, which routes it to
// the connection the card belongs to.
type ConnectionCardAnswer struct {
	RequestID      string
	Type           string
	Action         string
	SelectedAction string
	// Verdict answers a permission_escalation card: approve,
	// just_this_once or deny.
	Verdict string
	// Confirmed is the rung of the risk ladder the answer climbed, as
	// messages.ApprovalResponse.Confirmed.
	Confirmed string
	Sink      messages.Sink
}

// connCardsFor asks the ConnectionManager to send its pending cards to an
// owner connection that just attached. Sender: the owner Scope.
type connCardsFor struct{ sink messages.Sink }

// Messages between the ConnectionManager and its ServiceConnection
// children.
type (
	// connChanged carries a child's record after every change. Receiver:
	// the manager, which keeps the registry attempts read.
	connChanged struct{ rec messages.Connection }
	// connCard opens (event set) or closes a card of a child.
	connCard struct {
		requestID string
		connID    string
		event     any // nil: the card is closed
	}
	// connToOwner asks the manager to send events to the owner.
	connToOwner struct{ events []any }
	// connGone tells the manager that a removed child finished.
	connGone struct{ id string }
	// healthTick starts a scheduled health check. Sender: a gocron job.
	healthTick struct{}
	// refreshTick starts a scheduled token refresh. Sender: a gocron job.
	refreshTick struct{}
)

// Timeouts of connection scripts when the configuration gives none
// (silas.connections.script_timeout_seconds, setup_timeout_seconds).
const (
	defaultScriptTimeout = 60 * time.Second
	defaultSetupTimeout  = 20 * time.Minute
	cancelGrace          = 5 * time.Second
	// refreshAhead is spec 5.10.3's refresh_ahead_window.
	refreshAhead = 10 * time.Minute
	// dormantAfter and refreshTokenSoon are spec 5.10.3's 30 and 7 days.
	dormantAfter     = 30 * 24 * time.Hour
	refreshTokenSoon = 7 * 24 * time.Hour
)
