package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/scheduler"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/access"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/personality"
	"github.com/silas-ai/silas/runtime/pipeline"
	"github.com/silas-ai/silas/runtime/ratelimit"
)

// scopeLoaded carries what a scope rehydrates from (spec 5.1.3).
type scopeLoaded struct {
	turnNo    int
	access    *access.State
	persona   *messages.PersonaState
	chronicle []messages.ContextItem
	pending   []persistence.QueueRecord
	outbox    []persistence.OutboxRecord
	work      []*messages.WorkItem // active work items to resume
	// noKeywordMemory: the scope holds no keyword-indexed memory.
	noKeywordMemory bool
	err             error
}

// snapshot is the part of a scope's state that is not in its chronicle.
type snapshot struct {
	Turn int `json:"turn"`
	// Access is a customer's access controller state (spec 5.6); the
	// owner's is never stored, it bypasses levels.
	Access *access.State `json:"access,omitempty"`
}

func encodeSnapshot(s snapshot) ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode scope snapshot: %w", err)
	}
	return b, nil
}

// RehydratedNote is the system note a scope's context gets after a restart
// (spec 5.1.3 step 5).
const RehydratedNote = "[SYSTEM] Session rehydrated after restart."

func (s *Scope) onStarted(c actor.Context) {
	now := s.d.now()
	lim := s.d.Config.Limits
	s.wsLimit = ratelimit.NewBucket(lim.WSMessagesPerMinutePerScope, now)
	s.llmLimit = ratelimit.NewBucket(lim.LLMCallsPerMinutePerScope, now)
	s.memLimit = ratelimit.NewBucket(lim.MemoryOpsPerMinutePerScope, now)
	s.proxy = c.Spawn(actor.PropsFromProducer(func() actor.Actor { return newAgentLoop(s.d, s.id, llm.RoleProxy) }, s.d.props...))
	s.planner = c.Spawn(actor.PropsFromProducer(func() actor.Actor { return newAgentLoop(s.d, s.id, llm.RolePlanner) }, s.d.props...))
	s.scorer = c.Spawn(actor.PropsFromProducer(func() actor.Actor { return newAgentLoop(s.d, s.id, llm.RoleScorer) }, s.d.props...))
	if s.d.Gates != nil {
		lane := actor.PropsFromProducer(func() actor.Actor { return newGateLane(s.d, s.id) }, s.d.props...)
		s.policy, s.qual = c.Spawn(lane), c.Spawn(lane)
	}
	s.env = s.newEnv()
	s.startLoad(c)
}

// Backoff of a scope whose load failed: it tries again after
// loadRetryFirst, doubling up to loadRetryMax, holding the messages it
// gets meanwhile (they are journaled).
const (
	loadRetryFirst = 100 * time.Millisecond
	loadRetryMax   = 30 * time.Second
)

// scopeLoadRetry starts the next load attempt. Sender: the scope's timer.
type scopeLoadRetry struct{}

// startLoad reads the scope's state from Badger off the mailbox.
func (s *Scope) startLoad(c actor.Context) {
	self, root, id, limit := c.Self(), s.d.sys.Root, s.id, s.d.Config.Rehydration.MaxChronicleEntries
	db, eng, store := s.d.DB, s.d.Persona, s.d.PersonaStore
	started := s.d.tasks.Go("scope load "+id, func(ctx context.Context) {
		l := loadScope(ctx, db, id, limit)
		if l.err == nil && eng != nil && store != nil {
			l.persona, l.err = loadPersona(ctx, store, eng.ScopeID(id))
		}
		root.Send(self, l)
	}, func(err error) { root.Send(self, &scopeLoaded{err: err}) })
	if !started {
		c.Stop(self)
	}
}

