package actors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/go-co-op/gocron/v2"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/plan"
)

// schedulerName is the Scheduler's actor name: scopes address it by name
// (it runs whenever plans can execute, shared.canExecute).
const schedulerName = "scheduler"

// Scheduler runs the owner's scheduled goals (spec 5.2.3): goals the
// planner proposed and the owner approved in chat, each with the standing
// approval given with it, and the goal of silas.active_goal. At start it
// loads them from Badger (persistence.Goals) and the goal file, each with
// its stored standing token, so that schedules, pauses and the tokens'
// execution counts survive a restart; then it schedules every active
// goal's cycles. gocron owns the timing; its jobs only send goalTick to the
// actor, so Receive never blocks. A goal's cycles never overlap, and a
// cycle is skipped while a fix task of the goal is still active (spec
// 5.2.3 runs the fix task within the cycle).
//
// The owner lists, pauses, resumes and removes goals with goalOp (the
// owner API, `silas goals`, /goal in chat). A change is stored before it
// is applied and answered, one change at a time; ops that come while one
// is stored, or before the goals are loaded, wait in order. A paused goal
// starts no cycle, and a check in flight when it was paused is dropped; a
// fix task already authorized runs to its end.
//
// A goal without a usable standing token (the config goal before its
// first failing check, or one whose token was exhausted, expired or
// declined) asks the owner for one when a check fails. The token, as it
// stands after each verification, is stored next to the goal
// (persistence.WorkItems.PutStanding).
//
// Supervision: a panic restarts the actor, which loads the goals afresh.
type Scheduler struct {
	d *shared
	// path is the goal file of silas.active_goal; "" without one.
	path string
	cron gocron.Scheduler
	// goals are the loaded goals by id; gen numbers each goalRun, so that
	// a result of a removed goal never reaches a new goal of its id.
	goals map[string]*goalRun
	gen   int
	// loaded: the goals were loaded; storing: a change is being written.
	// held are the ops that wait for either.
	loaded, storing bool
	held            []*goalOp
	// owner holds messages for the owner scope until its PID arrives.
	owner []*ownerWork
}

// goalRun is one scheduled goal and the state of its cycles.
type goalRun struct {
	rec  persistence.Goal
	goal *messages.WorkItem
	gen  int
	job  gocron.Job // nil while paused
	// runs counts the cycles started since Silas started; lastRun and
	// lastOutcome are the last one's.
	runs        int
	lastRun     time.Time
	lastOutcome string
	cycle
}

// goalsLoaded carries the goals read at start. Sender: a Scheduler IO
// goroutine. Receiver: the Scheduler.
type goalsLoaded struct {
	goals []loadedGoal
	// configErr: the goal file could not be read or is no scheduled goal;
	// listErr: the stored goals could not be read.
	configErr, listErr error
}

// loadedGoal is one goal read at start, with its stored standing token
// if it is still usable, or why a stored one was discarded.
type loadedGoal struct {
	rec     persistence.Goal
	goal    *messages.WorkItem
	token   *messages.ApprovalToken
	dropped string
}

// goalTick starts a cycle of goal id. Sender: a gocron job. Receiver: the
// Scheduler.
type goalTick struct {
	id  string
	gen int
}

// goalStored carries the outcome of storing op's change: rec is the
// record written (add, pause, resume). Sender: a Scheduler IO goroutine.
// Receiver: the Scheduler.
type goalStored struct {
	op  *goalOp
	rec persistence.Goal
	err error
}

func newScheduler(d *shared, path string) *Scheduler {
	return &Scheduler{d: d, path: path, goals: make(map[string]*goalRun)}
}

