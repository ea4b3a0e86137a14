package pipeline

import (
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/contextmgr"
	"github.com/silas-ai/silas/runtime/personality"
)

// Env is what the stages read besides the turn: the scope's context window
// (the one thing stages change) and the settings of the turn.
type Env struct {
	Window *contextmgr.Window

	// Profiles is the configured context profile registry (the window
	// holds the same registry); DefaultProfile names the one used when
	// routing falls back.
	Profiles       map[string]bool
	DefaultProfile string

	// Interaction-mode settings (config `interaction`) and the current
	// initiative axis.
	Initiative        float64
	HighInitiativeMin float64
	DefaultModes      map[messages.InteractionRegister]messages.InteractionMode

	// FreshWindow bounds how old a signed message's timestamp may be.
	FreshWindow time.Duration
	// VerifySignature checks an owner or enrolled-device signature over a
	// message's canonical bytes.
	VerifySignature func(msg, sig []byte) (keyID string, ok bool)

	// SystemGates are config gates.system; WorkGates the active work
	// item's gates (none until work items are wired); GoalEscalations the
	// active goal's escalation map (nil: built-in defaults only).
	SystemGates     []messages.Gate
	WorkGates       []messages.Gate
	GoalEscalations map[string]messages.EscalationAction
	// MaxGateEvals is limits.max_gate_evals_per_turn.
	MaxGateEvals int

	MaxMemoryOpsPerTurn int
	// RawIngest enables the low-reingestion lane (memory.raw_reingestion_enabled).
	RawIngest bool

	// Scorer guards the scorer model calls of step 5 (the scope owns it;
	// nil means the scorer tier is never tried).
	Scorer *contextmgr.Breaker

	// Persona renders directives and applies mood events; PersonaState is
	// the scope's state, which stages update in place. Nil disables both.
	Persona      *personality.Engine
	PersonaState *messages.PersonaState
	// PersonaMemo is the scope's last rendered directives, so that a turn
	// whose persona reads the same does not render them again.
	PersonaMemo personality.DirectiveMemo

	// OwnerScope is true in the owner's scope, the only one whose plans may
	// be approved and run (step 12).
	OwnerScope bool

	// WebSearch is true when web_search is configured (spec 9.2): only then
	// is it offered to the proxy, and only where the access level allows.
	WebSearch bool
	// MaxToolRounds bounds the proxy's tool loop: after that many rounds
	// of tool calls it must answer. Zero means DefaultMaxToolRounds.
	MaxToolRounds int

	ProxyInstructions   string
	PlannerInstructions string

	NewID func() string
}
