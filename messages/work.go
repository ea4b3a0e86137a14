package messages

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/robfig/cron/v3"

	"github.com/silas-ai/silas/runtime/canonical"
)

// FieldError is a validation error located at a field path such as
// "verify[0].expect" or "escalation.polite_redirect.message". Validate methods
// of the work and gate models return it, so that a parser can point at the
// line that holds the field. Test with errors.As.
type FieldError struct {
	// Path is the dotted field path, with [i] for list elements.
	Path string
	// Err says what is wrong with the field.
	Err error
}

// Error returns "path: reason".
func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the underlying reason.
func (e *FieldError) Unwrap() error { return e.Err }

// fieldErr places err under field: a FieldError inside err gets field
// prefixed to its path.
func fieldErr(field string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) && fe == err {
		sep := "."
		if strings.HasPrefix(fe.Path, "[") {
			sep = ""
		}
		return &FieldError{Path: field + sep + fe.Path, Err: fe.Err}
	}
	return &FieldError{Path: field, Err: err}
}

// WorkItemType determines how a work item executes (spec 3.3).
type WorkItemType string

// Work item types.
const (
	WorkTask    WorkItemType = "task"
	WorkProject WorkItemType = "project"
	WorkGoal    WorkItemType = "goal"
)

// Validate reports whether t is a defined type.
func (t WorkItemType) Validate() error {
	switch t {
	case WorkTask, WorkProject, WorkGoal:
		return nil
	}
	return fmt.Errorf("%q is not a work item type; want task, project or goal", string(t))
}

// WorkItemStatus is the runtime state of a work item (spec 3.3).
type WorkItemStatus string

// Work item statuses.
const (
	StatusPending WorkItemStatus = "pending"
	StatusRunning WorkItemStatus = "running"
	StatusHealthy WorkItemStatus = "healthy"
	StatusDone    WorkItemStatus = "done"
	StatusFailed  WorkItemStatus = "failed"
	StatusStuck   WorkItemStatus = "stuck"
	StatusBlocked WorkItemStatus = "blocked"
	StatusPaused  WorkItemStatus = "paused"
)

// Validate reports whether s is a defined status.
func (s WorkItemStatus) Validate() error {
	switch s {
	case StatusPending, StatusRunning, StatusHealthy, StatusDone, StatusFailed, StatusStuck, StatusBlocked, StatusPaused:
		return nil
	}
	return fmt.Errorf("%q is not a work item status; want pending, running, healthy, done, failed, stuck, blocked or paused", string(s))
}

// Final reports whether s may end an execution (WorkItemResult.status):
// done, healthy, failed, stuck or blocked.
func (s WorkItemStatus) Final() bool {
	switch s {
	case StatusDone, StatusHealthy, StatusFailed, StatusStuck, StatusBlocked:
		return true
	}
	return false
}

// AgentLane is the execution lane of a work item (WorkItem.agent).
type AgentLane string

// Agent lanes.
const (
	// AgentEphemeral items are executable work dispatched to the work item
	// executor in the configured sandbox backend.
	AgentEphemeral AgentLane = "ephemeral"
	// AgentStream items configure the long-lived Stream lane (for example
	// chatbot always_on goals) and are never dispatched as a task body.
	AgentStream AgentLane = "stream"
)

// ScheduleAlwaysOn is the WorkItem.schedule value of a continuously running goal.
const ScheduleAlwaysOn = "always_on"

// Defaults of the WorkItem model.
const (
	DefaultOnFailure       = "report"
	DefaultOnStuck         = "consult_planner"
	DefaultInteractionMode = ModeConfirmOnlyWhenRequired
)

// Budget holds the resource limits of a work item, enforced by the runtime
// (spec 3.3). Decoding JSON fills absent fields with DefaultBudget's values.
type Budget struct {
	MaxTokens          int     `json:"max_tokens"`
	MaxCostUSD         float64 `json:"max_cost_usd"`
	MaxWallTimeSeconds int     `json:"max_wall_time_seconds"`
	MaxAttempts        int     `json:"max_attempts"`
	MaxPlannerCalls    int     `json:"max_planner_calls"`
}

// DefaultBudget returns the spec's default budget: 200,000 tokens, 2.00 USD,
// 1800 s, 5 attempts, 3 planner calls.
func DefaultBudget() Budget {
	return Budget{MaxTokens: 200_000, MaxCostUSD: 2.00, MaxWallTimeSeconds: 1800, MaxAttempts: 5, MaxPlannerCalls: 3}
}

// UnmarshalJSON decodes a budget over the defaults.
func (b *Budget) UnmarshalJSON(data []byte) error {
	type plain Budget
	p := plain(DefaultBudget())
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*b = Budget(p)
	return nil
}