func loadScope(ctx context.Context, db *persistence.DB, scope string, limit int) *scopeLoaded {
	l := &scopeLoaded{}
	var snap snapshot
	raw, err := db.Snapshots().Load(ctx, scope)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
	case err != nil:
		l.err = fmt.Errorf("load snapshot of scope %s: %w", scope, err)
		return l
	default:
		if err := json.Unmarshal(raw, &snap); err != nil {
			l.err = fmt.Errorf("decode snapshot of scope %s: %w", scope, err)
			return l
		}
	}
	l.turnNo = snap.Turn
	l.access = snap.Access
	if l.chronicle, err = db.Chronicle().Recent(ctx, scope, limit); err != nil {
		l.err = fmt.Errorf("load chronicle of scope %s: %w", scope, err)
		return l
	}
	if l.pending, err = db.Queue().PendingFor(ctx, scope); err != nil {
		l.err = fmt.Errorf("load queue of scope %s: %w", scope, err)
		return l
	}
	if l.outbox, err = db.Outbox().Pending(ctx, scope); err != nil {
		l.err = fmt.Errorf("load outbox of scope %s: %w", scope, err)
		return l
	}
	if l.work, err = db.WorkItems().List(ctx, scope); err != nil {
		l.err = fmt.Errorf("load work items of scope %s: %w", scope, err)
		return l
	}
	indexed, err := db.Memory().HasKeywordIndex(ctx, scope)
	if err != nil {
		l.err = fmt.Errorf("load memory totals of scope %s: %w", scope, err)
		return l
	}
	l.noKeywordMemory = !indexed
	return l
}

func (s *Scope) onLoaded(c actor.Context, m *scopeLoaded) {
	if errors.Is(m.err, errShuttingDown) {
		return
	}
	if m.err != nil {
		// Without its history the scope cannot run turns correctly: it
		// tries again, backing off, and runs nothing meanwhile. The
		// messages it holds are journaled.
		wait := min(loadRetryFirst<<min(s.loadTries, 10), loadRetryMax)
		s.loadTries++
		s.d.Log.Warn().Err(m.err).Str("scope", s.id).Int("attempt", s.loadTries).Dur("retry_in", wait).Msg("load scope")
		s.emitAudit("scope_load_failed", map[string]any{"attempt": s.loadTries, "error": m.err.Error()})
		scheduler.NewTimerScheduler(c).SendOnce(wait, c.Self(), &scopeLoadRetry{})
		return
	}
	s.loadTries = 0
	s.loaded = true
	s.turnNo = m.turnNo
	// No turn ran and no work item was started since the totals were read
	// (work items resume below), so nothing of this scope indexed memory
	// in between.
	s.noKeywordMemory = m.noKeywordMemory
	s.newAccess(m.access)
	switch {
	case m.persona != nil:
		s.persona = *m.persona
	case s.d.Persona != nil:
		s.persona = s.d.Persona.NewState(s.d.Persona.ScopeID(s.id), s.d.now())
	}
	for i := range m.chronicle {
		s.window.Add(m.chronicle[i])
	}
	if len(m.chronicle) > 0 {
		s.window.Add(messages.ContextItem{
			CtxID: uuid.NewString(), Zone: messages.ZoneChronicle, Content: RehydratedNote,
			CreatedAt: s.d.now(), TurnNumber: s.turnNo, Source: "runtime", Taint: messages.TaintOwner,
			Kind: messages.KindSystem, Relevance: 1, Pinned: false,
		})
	}
	// Recovered messages were accepted before those that arrived while
	// loading, so they go first.
	recovered := make([]*queued, 0, len(m.pending)+len(s.queue))
	for i := range m.pending {
		msg, err := decodeQueued(&m.pending[i])
		if err != nil {
			s.d.Log.Error().Err(err).Str("scope", s.id).Msg("undecodable queued message; moving it to the dead letters")
			s.deadLetter(m.pending[i].MessageID, err.Error())
			continue
		}
		if i := s.find(msg.MessageID); i >= 0 {
			// It came while loading and the store has it: its own journal
			// write landed before the load read, or it is a resend of a
			// message journaled before a crash. Either way the entry (which
			// has the client's sink) is this journaled message, answered
			// once, in the order it arrived; the result of its journal
			// write changes nothing (onJournaled).
			if q := s.queue[i]; !q.journaled {
				q.journaled = true
				send(q.msg.Sink, &messages.AckEvent{Type: "ack", MessageID: msg.MessageID})
			}
			continue
		}
		sl, refused := s.d.admit.acquire(s.kind == messages.ScopeOwner, "")
		if refused != nil {
			// Over the global bound: it stays journaled and runs on a later start.
			continue
		}
		s.d.metrics.QueueDepth.Inc()
		recovered = append(recovered, &queued{msg: msg, journaled: true, slot: sl})
	}
	s.queue = append(recovered, s.queue...)
	s.outbox = append(s.outbox, m.outbox...)
	s.flushOutbox(c)
	s.resumeWorkItems(c, m.work)
	for _, w := range s.waitingPersona {
		s.applyPersona(c, w.sender, w.req)
	}
	s.waitingPersona = nil
	s.setState(c)
	s.maybeStart(c)
}