// Receive handles the goals' lifecycle, the owner's ops and the cycles.
func (s *Scheduler) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		s.load(c)
	case *goalsLoaded:
		s.onLoaded(c, m)
	case *goalOp:
		if m.sink == nil {
			m.sender = c.Sender()
		}
		s.onOp(c, m)
	case *goalStored:
		s.onStored(c, m)
	case *goalTick:
		s.onTick(c, m)
	case *goalChecked:
		s.onChecked(c, m)
	case *standingVerified:
		s.onStandingVerified(c, m)
	case *ownerVerdict:
		s.onVerdict(c, m)
	case *ownerRetry:
		if s.verdictGoal(m.msg.work.ID) != nil { // not removed meanwhile
			s.sendToOwner(c, m.msg)
		}
	case *messages.ScopeRef:
		s.onScopeRef(c, m)
	case *actor.Stopping, *actor.Restarting:
		// A restarted Scheduler loads the goals and schedules them afresh.
		if s.cron != nil {
			if err := s.cron.Shutdown(); err != nil {
				s.d.Log.Warn().Err(err).Msg("stop goal scheduler")
			}
			s.cron = nil
		}
	}
}

// load reads the goal file and the stored goals, with their standing
// tokens, in the background.
func (s *Scheduler) load(c actor.Context) {
	cron, err := gocron.NewScheduler(s.d.cronOptions...)
	if err != nil {
		// Nothing could ever be scheduled, and a restart will not fix it;
		// ops are answered (with no goals) rather than left waiting.
		s.d.Log.Error().Err(err).Msg("goals not scheduled: start the goal scheduler")
		s.audit("", "goal_load_failed", map[string]any{"error": err.Error()})
		s.loaded = true
		s.release(c)
		return
	}
	s.cron = cron
	cron.Start()
	self, root, path, db, owner, now := c.Self(), s.d.sys.Root, s.path, s.d.DB, s.d.Config.OwnerID, s.d.now
	reply := func(m *goalsLoaded) { root.Send(self, m) }
	if !s.d.tasks.Go("load goals", func(ctx context.Context) { reply(readGoals(ctx, db, owner, path, now())) },
		func(err error) { reply(&goalsLoaded{listErr: err}) }) {
		reply(&goalsLoaded{listErr: errShuttingDown})
	}
}

// readGoals reads the config goal (path, "" for none) and the stored goals
// of owner. The config goal keeps its paused state in a record of its
// own; records of a config goal that is no longer configured are deleted.
func readGoals(ctx context.Context, db *persistence.DB, owner, path string, now time.Time) *goalsLoaded {
	m := &goalsLoaded{}
	recs, err := db.Goals().List(ctx, owner)
	if err != nil {
		m.listErr = err
	}
	var cfg *messages.WorkItem
	if path != "" {
		if cfg, m.configErr = readGoalFile(path); m.configErr == nil {
			rec := persistence.Goal{ID: cfg.ID, Source: persistence.GoalFromConfig, AddedAt: now}
			if i := slices.IndexFunc(recs, func(r persistence.Goal) bool { return r.ID == cfg.ID && r.Source == persistence.GoalFromConfig }); i >= 0 {
				rec = recs[i]
			}
			lg := loadedGoal{rec: rec, goal: cfg}
			lg.token, lg.dropped = storedStanding(ctx, db, owner, cfg, now)
			m.goals = append(m.goals, lg)
		}
	}
	for _, r := range recs {
		switch {
		case r.Source == persistence.GoalFromConfig && (cfg == nil || r.ID != cfg.ID) && m.configErr == nil:
			// No longer the configured goal: its pause is forgotten.
			_ = db.Goals().Remove(ctx, owner, r.ID)
		case r.Source != persistence.GoalFromPlanner:
		case cfg != nil && r.ID == cfg.ID:
			// The config goal of that id wins; the approved one stays
			// stored until the owner removes it or the config changes.
			m.goals = append(m.goals, loadedGoal{rec: r, dropped: "shadowed"})
		default:
			lg := loadedGoal{rec: r, goal: r.Goal}
			lg.token, lg.dropped = storedStanding(ctx, db, owner, r.Goal, now)
			m.goals = append(m.goals, lg)
		}
	}
	return m
}

// readGoalFile reads and parses the goal file of silas.active_goal.
func readGoalFile(path string) (*messages.WorkItem, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read silas.active_goal %s: %w", path, err)
	}
	g, err := plan.ParseGoal(string(b))
	if err != nil {
		return nil, fmt.Errorf("silas.active_goal %s: %w", path, err)
	}
	return g, nil
}

