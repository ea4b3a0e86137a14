package messages

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The connection models of spec 2.5 and 3.12. Connection skills' scripts
// produce the setup steps, health results and failures as JSON; the
// ConnectionManager decodes them into these types and checks them with
// Validate before anything reaches a channel or the store.

// ErrInvalidConnection wraps every validation failure of this file.
var ErrInvalidConnection = errors.New("invalid connection data")

// AuthStrategy is how a connection authenticates (spec 3.12).
type AuthStrategy string

// Auth strategies.
const (
	AuthDeviceCode      AuthStrategy = "device_code"
	AuthBrowserRedirect AuthStrategy = "browser_redirect"
	AuthSecureInput     AuthStrategy = "secure_input"
)

// Valid reports whether a is one of the three strategies.
func (a AuthStrategy) Valid() bool {
	return a == AuthDeviceCode || a == AuthBrowserRedirect || a == AuthSecureInput
}

// ConnectionStatus is a connection's lifecycle state (spec 2.5).
type ConnectionStatus string

// Connection statuses.
const (
	ConnectionProposed   ConnectionStatus = "proposed"
	ConnectionConnecting ConnectionStatus = "connecting"
	ConnectionActive     ConnectionStatus = "active"
	ConnectionPaused     ConnectionStatus = "paused"
	ConnectionFailed     ConnectionStatus = "failed"
)

// ConnectionPermission is a Silas-level permission tier (spec 2.5).
type ConnectionPermission string

// Permission tiers, weakest first.
const (
	PermissionObserve ConnectionPermission = "observe"
	PermissionDraft   ConnectionPermission = "draft"
	PermissionAct     ConnectionPermission = "act"
	PermissionManage  ConnectionPermission = "manage"
)

