package connection

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/silas-ai/silas/messages"
)

// The messages of the script protocol (spec 5.10.1, docs/connections.md).

// Start is the first line setup.py reads.
type Start struct {
	Type               string         `json:"type"` // "start"
	AuthStrategy       string         `json:"auth_strategy"`
	InitialPermissions []string       `json:"initial_permissions"`
	IncrementalScopes  []string       `json:"incremental_scopes"`
	IdentityHint       map[string]any `json:"identity_hint"`
	Settings           map[string]any `json:"settings"`
}

// StepResult answers an await_input.
type StepResult struct {
	Type    string         `json:"type"` // "step_result"
	StepID  string         `json:"step_id"`
	Payload map[string]any `json:"payload"`
}

// Cancel asks setup.py to clean up and exit.
type Cancel struct {
	Type   string `json:"type"` // "cancel"
	Reason string `json:"reason"`
}

// NewStart, NewStepResult and NewCancel build the lines with their type.
func NewStart(s Start) Start { s.Type = "start"; return s }

// NewStepResult builds a step_result line.
func NewStepResult(stepID string, payload map[string]any) StepResult {
	return StepResult{Type: "step_result", StepID: stepID, Payload: payload}
}

// NewCancel builds a cancel line.
func NewCancel(reason string) Cancel { return Cancel{Type: "cancel", Reason: reason} }

// Setup event types a script emits.
const (
	EventSetupStep  = "setup_step"
	EventAwaitInput = "await_input"
	EventCompletion = "completion"
	EventFailure    = "failure"
	EventLog        = "log"
)

// SetupEvent is one line setup.py printed.
type SetupEvent struct {
	Type       string                      `json:"type"`
	StepID     string                      `json:"step_id,omitempty"`
	Step       *messages.SetupStep         `json:"step,omitempty"`
	Completion *Completion                 `json:"connection_payload,omitempty"`
	Failure    *messages.ConnectionFailure `json:"failure,omitempty"`
	Level      string                      `json:"level,omitempty"`
	Message    string                      `json:"message,omitempty"`
}

// Completion is the connection_payload of a completion event.
type Completion struct {
	Success               bool       `json:"success"`
	Summary               string     `json:"summary"`
	PermissionsGranted    []string   `json:"permissions_granted"`
	Account               string     `json:"account"`
	TokenExpiresAt        *time.Time `json:"token_expires_at"`
	RefreshTokenExpiresAt *time.Time `json:"refresh_token_expires_at"`
}

// maxStepID bounds step ids.
const maxStepID = 64

// DecodeSetupEvent decodes and checks one line of setup.py. Unknown fields
// are refused, so that a script cannot smuggle data past the checks.
func DecodeSetupEvent(line []byte) (SetupEvent, error) {
	var ev SetupEvent
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return ev, fmt.Errorf("not a setup event: %w", err)
	}
	if len(ev.StepID) > maxStepID {
		return ev, fmt.Errorf("step_id longer than %d characters", maxStepID)
	}
	switch ev.Type {
	case EventSetupStep:
		if ev.StepID == "" || ev.Step == nil {
			return ev, fmt.Errorf("setup_step needs step_id and step")
		}
		if err := ev.Step.Validate(); err != nil {
			return ev, err
		}
	case EventAwaitInput:
		if ev.StepID == "" {
			return ev, fmt.Errorf("await_input needs step_id")
		}
	case EventCompletion:
		if ev.Completion == nil {
			return ev, fmt.Errorf("completion needs connection_payload")
		}
		if len(ev.Completion.Summary) > 2000 || len(ev.Completion.Account) > 200 || len(ev.Completion.PermissionsGranted) > 100 {
			return ev, fmt.Errorf("completion payload too large")
		}
	case EventFailure:
		if ev.Failure == nil {
			return ev, fmt.Errorf("failure needs failure")
		}
		if err := ev.Failure.Validate(); err != nil {
			return ev, err
		}
	case EventLog:
		if len(ev.Message) > 2000 {
			ev.Message = ev.Message[:2000]
		}
	default:
		return ev, fmt.Errorf("unknown setup event type %q", ev.Type)
	}
	return ev, nil
}

// Discover is discover.py's request.
type Discover struct {
	Type         string         `json:"type"` // "discover"
	IdentityHint map[string]any `json:"identity_hint"`
	Settings     map[string]any `json:"settings"`
}

// DiscoverResult is discover.py's answer.
type DiscoverResult struct {
	AuthStrategy       string                      `json:"auth_strategy"`
	Provider           string                      `json:"provider"`
	IdentityMatch      bool                        `json:"identity_match"`
	TenantType         string                      `json:"tenant_type"`
	InitialPermissions []string                    `json:"initial_permissions"`
	SetupRequirements  map[string]bool             `json:"setup_requirements"`
	Failure            *messages.ConnectionFailure `json:"failure"`
}

// RefreshResult is refresh_token.py's answer.
type RefreshResult struct {
	Success               bool                        `json:"success"`
	NewExpiresAt          *time.Time                  `json:"new_expires_at"`
	RefreshTokenExpiresAt *time.Time                  `json:"refresh_token_expires_at"`
	Failure               *messages.ConnectionFailure `json:"failure"`
}

// RecoverResult is recover.py's answer.
type RecoverResult struct {
	Success bool                        `json:"success"`
	Failure *messages.ConnectionFailure `json:"failure"`
}

// ProbeResult is probe.py's answer; its other fields are the service's.
type ProbeResult struct {
	OK      bool                        `json:"ok"`
	Summary string                      `json:"summary"`
	Failure *messages.ConnectionFailure `json:"failure"`
}