// onLoaded schedules the loaded goals and answers the ops that waited.
func (s *Scheduler) onLoaded(c actor.Context, m *goalsLoaded) {
	if m.configErr != nil {
		s.d.Log.Error().Err(m.configErr).Msg("active goal not scheduled; fix the goal file and restart")
		s.audit("", "goal_load_failed", map[string]any{"path": s.path, "error": m.configErr.Error()})
	}
	if m.listErr != nil {
		s.d.Log.Error().Err(m.listErr).Msg("stored goals not scheduled; restart silas, and run `silas audit verify` if it persists")
		s.audit("", "goal_load_failed", map[string]any{"error": m.listErr.Error()})
	}
	for _, lg := range m.goals {
		if lg.goal == nil {
			s.d.Log.Warn().Str("goal", lg.rec.ID).Msg("an approved goal has the id of silas.active_goal and is not scheduled; remove it with `silas goals remove` once the config goal changes")
			continue
		}
		g := s.newRun(lg.rec, lg.goal)
		g.token = lg.token
		switch {
		case lg.token != nil:
			s.audit(g.goal.ID, "standing_approval_restored", map[string]any{
				"executions_used": lg.token.ExecutionsUsed, "max_executions": lg.token.MaxExecutions, "expires_at": lg.token.ExpiresAt})
		case lg.dropped != "":
			s.audit(g.goal.ID, "standing_approval_discarded", map[string]any{"reason": lg.dropped})
		}
		if g.rec.Paused {
			s.audit(g.goal.ID, "goal_loaded_paused", map[string]any{"source": g.rec.Source})
			continue
		}
		s.scheduleRun(c, g)
	}
	s.loaded = true
	s.release(c)
}

// newRun registers a goalRun for goal.
func (s *Scheduler) newRun(rec persistence.Goal, goal *messages.WorkItem) *goalRun {
	s.gen++
	g := &goalRun{rec: rec, goal: goal, gen: s.gen}
	s.goals[goal.ID] = g
	return g
}

// scheduleRun starts g's cycles on its schedule; a schedule gocron refuses
// leaves the goal loaded but unscheduled, and says so.
func (s *Scheduler) scheduleRun(c actor.Context, g *goalRun) {
	if err := s.startJob(c, g); err != nil {
		s.d.Log.Error().Err(err).Str("goal", g.goal.ID).Msg("schedule the goal")
		s.audit(g.goal.ID, "goal_load_failed", map[string]any{"error": err.Error()})
		return
	}
	s.audit(g.goal.ID, "goal_scheduled", map[string]any{"schedule": *g.goal.Schedule, "source": g.rec.Source})
}

// startJob adds g's gocron job.
func (s *Scheduler) startJob(c actor.Context, g *goalRun) error {
	if s.cron == nil {
		return errors.New("the goal scheduler is not running")
	}
	every, cronLine, err := plan.Interval(*g.goal.Schedule) // CheckGoal checked it
	if err != nil {
		return err
	}
	def := gocron.CronJob(cronLine, false)
	if every > 0 {
		def = gocron.DurationJob(every)
	}
	self, root, tick := c.Self(), s.d.sys.Root, &goalTick{id: g.goal.ID, gen: g.gen}
	j, err := s.cron.NewJob(def, gocron.NewTask(func() { root.Send(self, tick) }), gocron.WithName(g.goal.ID))
	if err != nil {
		return fmt.Errorf("schedule %q: %w", *g.goal.Schedule, err)
	}
	g.job = j
	return nil
}

// stopJob removes g's gocron job, if it has one.
func (s *Scheduler) stopJob(g *goalRun) {
	if g.job == nil || s.cron == nil {
		g.job = nil
		return
	}
	if err := s.cron.RemoveJob(g.job.ID()); err != nil {
		s.d.Log.Warn().Err(err).Str("goal", g.goal.ID).Msg("unschedule the goal")
	}
	g.job = nil
}

