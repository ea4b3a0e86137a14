package actors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/go-co-op/gocron/v2"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/plan"
)

// Scheduler runs the active goal (silas.active_goal, spec 5.2.3): it loads
// the goal file at start and runs one goal cycle on the goal's schedule.
// gocron owns the timing; its jobs only send goalTick to the actor, so
// Receive never blocks. Cycles never overlap, and a cycle is skipped while
// a fix task of the goal is still active (spec 5.2.3 runs the fix task
// within the cycle).
//
// The owner is asked for the goal's standing token when a check first
// fails. The token, as it stands after each verification, is stored with
// the work items (persistence.WorkItems.PutStanding), so that a restarted
// Scheduler keeps using it until it is exhausted or expires.
type Scheduler struct {
	d    *shared
	path string
	cron gocron.Scheduler
	goal *messages.WorkItem
	cycle
}

// goalLoaded carries the parsed goal file and its stored standing token,
// if one is still usable. Sender: a Scheduler IO goroutine. Receiver: the
// Scheduler.
type goalLoaded struct {
	goal  *messages.WorkItem
	token *messages.ApprovalToken
	// dropped says why a stored token was discarded.
	dropped string
	err     error
}

// goalTick starts a goal cycle. Sender: a gocron job. Receiver: the
// Scheduler.
type goalTick struct{}

func newScheduler(d *shared, path string) *Scheduler { return &Scheduler{d: d, path: path} }

// Receive handles the goal's lifecycle and cycle messages.
func (s *Scheduler) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		s.load(c)
	case *goalLoaded:
		s.onLoaded(c, m)
	case *goalTick:
		s.onTick(c)
	case *goalChecked:
		s.onChecked(c, m)
	case *standingVerified:
		s.onStandingVerified(c, m)
	case *ownerVerdict:
		s.onVerdict(c, m)
	case *ownerRetry:
		s.sendToOwner(c, m.msg)
	case *messages.ScopeRef:
		s.onScopeRef(c, m)
	case *actor.Stopping, *actor.Restarting:
		// A restarted Scheduler loads the goal and schedules it afresh.
		if s.cron != nil {
			if err := s.cron.Shutdown(); err != nil {
				s.d.Log.Warn().Err(err).Msg("stop goal scheduler")
			}
		}
	}
}

func (s *Scheduler) load(c actor.Context) {
	self, root, path, db, owner, now := c.Self(), s.d.sys.Root, s.path, s.d.DB, s.d.Config.OwnerID, s.d.now
	reply := func(m *goalLoaded) { root.Send(self, m) }
	if !s.d.tasks.Go("load active goal", func(ctx context.Context) {
		b, err := os.ReadFile(path)
		if err != nil {
			reply(&goalLoaded{err: fmt.Errorf("read silas.active_goal %s: %w", path, err)})
			return
		}
		g, err := plan.ParseGoal(string(b))
		if err != nil {
			reply(&goalLoaded{err: fmt.Errorf("silas.active_goal %s: %w", path, err)})
			return
		}
		m := &goalLoaded{goal: g}
		m.token, m.dropped = storedStanding(ctx, db, owner, g, now())
		reply(m)
	}, func(err error) { reply(&goalLoaded{err: err}) }) {
		reply(&goalLoaded{err: errShuttingDown})
	}
}

// onLoaded schedules the goal's cycles.
func (s *Scheduler) onLoaded(c actor.Context, m *goalLoaded) {
	if m.err != nil {
		s.d.Log.Error().Err(m.err).Msg("active goal not scheduled; fix the goal file and restart")
		s.audit("goal_load_failed", map[string]any{"path": s.path, "error": m.err.Error()})
		return
	}
	s.goal, s.token = m.goal, m.token
	switch {
	case m.token != nil:
		s.audit("standing_approval_restored", map[string]any{
			"executions_used": m.token.ExecutionsUsed, "max_executions": m.token.MaxExecutions, "expires_at": m.token.ExpiresAt})
	case m.dropped != "":
		s.audit("standing_approval_discarded", map[string]any{"reason": m.dropped})
	}
	every, cronLine, _ := plan.Interval(*m.goal.Schedule) // ParseGoal checked it
	def := gocron.CronJob(cronLine, false)
	if every > 0 {
		def = gocron.DurationJob(every)
	}
	cron, err := gocron.NewScheduler()
	if err == nil {
		self, root := c.Self(), s.d.sys.Root
		_, err = cron.NewJob(def, gocron.NewTask(func() { root.Send(self, &goalTick{}) }))
	}
	if err != nil {
		s.d.Log.Error().Err(err).Str("goal", m.goal.ID).Msg("schedule the active goal")
		s.audit("goal_load_failed", map[string]any{"path": s.path, "error": err.Error()})
		return
	}
	s.cron = cron
	cron.Start()
	s.audit("goal_scheduled", map[string]any{"schedule": *m.goal.Schedule})
}

func (s *Scheduler) audit(event string, data map[string]any) {
	if s.goal != nil {
		data["goal_id"] = s.goal.ID
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