func (s *Scope) deadLetter(id, reason string) {
	db, scope := s.d.DB, s.id
	s.d.tasks.Go("dead letter", func(ctx context.Context) {
		if err := db.Queue().DeadLetter(ctx, scope, id, reason); err != nil {
			s.d.Log.Error().Err(err).Str("scope", scope).Msg("dead-letter a queued message")
		}
	}, nil)
}

func (s *Scope) newEnv() *pipeline.Env {
	cfg := s.d.Config
	s.window = newWindow(cfg)
	modes := make(map[messages.InteractionRegister]messages.InteractionMode, len(cfg.Interaction.DefaultModeByRegister))
	for k, v := range cfg.Interaction.DefaultModeByRegister {
		modes[messages.InteractionRegister(k)] = messages.InteractionMode(v)
	}
	proxyPrompt := ProxyInstructions
	if s.kind == messages.ScopeCustomer {
		proxyPrompt = CustomerInstructions(cfg.Chatbot.SystemPrompt)
	}
	var systemGates, goalGates []messages.Gate
	var escalations map[string]messages.EscalationAction
	if s.d.Gates != nil {
		systemGates = s.d.SystemGates
		if g := s.d.Goal; g != nil && s.kind == messages.ScopeCustomer {
			// The active goal is the chatbot lane: its gates (identity
			// checks among them) run on customer turns, not the owner's.
			goalGates, escalations = g.Gates, g.Escalation
		}
	}
	return &pipeline.Env{
		SystemGates:         systemGates,
		WorkGates:           goalGates,
		GoalEscalations:     escalations,
		Window:              s.window,
		Profiles:            cfg.ProfileNames(),
		DefaultProfile:      cfg.Context.DefaultProfile,
		Initiative:          cfg.Personality.Baseline.Initiative,
		HighInitiativeMin:   cfg.Interaction.HighInitiativeMin,
		DefaultModes:        modes,
		FreshWindow:         signatureFreshness,
		VerifySignature:     s.d.VerifyOwnerSignature,
		MaxMemoryOpsPerTurn: cfg.Limits.MaxMemoryOpsPerTurn,
		MaxGateEvals:        cfg.Limits.MaxGateEvalsPerTurn,
		RawIngest:           cfg.Memory.RawReingestionEnabled,
		Scorer:              &s.breaker,
		Persona:             s.d.Persona,
		PersonaState:        &s.persona,
		WebSearch:           webSearchConfigured(s.d.Executors),
		ProxyInstructions:   proxyPrompt,
		PlannerInstructions: PlannerInstructions,
		OwnerScope:          s.kind == messages.ScopeOwner,
		NewID:               uuid.NewString,
	}
}

// loadPersona returns the stored persona state of scope, or nil when none
// was stored yet.
func loadPersona(ctx context.Context, store personality.Store, scope string) (*messages.PersonaState, error) {
	st, err := store.Load(ctx, scope)
	if errors.Is(err, personality.ErrStateNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load persona of scope %s: %w", scope, err)
	}
	return &st, nil
}

// resumeWorkItems respawns the stored work items that had not finished when
// the scope last stopped; each starts a fresh attempt from its persisted
// attempts and budget. Items with any other status are left alone.
func (s *Scope) resumeWorkItems(c actor.Context, work []*messages.WorkItem) {
	for _, w := range work {
		if w.Status != messages.StatusPending && w.Status != messages.StatusRunning {
			continue
		}
		if !s.d.canExecute() {
			s.d.Log.Warn().Str("scope", s.id).Str("work_item", w.ID).Msg("active work item not resumed: plan execution is not configured in this process")
			continue
		}
		s.emitAudit("work_item_recovered", map[string]any{"work_item_id": w.ID, "attempts": w.Attempts, "status": string(w.Status)})
		s.startWorkItem(c, w)
	}
}