// Validate requires every limit to be positive: since BudgetUsed.Exceeds
// uses >=, a zero limit would exhaust the budget before the first action.
func (b *Budget) Validate() error {
	checks := []struct {
		name string
		ok   bool
	}{
		{"max_tokens", b.MaxTokens > 0},
		{"max_cost_usd", b.MaxCostUSD > 0 && finite(b.MaxCostUSD)},
		{"max_wall_time_seconds", b.MaxWallTimeSeconds > 0},
		{"max_attempts", b.MaxAttempts > 0},
		{"max_planner_calls", b.MaxPlannerCalls > 0},
	}
	for _, c := range checks {
		if !c.ok {
			return fieldErr(c.name, errors.New("must be positive"))
		}
	}
	return nil
}

// BudgetUsed is the consumption of a work item so far (spec 3.3). It is
// checked before every action.
type BudgetUsed struct {
	Tokens          int     `json:"tokens"`
	CostUSD         float64 `json:"cost_usd"`
	WallTimeSeconds float64 `json:"wall_time_seconds"`
	Attempts        int     `json:"attempts"`
	PlannerCalls    int     `json:"planner_calls"`
	ExecutorRuns    int     `json:"executor_runs"`
}

// Exceeds reports whether any limited dimension has reached its limit:
// reaching the limit exactly counts as exhausted (>=, spec 3.3).
// executor_runs has no limit.
func (u *BudgetUsed) Exceeds(b Budget) bool {
	return len(u.Exhausted(b)) > 0
}

// Exhausted names the budget fields whose limit has been reached, in the
// order of Budget's fields; empty when none has.
func (u *BudgetUsed) Exhausted(b Budget) []string {
	var out []string
	if u.Tokens >= b.MaxTokens {
		out = append(out, "max_tokens")
	}
	if u.CostUSD >= b.MaxCostUSD {
		out = append(out, "max_cost_usd")
	}
	if u.WallTimeSeconds >= float64(b.MaxWallTimeSeconds) {
		out = append(out, "max_wall_time_seconds")
	}
	if u.Attempts >= b.MaxAttempts {
		out = append(out, "max_attempts")
	}
	if u.PlannerCalls >= b.MaxPlannerCalls {
		out = append(out, "max_planner_calls")
	}
	return out
}

// Merge adds every field of child, attempts and executor_runs included, so a
// project reflects the consumption of its tasks.
func (u *BudgetUsed) Merge(child BudgetUsed) {
	u.Tokens += child.Tokens
	u.CostUSD += child.CostUSD
	u.WallTimeSeconds += child.WallTimeSeconds
	u.Attempts += child.Attempts
	u.PlannerCalls += child.PlannerCalls
	u.ExecutorRuns += child.ExecutorRuns
}

// Validate requires every counter to be non-negative and finite.
func (u *BudgetUsed) Validate() error {
	if u.Tokens < 0 || u.Attempts < 0 || u.PlannerCalls < 0 || u.ExecutorRuns < 0 ||
		!(u.CostUSD >= 0) || !(u.WallTimeSeconds >= 0) || !finite(u.CostUSD) || !finite(u.WallTimeSeconds) {
		return errors.New("counters must be finite and not negative")
	}
	return nil
}

// Expectation is a deterministic success predicate of a verification check
// (spec 3.3). Exactly one predicate is set; not_empty counts only when true.
type Expectation struct {
	ExitCode   *int     `json:"exit_code"`
	Equals     *string  `json:"equals"`
	Contains   *string  `json:"contains"`
	Regex      *string  `json:"regex"`
	OutputLT   *float64 `json:"output_lt"`
	OutputGT   *float64 `json:"output_gt"`
	FileExists *string  `json:"file_exists"`
	NotEmpty   *bool    `json:"not_empty"`
}

// predicates names the predicates that are set, in field order.
func (e *Expectation) predicates() []string {
	var set []string
	add := func(name string, ok bool) {
		if ok {
			set = append(set, name)
		}
	}
	add("exit_code", e.ExitCode != nil)
	add("equals", e.Equals != nil)
	add("contains", e.Contains != nil)
	add("regex", e.Regex != nil)
	add("output_lt", e.OutputLT != nil)
	add("output_gt", e.OutputGT != nil)
	add("file_exists", e.FileExists != nil)
	add("not_empty", e.NotEmpty != nil && *e.NotEmpty)
	return set
}