// onOp performs an owner's op, or holds it until the goals are loaded and
// no other change is being stored.
func (s *Scheduler) onOp(c actor.Context, op *goalOp) {
	if !s.loaded || s.storing {
		s.held = append(s.held, op)
		return
	}
	if op.kind == opList {
		s.answer(c, op, &goalOpReply{goals: s.list()})
		return
	}
	g := s.goals[op.id]
	if op.kind == opAdd {
		if g != nil {
			s.answer(c, op, &goalOpReply{err: fmt.Errorf("a goal with the id %q is already scheduled (%w); remove it first with /goal remove %s, or ask for this goal under another id",
				op.id, persistence.ErrGoalExists, op.id)})
			return
		}
		rec := persistence.Goal{Goal: op.goal, ID: op.id, Source: persistence.GoalFromPlanner, AddedAt: s.d.now()}
		s.store(c, op, rec, func(ctx context.Context, db *persistence.DB, owner string) error {
			return db.Goals().Add(ctx, owner, rec, op.token)
		})
		return
	}
	if g == nil {
		s.answer(c, op, &goalOpReply{err: fmt.Errorf("goal %q: %w", op.id, ErrNoSuchGoal)})
		return
	}
	rec := g.rec
	switch op.kind {
	case opPause, opResume:
		if rec.Paused == (op.kind == opPause) {
			s.answer(c, op, &goalOpReply{goal: s.view(g)}) // already so
			return
		}
		rec.Paused, rec.PausedAt = op.kind == opPause, nil
		if rec.Paused {
			now := s.d.now()
			rec.PausedAt = &now
		}
		s.store(c, op, rec, func(ctx context.Context, db *persistence.DB, owner string) error {
			return db.Goals().Put(ctx, owner, rec)
		})
	case opRemove:
		if rec.Source == persistence.GoalFromConfig {
			s.answer(c, op, &goalOpReply{err: fmt.Errorf("goal %q: %w", op.id, ErrConfigGoal)})
			return
		}
		s.store(c, op, rec, func(ctx context.Context, db *persistence.DB, owner string) error {
			return db.Goals().Remove(ctx, owner, rec.ID)
		})
	}
}

// store writes op's change in the background; onStored applies it.
func (s *Scheduler) store(c actor.Context, op *goalOp, rec persistence.Goal, write func(ctx context.Context, db *persistence.DB, owner string) error) {
	s.storing = true
	self, root, db, owner := c.Self(), s.d.sys.Root, s.d.DB, s.d.Config.OwnerID
	reply := func(err error) { root.Send(self, &goalStored{op: op, rec: rec, err: err}) }
	if !s.d.tasks.Go("store goal "+op.kind.String(), func(ctx context.Context) { reply(write(ctx, db, owner)) }, reply) {
		reply(errShuttingDown)
	}
}

// onStored applies a stored change, answers it and goes on with the ops
// that waited.
func (s *Scheduler) onStored(c actor.Context, m *goalStored) {
	s.storing = false
	defer s.release(c)
	op := m.op
	if m.err != nil {
		s.d.Log.Warn().Err(m.err).Str("goal", op.id).Str("op", op.kind.String()).Msg("store the goal change")
		s.answer(c, op, &goalOpReply{err: fmt.Errorf("%s goal %q: the change could not be stored (%w); nothing changed, try again", op.kind, op.id, m.err)})
		return
	}
	data := map[string]any{"via": op.via}
	var g *goalRun
	switch op.kind {
	case opAdd:
		g = s.newRun(m.rec, op.goal)
		g.token = op.token
		data["schedule"], data["title"] = *op.goal.Schedule, op.goal.Title
		if op.token != nil {
			data["max_executions"], data["expires_at"] = op.token.MaxExecutions, op.token.ExpiresAt
		}
		s.audit(g.goal.ID, "goal_added", data)
		s.scheduleRun(c, g)
	case opPause:
		g = s.goals[op.id]
		g.rec = m.rec
		s.stopJob(g)
		s.audit(g.goal.ID, "goal_paused", data)
	case opResume:
		g = s.goals[op.id]
		g.rec = m.rec
		s.audit(g.goal.ID, "goal_resumed", data)
		s.scheduleRun(c, g)
	case opRemove:
		g = s.goals[op.id]
		s.stopJob(g)
		delete(s.goals, op.id)
		s.audit(g.goal.ID, "goal_removed", data)
	}
	v := s.view(g)
	if op.kind == opRemove {
		v.Status, v.NextRun, v.Busy = GoalRemoved, nil, false
	}
	s.answer(c, op, &goalOpReply{goal: v})
}