// Connection is a service connection's record (spec 2.5). Its ID lives in
// its own namespace ("cn-..."), never a channel session id. It holds no
// credential: CredentialRef names the keystore entry.
type Connection struct {
	ConnectionID         string                 `json:"connection_id"`
	Name                 string                 `json:"name"`
	Domain               string                 `json:"domain"`
	SkillName            string                 `json:"skill_name"`
	AuthStrategy         AuthStrategy           `json:"auth_strategy"`
	Permissions          []ConnectionPermission `json:"permissions"`
	PermissionsGranted   []string               `json:"permissions_granted"`
	PermissionsAvailable []string               `json:"permissions_available"`
	InitialPermissions   []string               `json:"initial_permissions"`
	Status               ConnectionStatus       `json:"status"`
	HealthCheck          string                 `json:"health_check"`
	TokenExpiresAt       *time.Time             `json:"token_expires_at"`
	RefreshExpiresAt     *time.Time             `json:"refresh_token_expires_at"`
	LastHealthCheck      *time.Time             `json:"last_health_check"`
	LastRefresh          *time.Time             `json:"last_refresh"`

	// CredentialRef is the keystore ref_id of the connection's credential.
	CredentialRef string `json:"credential_ref"`
	// Settings are the non-secret settings its scripts get
	// (SILAS_CONNECTION_SETTINGS): endpoints, client id, scopes.
	Settings map[string]any `json:"settings"`
	// Account is who the service says the credential belongs to.
	Account string `json:"account,omitempty"`
	// LastUsed is when a work item last ran one of its scripts.
	LastUsed *time.Time `json:"last_used,omitempty"`
	// LastError is the last failure's message, shown in lists.
	LastError string    `json:"last_error,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// MaxConnectionIDLen bounds connection ids (they go into keys and URLs).
const MaxConnectionIDLen = 64

// ValidConnectionID reports whether id can name a service connection:
// "cn-" then letters, digits and hyphens. The prefix keeps the namespace
// apart from channel session ids.
func ValidConnectionID(id string) error {
	if !strings.HasPrefix(id, "cn-") || len(id) <= 3 || len(id) > MaxConnectionIDLen {
		return fmt.Errorf("%w: connection id %q: want cn- followed by 1 to %d letters, digits or hyphens", ErrInvalidConnection, id, MaxConnectionIDLen-3)
	}
	for _, c := range id[3:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("%w: connection id %q: only letters, digits and hyphens after cn-", ErrInvalidConnection, id)
		}
	}
	return nil
}

// Validate checks the record before it is stored.
func (c *Connection) Validate() error {
	if err := ValidConnectionID(c.ConnectionID); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(c.Name) == "" || len(c.Name) > 200:
		return fmt.Errorf("%w: connection %s: name must be 1 to 200 characters", ErrInvalidConnection, c.ConnectionID)
	case c.SkillName == "":
		return fmt.Errorf("%w: connection %s: skill_name is required", ErrInvalidConnection, c.ConnectionID)
	case !c.AuthStrategy.Valid():
		return fmt.Errorf("%w: connection %s: auth_strategy %q", ErrInvalidConnection, c.ConnectionID, c.AuthStrategy)
	case c.CredentialRef == "":
		return fmt.Errorf("%w: connection %s: credential_ref is required", ErrInvalidConnection, c.ConnectionID)
	}
	switch c.Status {
	case ConnectionProposed, ConnectionConnecting, ConnectionActive, ConnectionPaused, ConnectionFailed:
	default:
		return fmt.Errorf("%w: connection %s: status %q", ErrInvalidConnection, c.ConnectionID, c.Status)
	}
	return nil
}

// RecoveryOption is one way out of a ConnectionFailure (spec 3.12).
type RecoveryOption struct {
	Action      string `json:"action"`
	Label       string `json:"label"`
	Description string `json:"description"`
	RiskLevel   string `json:"risk_level"`
}

// Failure types of a ConnectionFailure.
const (
	FailureEnterprisePolicyBlock = "enterprise_policy_block"
	FailureConsentDenied         = "consent_denied"
	FailureMFARequired           = "mfa_required"
	FailureRateLimited           = "rate_limited"
	FailureServiceUnavailable    = "service_unavailable"
	FailureTokenRevoked          = "token_revoked"
	FailureUnknown               = "unknown"
)

var failureTypes = []string{FailureEnterprisePolicyBlock, FailureConsentDenied, FailureMFARequired,
	FailureRateLimited, FailureServiceUnavailable, FailureTokenRevoked, FailureUnknown}

// ConnectionFailure is a structured failure with recovery options (spec
// 3.12), as a connection script reports it.
type ConnectionFailure struct {
	FailureType     string           `json:"failure_type"`
	Service         string           `json:"service"`
	Message         string           `json:"message"`
	RecoveryOptions []RecoveryOption `json:"recovery_options"`
}

// Limits of text that scripts put on cards.
const (
	maxCardText    = 2000
	maxRecoveryOpt = 8
)

// Validate checks a failure a script reported.
func (f *ConnectionFailure) Validate() error {
	if !slices.Contains(failureTypes, f.FailureType) {
		return fmt.Errorf("%w: failure_type %q: want one of %s", ErrInvalidConnection, f.FailureType, strings.Join(failureTypes, ", "))
	}
	if len(f.Message) > maxCardText || len(f.Service) > 200 {
		return fmt.Errorf("%w: failure message or service too long", ErrInvalidConnection)
	}
	if len(f.RecoveryOptions) > maxRecoveryOpt {
		return fmt.Errorf("%w: at most %d recovery options", ErrInvalidConnection, maxRecoveryOpt)
	}
	for _, o := range f.RecoveryOptions {
		if o.Action == "" || o.Label == "" || len(o.Label) > 200 || len(o.Description) > 500 {
			return fmt.Errorf("%w: a recovery option needs an action and a label of at most 200 characters", ErrInvalidConnection)
		}
		switch o.RiskLevel {
		case "", "low", "medium", "high":
		default:
			return fmt.Errorf("%w: recovery option %s: risk_level %q", ErrInvalidConnection, o.Action, o.RiskLevel)
		}
	}
	return nil
}

// SecureInputGuidance is rendered by the channel next to a secure form.
type SecureInputGuidance struct {
	Instructions string  `json:"instructions"`
	HelpURL      *string `json:"help_url"`
}

// SecureInputRequest asks the owner for a secret through the secure form
// (spec 3.12); the value never crosses the WebSocket.
type SecureInputRequest struct {
	RefID     string              `json:"ref_id"`
	Label     string              `json:"label"`
	InputHint *string             `json:"input_hint"`
	Guidance  SecureInputGuidance `json:"guidance"`
}

// SecureInputCompleted is all the runtime learns of a secure input: that
// the value of RefID was stored, or not.
type SecureInputCompleted struct {
	RefID   string `json:"ref_id"`
	Success bool   `json:"success"`
}

// Setup step types (spec 3.12 SetupStep).
const (
	StepDeviceCode      = "device_code"
	StepBrowserRedirect = "browser_redirect"
	StepSecureInput     = "secure_input"
	StepProgress        = "progress"
	StepCompletion      = "completion"
	StepFailure         = "failure"
)

// SetupStep is the discriminated union a setup script emits; Type selects
// which fields are meaningful.
type SetupStep struct {
	Type string `json:"type"`
	// device_code
	VerificationURL string `json:"verification_url,omitempty"`
	UserCode        string `json:"user_code,omitempty"`
	ExpiresIn       int    `json:"expires_in,omitempty"`
	PollInterval    int    `json:"poll_interval,omitempty"`
	// browser_redirect
	AuthURL     string `json:"auth_url,omitempty"`
	ListeningOn string `json:"listening_on,omitempty"`
	// secure_input
	Request *SecureInputRequest `json:"request,omitempty"`
	// progress
	Message     string   `json:"message,omitempty"`
	ProgressPct *float64 `json:"progress_pct,omitempty"`
	// completion
	Success            bool     `json:"success,omitempty"`
	Summary            string   `json:"summary,omitempty"`
	PermissionsGranted []string `json:"permissions_granted,omitempty"`
	// failure
	Failure *ConnectionFailure `json:"failure,omitempty"`
}

// Validate checks a step a setup script emitted. URLs must be http(s);
// plain http only for loopback, so a card never links the owner to an
// unencrypted page elsewhere.
func (s *SetupStep) Validate() error {
	switch s.Type {
	case StepDeviceCode:
		if err := cardURL(s.VerificationURL); err != nil {
			return fmt.Errorf("device_code step: verification_url: %w", err)
		}
		if s.UserCode == "" || len(s.UserCode) > 64 || s.ExpiresIn <= 0 || s.PollInterval < 0 {
			return fmt.Errorf("%w: device_code step needs user_code (at most 64 characters) and a positive expires_in", ErrInvalidConnection)
		}
	case StepBrowserRedirect:
		if err := cardURL(s.AuthURL); err != nil {
			return fmt.Errorf("browser_redirect step: auth_url: %w", err)
		}
		if !loopbackHostPort(s.ListeningOn) {
			return fmt.Errorf("%w: browser_redirect step: listening_on %q must be 127.0.0.1:<port> or localhost:<port>", ErrInvalidConnection, s.ListeningOn)
		}
	case StepSecureInput:
		if s.Request == nil || s.Request.RefID == "" || s.Request.Label == "" || len(s.Request.Label) > 200 || len(s.Request.Guidance.Instructions) > maxCardText {
			return fmt.Errorf("%w: secure_input step needs request.ref_id and a label of at most 200 characters", ErrInvalidConnection)
		}
	case StepProgress:
		if len(s.Message) > maxCardText {
			return fmt.Errorf("%w: progress message too long", ErrInvalidConnection)
		}
	case StepCompletion:
		if len(s.Summary) > maxCardText {
			return fmt.Errorf("%w: completion summary too long", ErrInvalidConnection)
		}
	case StepFailure:
		if s.Failure == nil {
			return fmt.Errorf("%w: failure step needs failure", ErrInvalidConnection)
		}
		return s.Failure.Validate()
	default:
		return fmt.Errorf("%w: setup step type %q", ErrInvalidConnection, s.Type)
	}
	return nil
}

func cardURL(u string) error {
	switch {
	case strings.HasPrefix(u, "https://") && len(u) > len("https://"):
	case strings.HasPrefix(u, "http://127.0.0.1") || strings.HasPrefix(u, "http://localhost") || strings.HasPrefix(u, "http://[::1]"):
	default:
		return fmt.Errorf("%w: %q: want an https URL (http only on loopback)", ErrInvalidConnection, u)
	}
	if len(u) > 4096 || strings.ContainsAny(u, " \n\r\t\"<>") {
		return fmt.Errorf("%w: the URL is too long or holds spaces or quotes", ErrInvalidConnection)
	}
	return nil
}

func loopbackHostPort(s string) bool {
	for _, p := range []string{"127.0.0.1:", "localhost:"} {
		if port, ok := strings.CutPrefix(s, p); ok && port != "" && len(port) <= 5 && strings.Trim(port, "0123456789") == "" {
			return true
		}
	}
	return false
}

// HealthCheckResult is what health_check.py reports (spec 3.12).
type HealthCheckResult struct {
	Healthy          bool       `json:"healthy"`
	TokenExpiresAt   *time.Time `json:"token_expires_at"`
	RefreshExpiresAt *time.Time `json:"refresh_token_expires_at"`
	LatencyMS        int        `json:"latency_ms"`
	Error            *string    `json:"error"`
	Warnings         []string   `json:"warnings"`
}

// Connection events the server sends to the owner (spec 8.1). Each card
// carries the request_id its answer names.
const (
	EventConnectionSetupStep    = "connection_setup_step"
	EventConnectionFailure      = "connection_failure"
	EventSecureInputRequest     = "secure_input_request"
	EventConnectionStatus       = "connection_status"
	EventPermissionEscalation   = "permission_escalation"
	ConnectionSetupActionDone   = "done"
	ConnectionSetupActionCancel = "cancel"
)

// ConnectionSetupStepEvent is a setup step's card.
type ConnectionSetupStepEvent struct {
	Type         string `json:"type"`
	RequestID    string `json:"request_id"`
	ConnectionID string `json:"connection_id"`
	Service      string `json:"service"`
	StepType     string `json:"step_type"`
	SetupStep
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RiskLevel string     `json:"risk_level"`
	// Card is the card contract of spec 0.5.3 (runtime/review).
	Card *CardContract `json:"card,omitempty"`
}

// ConnectionFailureEvent is a ConnectionFailureCard.
type ConnectionFailureEvent struct {
	Type         string `json:"type"`
	RequestID    string `json:"request_id"`
	ConnectionID string `json:"connection_id"`
	ConnectionFailure
	RiskLevel string `json:"risk_level"`
	// Card is the card contract of spec 0.5.3 (runtime/review).
	Card *CardContract `json:"card,omitempty"`
}

// SecureInputRequestEvent asks the owner's app for a secret.
type SecureInputRequestEvent struct {
	Type         string             `json:"type"`
	RefID        string             `json:"ref_id"`
	ConnectionID string             `json:"connection_id"`
	Request      SecureInputRequest `json:"request"`
}

// ConnectionStatusEvent tells the owner a connection's status changed.
type ConnectionStatusEvent struct {
	Type         string           `json:"type"`
	ConnectionID string           `json:"connection_id"`
	Name         string           `json:"name"`
	Status       ConnectionStatus `json:"status"`
	Detail       string           `json:"detail,omitempty"`
}

// ConnectionApprovalEvent is the card that asks the owner whether to
// connect (spec 5.10.1 step 2): an approval_request of scope
// connection_manage. Its risk is medium for read-only access, high for
// anything that can act.
type ConnectionApprovalEvent struct {
	Type       string            `json:"type"` // approval_request
	RequestID  string            `json:"request_id"`
	Scope      ApprovalScope     `json:"scope"`
	Title      string            `json:"title"`
	Body       string            `json:"body"`
	RiskLevel  string            `json:"risk_level"`
	ExpiresAt  time.Time         `json:"expires_at"`
	Connection ConnectionSummary `json:"connection"`
	// Card is the card contract of spec 0.5.3 (runtime/review).
	Card *CardContract `json:"card,omitempty"`
}

// ConnectionSummary is what the owner's surfaces show of a connection:
// never its credential ref's value, never a credential.
type ConnectionSummary struct {
	ConnectionID       string                 `json:"connection_id"`
	Name               string                 `json:"name"`
	SkillName          string                 `json:"skill_name"`
	Provider           string                 `json:"provider,omitempty"`
	AuthStrategy       AuthStrategy           `json:"auth_strategy"`
	Status             ConnectionStatus       `json:"status"`
	Permissions        []ConnectionPermission `json:"permissions"`
	PermissionsGranted []string               `json:"permissions_granted"`
	RequestedScopes    []string               `json:"requested_scopes,omitempty"`
	Account            string                 `json:"account,omitempty"`
	TokenExpiresAt     *time.Time             `json:"token_expires_at,omitempty"`
	LastHealthCheck    *time.Time             `json:"last_health_check,omitempty"`
	LastError          string                 `json:"last_error,omitempty"`
}

// Summary returns what the owner's surfaces show of c.
func (c *Connection) Summary() ConnectionSummary {
	return ConnectionSummary{
		ConnectionID: c.ConnectionID, Name: c.Name, SkillName: c.SkillName, AuthStrategy: c.AuthStrategy, Status: c.Status,
		Permissions: c.Permissions, PermissionsGranted: c.PermissionsGranted, Account: c.Account,
		TokenExpiresAt: c.TokenExpiresAt, LastHealthCheck: c.LastHealthCheck, LastError: c.LastError,
	}
}

// PermissionEscalationEvent asks the owner for more access for a
// connection (spec 5.10.2): Approve, Just this once (a single-use token)
// or Deny.
type PermissionEscalationEvent struct {
	Type                 string    `json:"type"`
	RequestID            string    `json:"request_id"`
	ConnectionID         string    `json:"connection_id"`
	ConnectionName       string    `json:"connection_name"`
	CurrentPermissions   []string  `json:"current_permissions"`
	RequestedPermissions []string  `json:"requested_permissions"`
	Reason               string    `json:"reason"`
	RiskLevel            string    `json:"risk_level"`
	ExpiresAt            time.Time `json:"expires_at"`
	// Card is the card contract of spec 0.5.3 (runtime/review).
	Card *CardContract `json:"card,omitempty"`
}