// Validate enforces exactly one predicate, a compiling regex, finite bounds
// and a file_exists path without ".." components. Whether the path lies in
// an allowed directory depends on runtime configuration: see ValidatePath.
func (e *Expectation) Validate() error {
	set := e.predicates()
	if len(set) != 1 {
		if len(set) == 0 {
			return errors.New("exactly one predicate must be set, got none (exit_code, equals, contains, regex, output_lt, output_gt, file_exists or not_empty: true)")
		}
		return fmt.Errorf("exactly one predicate must be set, got %d (%s)", len(set), strings.Join(set, ", "))
	}
	switch {
	case e.Regex != nil:
		if _, err := regexp.Compile(*e.Regex); err != nil {
			return fieldErr("regex", fmt.Errorf("does not compile: %w", err))
		}
	case e.OutputLT != nil && !finite(*e.OutputLT):
		return fieldErr("output_lt", errors.New("must be a finite number"))
	case e.OutputGT != nil && !finite(*e.OutputGT):
		return fieldErr("output_gt", errors.New("must be a finite number"))
	case e.FileExists != nil:
		if err := checkRelativeSafe(*e.FileExists); err != nil {
			return fieldErr("file_exists", err)
		}
	}
	return nil
}

// ValidatePath checks the file_exists path against allowedDirs, the
// verification work directory and the configured project directories: a
// relative path (resolved against the verification work directory) is
// allowed, an absolute path must lie inside one of allowedDirs. Paths with
// ".." components are always rejected. Symlinks are the verification
// runner's concern. It is a no-op for other predicates.
func (e *Expectation) ValidatePath(allowedDirs []string) error {
	if e.FileExists == nil {
		return nil
	}
	p := *e.FileExists
	if err := checkRelativeSafe(p); err != nil {
		return fieldErr("file_exists", err)
	}
	if !path.IsAbs(p) {
		return nil
	}
	clean := path.Clean(p)
	for _, d := range allowedDirs {
		if d == "" || !path.IsAbs(d) {
			continue
		}
		d = path.Clean(d)
		if clean == d || strings.HasPrefix(clean, strings.TrimSuffix(d, "/")+"/") {
			return nil
		}
	}
	return fieldErr("file_exists", fmt.Errorf("%q is outside the allowed directories; use a path relative to the verification work directory", p))
}