// release performs the ops that waited, in order, until one has to wait
// again.
func (s *Scheduler) release(c actor.Context) {
	held := s.held
	s.held = nil
	for i, op := range held {
		if s.storing {
			s.held = append(s.held, held[i:]...)
			return
		}
		s.onOp(c, op)
	}
}

// answer replies to op: to the future that asked, or on the chat sink of
// a command, acknowledging its message first.
func (s *Scheduler) answer(c actor.Context, op *goalOp, r *goalOpReply) {
	if op.sink == nil {
		if op.sender != nil {
			c.Send(op.sender, r)
		}
		return
	}
	op.sink.Send(&messages.AckEvent{Type: "ack", MessageID: op.messageID})
	op.sink.Send(&messages.AnswerEvent{Type: messages.EventMessage, Text: goalCommandText(op, r), Sender: "silas",
		Timestamp: s.d.now(), ReplyTo: op.messageID})
}

// list returns every goal's view, by id.
func (s *Scheduler) list() []GoalView {
	out := make([]GoalView, 0, len(s.goals))
	for _, g := range s.goals {
		out = append(out, s.view(g))
	}
	slices.SortFunc(out, func(a, b GoalView) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// view is g as the owner sees it.
func (s *Scheduler) view(g *goalRun) GoalView {
	v := GoalView{ID: g.goal.ID, Title: g.goal.Title, Schedule: *g.goal.Schedule, Source: g.rec.Source, Status: GoalActive,
		AddedAt: g.rec.AddedAt, PausedAt: g.rec.PausedAt, LastOutcome: g.lastOutcome, Runs: g.runs, Busy: g.running}
	if g.rec.Paused {
		v.Status = GoalPaused
	}
	if g.job != nil {
		if next, err := g.job.NextRun(); err == nil && !next.IsZero() {
			next = next.UTC()
			v.NextRun = &next
		}
	}
	if !g.lastRun.IsZero() {
		last := g.lastRun
		v.LastRun = &last
	}
	if t := g.token; t != nil {
		v.Standing = &StandingView{ExecutionsUsed: t.ExecutionsUsed, MaxExecutions: t.MaxExecutions, ExpiresAt: t.ExpiresAt}
	}
	return v
}

// audit writes an entry about goal id ("" for none) to the audit log.
func (s *Scheduler) audit(id, event string, data map[string]any) {
	if id != "" {
		data["goal_id"] = id
	}
	s.d.sys.Root.Send(s.d.audit, &messages.AuditEvent{Time: s.d.now(), Event: event, Scope: s.d.Config.OwnerID, Data: data})
}

// storedStanding reads the goal's stored standing token. A token that no
// longer fits the goal (the goal file changed, or it expired) is deleted
// and its reason returned: the owner is asked again. A store that cannot
// be read only costs that question, so it is logged as a reason too.
func storedStanding(ctx context.Context, db *persistence.DB, owner string, goal *messages.WorkItem, now time.Time) (*messages.ApprovalToken, string) {
	tok, err := db.WorkItems().Standing(ctx, owner, goal.ID)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		return nil, ""
	case err != nil:
		return nil, "read the stored standing token: " + err.Error()
	}
	hash, err := messages.WorkItemPlanHash(goal)
	var why string
	switch {
	case err != nil:
		why = "hash the goal: " + err.Error()
	case tok.WorkItemID != goal.ID || tok.Scope != messages.ApprovalStanding || tok.PlanHash != hash:
		why = "the goal changed since it was approved"
	case !now.Before(tok.ExpiresAt):
		why = "it expired"
	default:
		return tok, ""
	}
	if err := db.WorkItems().DeleteStanding(ctx, owner, goal.ID); err != nil {
		why += "; delete it: " + err.Error()
	}
	return nil, why
}
