package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/go-co-op/gocron/v2"
	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/access"
	"github.com/silas-ai/silas/runtime/approval"
	"github.com/silas-ai/silas/runtime/embed"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/runtime/keys"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/metrics"
	"github.com/silas-ai/silas/runtime/personality"
	"github.com/silas-ai/silas/runtime/session"
	"github.com/silas-ai/silas/runtime/verify"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/executor"
	"github.com/silas-ai/silas/skills"
)

// Deps are what the actors need from the rest of the process.
type Deps struct {
	Config *config.Config
	DB     *persistence.DB
	Models *llm.Router
	// VerifyOwnerSignature checks a signature by the owner key or an
	// enrolled, unrevoked device key.
	VerifyOwnerSignature func(msg, sig []byte) (keyID string, ok bool)
	// OwnerToken is the token owner connections authenticate with.
	OwnerToken string
	Sessions   *session.Minter
	// Gates evaluates gate lanes and SystemGates are config gates.system;
	// with a nil Gates no gate runs (tests of other stages).
	Gates       *gates.Runner
	SystemGates []messages.Gate
	// Persona and PersonaStore run and keep each scope's personality; with
	// a nil Persona no directives are rendered.
	Persona      *personality.Engine
	PersonaStore personality.Store
	// Approval issues and verifies plan approval tokens; Sandbox runs work
	// item attempts, Executors their tool calls and Verifier the checks of
	// a work item in a sandbox of its own. With any of them nil, plans are
	// never executed: the owner is told execution is not available.
	Approval *approval.Engine
	Sandbox  sandbox.Manager
	// Skills returns the daemon's current skills: the catalog and what each
	// install approval bound. Nil means no skills: a plan that lists one is
	// refused.
	Skills func() *skills.Snapshot
	// SkillInstaller configures the actor that installs and removes skills
	// (spec 10.4); nil: none runs and installs are refused.
	SkillInstaller *SkillInstallerOptions
	// Vault holds connections' credentials and the secure-input requests;
	// nil: connections cannot be set up.
	Vault *keys.Vault
	// SandboxStatus says which backend Sandbox is, for the owner's app.
	SandboxStatus messages.SandboxStatus
	Executors     *executor.Registry
	Verifier      *verify.Runner
	Metrics       *metrics.Registry
	Log           zerolog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Goal is the active goal (config active_goal), nil when none. Its
	// access_levels decide the tools of chatbot customers and its gates
	// run on their turns; the owner bypasses both.
	Goal *messages.WorkItem

	// Notifier pushes a notification of a card asked while no owner
	// connection is open (push.go); nil: none is sent.
	Notifier Notifier

	// Embedder embeds memories and memory queries for semantic search
	// (spec 6.2; silas.memory.embedding_model); nil: memory is searched by
	// keywords, time and recency only.
	Embedder embed.Embedder

	// cronOptions are the goal Scheduler's gocron options: tests pass a
	// fake clock (gocron.WithClock).
	cronOptions []gocron.SchedulerOption
}

// shared is what every actor of one system reads; nothing in it changes
// after Start.
type shared struct {
	Deps
	sys   *actor.ActorSystem
	tasks *tasks
	// dispatch runs the actors' mailboxes (workers.go).
	dispatch *workers
	audit    *actor.PID
	stream   *actor.PID
	admit    *admission
	metrics  *metrics.Standard
	props    []actor.PropsOption
	// formats are the structured-output formats by schema name, built once:
	// reading and compacting an embedded schema on every call is not free.
	formats map[string]*llm.ResponseFormat
	// access is the compiled access policy every scope's controller shares.
	access *access.Policy
	// skills is the SkillInstaller, nil without one.
	skills *actor.PID
	// connections is the ConnectionManager; conns its registry of
	// connections, which attempts read.
	connections *actor.PID
	conns       *connRegistry
	// pool bounds the projects' tasks running at once (project_pool.go).
	pool *executorPool
	// vectors is the index of memory embeddings and vectorWriter the
	// actor that fills it (memory_vectors.go); nil without an Embedder.
	vectors      *persistence.VectorIndex
	vectorWriter *actor.PID
	// loc is the owner's time zone (scheduler.timezone), in which memory
	// queries' times are read.
	loc *time.Location
}

func (s *shared) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// canExecute reports whether plans can run: every execution dependency is set.
func (s *shared) canExecute() bool {
	return s.Approval != nil && s.Sandbox != nil && s.Executors != nil && s.Verifier != nil
}