// checkRelativeSafe rejects empty paths, NUL bytes, "~" and ".." components.
func checkRelativeSafe(p string) error {
	if strings.TrimSpace(p) == "" {
		return errors.New("must not be empty")
	}
	if strings.ContainsRune(p, 0) {
		return errors.New("must not contain NUL")
	}
	if strings.HasPrefix(p, "~") {
		return fmt.Errorf("%q: home-relative paths are not allowed; use a path relative to the verification work directory", p)
	}
	for _, part := range strings.Split(strings.ReplaceAll(p, `\`, "/"), "/") {
		if part == ".." {
			return fmt.Errorf("%q: \"..\" components are not allowed", p)
		}
	}
	return nil
}

// DefaultVerifyTimeout is the default VerificationCheck.timeout in seconds.
const DefaultVerifyTimeout = 60

// VerificationCheck is an external check the agent cannot modify (spec 3.3).
// Decoding JSON defaults timeout to 60 and network to false.
type VerificationCheck struct {
	// Name is a human-readable check name.
	Name string `json:"name"`
	// Run is the shell command run in the verification sandbox.
	Run string `json:"run"`
	// Expect is the success criterion.
	Expect Expectation `json:"expect"`
	// Timeout is the maximum run time in seconds.
	Timeout int `json:"timeout"`
	// Network grants the verification sandbox network access.
	Network bool `json:"network"`
}

// UnmarshalJSON decodes a check over its defaults.
func (c *VerificationCheck) UnmarshalJSON(data []byte) error {
	type plain VerificationCheck
	p := plain{Timeout: DefaultVerifyTimeout}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*c = VerificationCheck(p)
	return nil
}

// Validate requires a name, a command, a valid expectation and a positive timeout.
func (c *VerificationCheck) Validate() error {
	if strings.TrimSpace(c.Name) == "" {
		return fieldErr("name", errors.New("is required"))
	}
	if strings.TrimSpace(c.Run) == "" {
		return fieldErr("run", errors.New("is required; set the shell command to run"))
	}
	if err := c.Expect.Validate(); err != nil {
		return fieldErr("expect", err)
	}
	if c.Timeout <= 0 {
		return fieldErr("timeout", fmt.Errorf("must be a positive number of seconds, got %d", c.Timeout))
	}
	return nil
}

// EscalationKind is the action of an escalation (EscalationAction.action).
type EscalationKind string

// Escalation kinds (spec 3.3; semantics in spec 5.1.1).
const (
	EscalationReport              EscalationKind = "report"
	EscalationEscalateHuman       EscalationKind = "escalate_human"
	EscalationTransferToQueue     EscalationKind = "transfer_to_queue"
	EscalationSuppressAndRephrase EscalationKind = "suppress_and_rephrase"
	EscalationSuppressAndEscalate EscalationKind = "suppress_and_escalate"
	EscalationRespond             EscalationKind = "respond"
	EscalationSpawnTask           EscalationKind = "spawn_task"
	EscalationRetry               EscalationKind = "retry"
)

// Validate reports whether k is a defined escalation kind.
func (k EscalationKind) Validate() error {
	switch k {
	case EscalationReport, EscalationEscalateHuman, EscalationTransferToQueue, EscalationSuppressAndRephrase,
		EscalationSuppressAndEscalate, EscalationRespond, EscalationSpawnTask, EscalationRetry:
		return nil
	}
	return fmt.Errorf("%q is not an escalation action; want report, escalate_human, transfer_to_queue, suppress_and_rephrase, suppress_and_escalate, respond, spawn_task or retry", string(k))
}

// DefaultMaxRetries is the default EscalationAction.max_retries.
const DefaultMaxRetries = 2

// EscalationAction is what happens when a gate blocks or verification fails
// (spec 3.3). Decoding JSON defaults max_retries to 2.
type EscalationAction struct {
	Action      EscalationKind `json:"action"`
	Queue       *string        `json:"queue"`
	Message     *string        `json:"message"`
	Instruction *string        `json:"instruction"`
	MaxRetries  int            `json:"max_retries"`
	Fallback    *string        `json:"fallback"`
}

// UnmarshalJSON decodes an escalation over its defaults.
func (a *EscalationAction) UnmarshalJSON(data []byte) error {
	type plain EscalationAction
	p := plain{MaxRetries: DefaultMaxRetries}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*a = EscalationAction(p)
	return nil
}

// Validate checks the action and the fields it needs to run (spec 5.1.1):
// transfer_to_queue needs a queue, respond a message, suppress_and_rephrase
// an instruction, suppress_and_escalate a fallback.
func (a *EscalationAction) Validate() error {
	if err := a.Action.Validate(); err != nil {
		return fieldErr("action", err)
	}
	if a.MaxRetries < 0 {
		return fieldErr("max_retries", fmt.Errorf("must not be negative, got %d", a.MaxRetries))
	}
	need := map[EscalationKind]struct {
		field string
		v     *string
	}{
		EscalationTransferToQueue:     {"queue", a.Queue},
		EscalationRespond:             {"message", a.Message},
		EscalationSuppressAndRephrase: {"instruction", a.Instruction},
		EscalationSuppressAndEscalate: {"fallback", a.Fallback},
	}
	if n, ok := need[a.Action]; ok && (n.v == nil || strings.TrimSpace(*n.v) == "") {
		return fieldErr(n.field, fmt.Errorf("is required for action %s", a.Action))
	}
	return nil
}

// WorkItem is the universal work structure, from one-shot task to
// indefinite goal (spec 3.3). Decoding JSON applies the spec's defaults to
// absent fields (needs_approval true, status pending, the default budget,
// and so on; see ApplyDefaults for the agent lane).
type WorkItem struct {
	ID         string       `json:"id"`
	Type       WorkItemType `json:"type"`
	Title      string       `json:"title"`
	Parent     *string      `json:"parent"`
	SpawnedBy  *string      `json:"spawned_by"`
	FollowUpOf *string      `json:"follow_up_of"`
	Domain     *string      `json:"domain"`

	Agent         AgentLane      `json:"agent"`
	Budget        Budget         `json:"budget"`
	NeedsApproval bool           `json:"needs_approval"`
	ApprovalToken *ApprovalToken `json:"approval_token"`

	// Body is the planner's markdown briefing for the executor.
	Body               string          `json:"body"`
	InteractionMode    InteractionMode `json:"interaction_mode"`
	InputArtifactsFrom []string        `json:"input_artifacts_from"`

	Verify []VerificationCheck `json:"verify"`
	Gates  []Gate              `json:"gates"`
	Skills []string            `json:"skills"`
	// SkillHashes binds each skill of Skills to the skill hash its install
	// approval covered (INV-06). The runtime sets it when it asks for the
	// plan's approval, never the planner; it is part of the plan hash, so
	// a skill whose files change no longer runs under this approval.
	SkillHashes map[string]string `json:"skill_hashes,omitempty"`

	AccessLevels map[string]AccessLevel      `json:"access_levels"`
	Escalation   map[string]EscalationAction `json:"escalation"`

	// Schedule is a cron expression, ScheduleAlwaysOn, or nil (goals only).
	Schedule       *string `json:"schedule"`
	OnFailure      string  `json:"on_failure"`
	OnStuck        string  `json:"on_stuck"`
	FailureContext *string `json:"failure_context"`

	Tasks     []string `json:"tasks"`
	DependsOn []string `json:"depends_on"`
	// Outputs are the paths (relative to the work dir, a directory covering
	// everything under it) a task of a project writes for the project: two
	// tasks whose outputs overlap never run at the same time (spec 19.7).
	// Not a field of the Python model; hashed only when set, so plans
	// without it keep their hash.
	Outputs []string `json:"outputs,omitempty"`

	// Runtime-managed state, never part of the plan hash.
	Status              WorkItemStatus   `json:"status"`
	Attempts            int              `json:"attempts"`
	BudgetUsed          BudgetUsed       `json:"budget_used"`
	VerificationResults []map[string]any `json:"verification_results"`
	CreatedAt           time.Time        `json:"created_at"`
	// Ladder is the work item's place on the escalation ladder, kept so
	// that it survives a crash.
	Ladder LadderState `json:"ladder,omitzero"`
	// Ledger is what the tool calls of every attempt actually did (spec
	// 5.2.1 step c1), kept so that a resumed work item still knows it.
	Ledger []LedgerEntry `json:"ledger,omitempty"`
	// TaskStatus is the final status of each finished task of a project
	// (spec 5.2.2), kept so that a resumed project skips them.
	TaskStatus map[string]WorkItemStatus `json:"task_status,omitempty"`
	// TaskArtifacts names the artifacts (paths relative to the work dir) of
	// each task of a project that finished done, kept so that a resumed
	// project still reports them and a later task can import them (spec
	// 5.2.1 step 0.5).
	TaskArtifacts map[string][]string `json:"task_artifacts,omitempty"`
}

// Stages of the escalation ladder (spec 19.5.3) a work item can wait in.
const (
	LadderConsulting = "consulting" // waiting on the planner's guidance
	LadderReplanning = "replanning" // waiting on a re-plan and its approval
)

// LadderState is where a work item stands on the escalation ladder of spec
// 19.5.3 (consult the planner, re-plan, escalate to the owner). It is
// runtime-managed, never part of the plan hash.
type LadderState struct {
	// Stage is LadderConsulting, LadderReplanning or "" (attempting).
	Stage string `json:"stage,omitempty"`
	// Guidance is the planner's latest guidance, given to every later attempt.
	Guidance string `json:"guidance,omitempty"`
	// LastFailure says why the last attempt failed.
	LastFailure string `json:"last_failure,omitempty"`
	// ReplanDepth counts the re-plans that led to this work item.
	ReplanDepth int `json:"replan_depth,omitempty"`
}

// NewWorkItem returns a work item with every default of the spec set.
func NewWorkItem(id string, typ WorkItemType, title string) *WorkItem {
	w := &WorkItem{ID: id, Type: typ, Title: title, Budget: DefaultBudget(), NeedsApproval: true}
	w.ApplyDefaults()
	return w
}

// UnmarshalJSON decodes a work item over the spec's defaults.
func (w *WorkItem) UnmarshalJSON(data []byte) error {
	type plain WorkItem
	p := plain{Budget: DefaultBudget(), NeedsApproval: true}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*w = WorkItem(p)
	w.ApplyDefaults()
	return nil
}

// DefaultAgent returns the lane the spec gives w when agent is not set:
// stream for a goal scheduled always_on, ephemeral otherwise.
func (w *WorkItem) DefaultAgent() AgentLane {
	if w.Type == WorkGoal && w.Schedule != nil && *w.Schedule == ScheduleAlwaysOn {
		return AgentStream
	}
	return AgentEphemeral
}

// ApplyDefaults fills the empty string and enum fields with the spec's
// defaults (agent lane, interaction mode, on_failure, on_stuck, status) and
// applies the gate defaults. Numeric fields are left as they are, since zero
// can be a deliberate value there.
func (w *WorkItem) ApplyDefaults() {
	if w.Agent == "" {
		w.Agent = w.DefaultAgent()
	}
	if w.InteractionMode == "" {
		w.InteractionMode = DefaultInteractionMode
	}
	if w.OnFailure == "" {
		w.OnFailure = DefaultOnFailure
	}
	if w.OnStuck == "" {
		w.OnStuck = DefaultOnStuck
	}
	if w.Status == "" {
		w.Status = StatusPending
	}
	for i := range w.Gates {
		w.Gates[i].ApplyDefaults()
	}
}

// maxIDLen bounds work item IDs, which appear in storage keys and audit records.
const maxIDLen = 256

// checkID requires a non-empty identifier without spaces or control characters.
func checkID(id string) error {
	if id == "" {
		return errors.New("is required")
	}
	if len(id) > maxIDLen {
		return fmt.Errorf("is %d bytes long, at most %d allowed", len(id), maxIDLen)
	}
	for _, r := range id {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("%q must not contain spaces or control characters", id)
		}
	}
	return nil
}

// checkIDList requires valid, distinct IDs that do not name self.
func checkIDList(field, self string, ids []string) error {
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		elem := fmt.Sprintf("%s[%d]", field, i)
		if err := checkID(id); err != nil {
			return fieldErr(elem, err)
		}
		if id == self {
			return fieldErr(elem, fmt.Errorf("%q is the work item itself", id))
		}
		if seen[id] {
			return fieldErr(elem, fmt.Errorf("%q is listed twice", id))
		}
		seen[id] = true
	}
	return nil
}

// Validate enforces every rule of the WorkItem model: identity, the agent
// lane rule (task and project items are ephemeral), budget, briefing,
// verification, gates, access levels, escalations, schedule and hierarchy.
// Empty defaultable fields (see ApplyDefaults) are read as their defaults; a
// zero created_at means "not yet stored".
func (w *WorkItem) Validate() error {
	for _, err := range []error{w.validateIdentity(), w.validatePlan(), w.validateLifecycle(), w.validateState()} {
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *WorkItem) validateIdentity() error {
	if err := checkID(w.ID); err != nil {
		return fieldErr("id", err)
	}
	if err := w.Type.Validate(); err != nil {
		return fieldErr("type", err)
	}
	if strings.TrimSpace(w.Title) == "" {
		return fieldErr("title", errors.New("is required; give the work item a short descriptive title"))
	}
	refs := []struct {
		name string
		v    *string
	}{{"parent", w.Parent}, {"spawned_by", w.SpawnedBy}, {"follow_up_of", w.FollowUpOf}}
	for _, r := range refs {
		if r.v == nil {
			continue
		}
		if err := checkID(*r.v); err != nil {
			return fieldErr(r.name, err)
		}
		if *r.v == w.ID {
			return fieldErr(r.name, fmt.Errorf("%q is the work item itself", *r.v))
		}
	}
	if w.Domain != nil && strings.TrimSpace(*w.Domain) == "" {
		return fieldErr("domain", errors.New("must not be blank; omit it instead"))
	}
	agent := w.Agent
	if agent == "" {
		agent = w.DefaultAgent()
	}
	switch agent {
	case AgentEphemeral:
	case AgentStream:
		if w.Type != WorkGoal {
			return fieldErr("agent", fmt.Errorf("a %s must use agent ephemeral; only goals may use the stream lane", w.Type))
		}
	default:
		return fieldErr("agent", fmt.Errorf("%q is not an agent lane; want ephemeral or stream", string(agent)))
	}
	return nil
}

func (w *WorkItem) validatePlan() error {
	if err := w.Budget.Validate(); err != nil {
		return fieldErr("budget", err)
	}
	if w.InteractionMode != "" {
		if err := w.InteractionMode.Validate(); err != nil {
			return fieldErr("interaction_mode", err)
		}
	}
	if err := nonBlank("input_artifacts_from", w.InputArtifactsFrom); err != nil {
		return err
	}
	if len(w.InputArtifactsFrom) > 0 && w.FollowUpOf == nil {
		return fieldErr("input_artifacts_from", errors.New("needs follow_up_of: artifacts are imported from the prior work item"))
	}
	for i, k := range w.InputArtifactsFrom {
		if k == "*" && len(w.InputArtifactsFrom) > 1 {
			return fieldErr(fmt.Sprintf("input_artifacts_from[%d]", i), errors.New(`"*" imports every artifact and must be the only entry`))
		}
	}
	for i := range w.Verify {
		if err := w.Verify[i].Validate(); err != nil {
			return fieldErr(fmt.Sprintf("verify[%d]", i), err)
		}
	}
	gateNames := make(map[string]int, len(w.Gates))
	for i := range w.Gates {
		field := fmt.Sprintf("gates[%d]", i)
		if err := w.Gates[i].Validate(); err != nil {
			return fieldErr(field, err)
		}
		if first, dup := gateNames[w.Gates[i].Name]; dup {
			return fieldErr(field+".name", fmt.Errorf("%q is already the name of gates[%d]; names must be unique", w.Gates[i].Name, first))
		}
		gateNames[w.Gates[i].Name] = i
	}
	if err := nonBlank("skills", w.Skills); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(w.AccessLevels)) {
		lvl := w.AccessLevels[name]
		if strings.TrimSpace(name) == "" {
			return fieldErr("access_levels", errors.New("level names must not be blank"))
		}
		if err := lvl.Validate(); err != nil {
			return fieldErr("access_levels."+name, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.Escalation)) {
		esc := w.Escalation[name]
		if strings.TrimSpace(name) == "" {
			return fieldErr("escalation", errors.New("escalation names must not be blank"))
		}
		if err := esc.Validate(); err != nil {
			return fieldErr("escalation."+name, err)
		}
	}
	return nil
}

func (w *WorkItem) validateLifecycle() error {
	if w.Schedule != nil {
		s := *w.Schedule
		if w.Type != WorkGoal {
			return fieldErr("schedule", fmt.Errorf("only goals are scheduled, this is a %s", w.Type))
		}
		if s != ScheduleAlwaysOn {
			if _, err := cron.ParseStandard(s); err != nil {
				return fieldErr("schedule", fmt.Errorf("%q is neither always_on nor a cron expression: %w", s, err))
			}
		}
	}
	if w.OnFailure != "" && strings.TrimSpace(w.OnFailure) == "" {
		return fieldErr("on_failure", errors.New("must name an escalation, not be blank"))
	}
	if w.OnStuck != "" && strings.TrimSpace(w.OnStuck) == "" {
		return fieldErr("on_stuck", errors.New("must not be blank"))
	}
	if err := checkIDList("tasks", w.ID, w.Tasks); err != nil {
		return err
	}
	return checkIDList("depends_on", w.ID, w.DependsOn)
}

func (w *WorkItem) validateState() error {
	if w.Status != "" {
		if err := w.Status.Validate(); err != nil {
			return fieldErr("status", err)
		}
	}
	if w.Attempts < 0 {
		return fieldErr("attempts", fmt.Errorf("must not be negative, got %d", w.Attempts))
	}
	if err := w.BudgetUsed.Validate(); err != nil {
		return fieldErr("budget_used", err)
	}
	if !w.CreatedAt.IsZero() && w.CreatedAt.Location() != time.UTC {
		return fieldErr("created_at", errors.New("must be in UTC"))
	}
	return nil
}

// WorkItemResult is the deterministic return contract of the work item
// executor (spec 3.3).
type WorkItemResult struct {
	WorkItemID          string            `json:"work_item_id"`
	Status              WorkItemStatus    `json:"status"`
	Summary             string            `json:"summary"`
	LastError           *string           `json:"last_error"`
	VerificationResults []map[string]any  `json:"verification_results"`
	BudgetUsed          BudgetUsed        `json:"budget_used"`
	Artifacts           map[string]string `json:"artifacts"`
	NextSteps           []string          `json:"next_steps"`
}

// Validate requires the work item ID and a final status (done, healthy,
// failed, stuck or blocked).
func (r *WorkItemResult) Validate() error {
	if err := checkID(r.WorkItemID); err != nil {
		return fieldErr("work_item_id", err)
	}
	if !r.Status.Final() {
		return fieldErr("status", fmt.Errorf("%q does not end an execution; want done, healthy, failed, stuck or blocked", string(r.Status)))
	}
	if err := r.BudgetUsed.Validate(); err != nil {
		return fieldErr("budget_used", err)
	}
	return nil
}

// planProjection is the canonical approval projection of a work item: the
// included fields of spec 3.3, and nothing else.
type planProjection struct {
	ID                 string                      `json:"id"`
	Type               WorkItemType                `json:"type"`
	Title              string                      `json:"title"`
	Parent             *string                     `json:"parent"`
	SpawnedBy          *string                     `json:"spawned_by"`
	FollowUpOf         *string                     `json:"follow_up_of"`
	Domain             *string                     `json:"domain"`
	Agent              AgentLane                   `json:"agent"`
	Budget             Budget                      `json:"budget"`
	Body               string                      `json:"body"`
	InteractionMode    InteractionMode             `json:"interaction_mode"`
	InputArtifactsFrom []string                    `json:"input_artifacts_from"`
	Verify             []VerificationCheck         `json:"verify"`
	Gates              []Gate                      `json:"gates"`
	Skills             []string                    `json:"skills"`
	SkillHashes        map[string]string           `json:"skill_hashes,omitempty"`
	AccessLevels       map[string]AccessLevel      `json:"access_levels"`
	Escalation         map[string]EscalationAction `json:"escalation"`
	Schedule           *string                     `json:"schedule"`
	OnFailure          string                      `json:"on_failure"`
	OnStuck            string                      `json:"on_stuck"`
	FailureContext     *string                     `json:"failure_context"`
	Tasks              []string                    `json:"tasks"`
	DependsOn          []string                    `json:"depends_on"`
	Outputs            []string                    `json:"outputs,omitempty"`
}

// normalized returns a copy of w with the spec's defaults applied and every
// absent list or object made empty, so that equivalent items hash alike
// (a Python model always carries its defaults). w is not modified.
func (w *WorkItem) normalized() *WorkItem {
	n := *w
	n.InputArtifactsFrom = orEmpty(w.InputArtifactsFrom)
	n.Skills = orEmpty(w.Skills)
	n.Tasks = orEmpty(w.Tasks)
	n.DependsOn = orEmpty(w.DependsOn)
	n.Verify = append([]VerificationCheck{}, w.Verify...)
	n.Gates = append([]Gate{}, w.Gates...)
	n.AccessLevels = make(map[string]AccessLevel, len(w.AccessLevels))
	for k, v := range w.AccessLevels {
		v.Tools = orEmpty(v.Tools)
		v.Requires = orEmpty(v.Requires)
		n.AccessLevels[k] = v
	}
	n.Escalation = make(map[string]EscalationAction, len(w.Escalation))
	for k, v := range w.Escalation {
		n.Escalation[k] = v
	}
	n.ApplyDefaults()
	return &n
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// WorkItemPlanHashBytes returns the canonical JSON bytes of w's approval
// projection (spec 3.3): exactly the immutable plan fields, with defaults
// applied and absent lists and objects empty. Runtime state (approval_token,
// needs_approval, status, attempts, budget_used, verification_results,
// created_at) is excluded, so it can change without breaking the approval.
func WorkItemPlanHashBytes(w *WorkItem) ([]byte, error) {
	n := w.normalized()
	p := planProjection{
		ID: n.ID, Type: n.Type, Title: n.Title, Parent: n.Parent, SpawnedBy: n.SpawnedBy,
		FollowUpOf: n.FollowUpOf, Domain: n.Domain, Agent: n.Agent, Budget: n.Budget, Body: n.Body,
		InteractionMode: n.InteractionMode, InputArtifactsFrom: n.InputArtifactsFrom, Verify: n.Verify,
		Gates: n.Gates, Skills: n.Skills, SkillHashes: n.SkillHashes, AccessLevels: n.AccessLevels, Escalation: n.Escalation,
		Schedule: n.Schedule, OnFailure: n.OnFailure, OnStuck: n.OnStuck, FailureContext: n.FailureContext,
		Tasks: n.Tasks, DependsOn: n.DependsOn, Outputs: n.Outputs,
	}
	b, err := canonical.Marshal(&p)
	if err != nil {
		return nil, fmt.Errorf("plan hash of work item %q: %w", w.ID, err)
	}
	return b, nil
}

// WorkItemPlanHash returns the lower-case hex SHA-256 of
// WorkItemPlanHashBytes(w): the plan_hash an ApprovalToken binds.
func WorkItemPlanHash(w *WorkItem) (string, error) {
	b, err := WorkItemPlanHashBytes(w)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

// spawnPolicy is the spawn policy projection of a goal (spec 3.6).
type spawnPolicy struct {
	FailureContextTemplate string                      `json:"failure_context_template"`
	Skills                 []string                    `json:"skills"`
	Gates                  []string                    `json:"gates"`
	Verify                 []string                    `json:"verify"`
	EscalationConfig       map[string]EscalationAction `json:"escalation_config"`
}

// SpawnPolicyHashBytes returns the canonical bytes of goal's spawn policy
// (spec 3.6): the raw failure_context template, the sorted distinct skills,
// the sorted canonical JSON strings of every gate and verification check,
// and the escalations named by on_failure or a gate's on_block that the goal
// defines.
func SpawnPolicyHashBytes(goal *WorkItem) ([]byte, error) {
	n := goal.normalized()
	p := spawnPolicy{
		Skills:           sortedUnique(n.Skills),
		Gates:            make([]string, 0, len(n.Gates)),
		Verify:           make([]string, 0, len(n.Verify)),
		EscalationConfig: map[string]EscalationAction{},
	}
	if n.FailureContext != nil {
		p.FailureContextTemplate = *n.FailureContext
	}
	for i := range n.Gates {
		b, err := canonical.Marshal(&n.Gates[i])
		if err != nil {
			return nil, fmt.Errorf("spawn policy of %q: gates[%d]: %w", goal.ID, i, err)
		}
		p.Gates = append(p.Gates, string(b))
	}
	for i := range n.Verify {
		b, err := canonical.Marshal(&n.Verify[i])
		if err != nil {
			return nil, fmt.Errorf("spawn policy of %q: verify[%d]: %w", goal.ID, i, err)
		}
		p.Verify = append(p.Verify, string(b))
	}
	slices.Sort(p.Gates)
	slices.Sort(p.Verify)
	names := []string{n.OnFailure}
	for _, g := range n.Gates {
		if g.OnBlock != "" {
			names = append(names, g.OnBlock)
		}
	}
	for _, name := range names {
		if esc, ok := n.Escalation[name]; ok {
			p.EscalationConfig[name] = esc
		}
	}
	b, err := canonical.Marshal(&p)
	if err != nil {
		return nil, fmt.Errorf("spawn policy of %q: %w", goal.ID, err)
	}
	return b, nil
}

// SpawnPolicyHash returns the lower-case hex SHA-256 of
// SpawnPolicyHashBytes(goal): the spawn_policy_hash a standing approval
// binds in its conditions.
func SpawnPolicyHash(goal *WorkItem) (string, error) {
	b, err := SpawnPolicyHashBytes(goal)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

func sortedUnique(s []string) []string {
	out := slices.Clone(orEmpty(s))
	slices.Sort(out)
	return slices.Compact(out)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
