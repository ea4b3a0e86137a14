package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	slogzerolog "github.com/samber/slog-zerolog/v2"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/metrics"
)

// maxDeliveryAttempts is how many starts may try a journaled message before
// it is dead-lettered: a message that crashes the process every time must
// not keep it from coming back up.
const maxDeliveryAttempts = 3

// signatureFreshness bounds the age of a signed message's timestamp
// (spec 5.1 step 2).
const signatureFreshness = 5 * time.Minute

// System is a running actor system: the Stream, its scopes, the Audit
// writer and the connections.
type System struct {
	d *shared
	// scheduler runs the owner's scheduled goals; nil when plans cannot
	// execute.
	scheduler *actor.PID
	// consolidator merges duplicate memories on a schedule (spec 6.4).
	consolidator *actor.PID
}

// Start recovers journaled work and starts the actors.
func Start(ctx context.Context, d Deps) (*System, error) {
	if d.Config == nil || d.DB == nil || d.Models == nil || d.Sessions == nil {
		return nil, errors.New("actors: Config, DB, Models and Sessions are required")
	}
	if d.Metrics == nil {
		d.Metrics = metrics.NewRegistry()
	}
	handler := slogzerolog.Option{Level: slog.LevelWarn, Logger: &d.Log}.NewZerologHandler()
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(handler) }))
	sh := &shared{
		Deps:    d,
		sys:     sys,
		tasks:   newTasks(d.Log),
		admit:   newAdmission(d.Config.Backpressure.MaxPendingTurnsTotal, d.Config.Backpressure.OwnerReservedTurns, d.Config.Backpressure.MaxPendingTurnsPerIP),
		metrics: metrics.NewStandard(d.Metrics),
	}
	sh.pool = newExecutorPool(d.Config.Limits.MaxParallelExecutors, d.Config.Limits.MaxParallelExecutorsPerScope,
		func(pid *actor.PID) { sys.Root.Send(pid, &executorSlotFreed{}) })
	policy, err := accessPolicy(d)
	if err != nil {
		return nil, err
	}
	sh.access = policy
	sh.dispatch = newWorkers(0)
	sh.props = []actor.PropsOption{actor.WithReceiverMiddleware(logPanics(d.Log)), actor.WithDispatcher(sh.dispatch)}
	sh.formats = make(map[string]*llm.ResponseFormat)
	for _, name := range llm.SchemaNames() {
		sh.formats[name] = llm.Format(name)
	}

	scopes, err := recoverQueue(ctx, sh)
	if err != nil {
		return nil, err
	}
	sh.audit, err = sys.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return newAudit(sh) }, sh.props...), "audit")
	if err != nil {
		return nil, fmt.Errorf("spawn audit: %w", err)
	}
	if d.SkillInstaller != nil {
		// Before the Stream: scopes forward card answers to it.
		o := *d.SkillInstaller
		props := actor.PropsFromProducer(func() actor.Actor { return newSkillInstaller(sh, o) }, sh.props...)
		if sh.skills, err = sys.Root.SpawnNamed(props, "skills"); err != nil {
			return nil, fmt.Errorf("spawn skill installer: %w", err)
		}
	}
	// Before the Stream too: the owner scope forwards connection cards' answers.
	sh.conns = newConnRegistry()
	connProps := actor.PropsFromProducer(func() actor.Actor { return newConnectionManager(sh) }, sh.props...)
	if sh.connections, err = sys.Root.SpawnNamed(connProps, "connections"); err != nil {
		return nil, fmt.Errorf("spawn connection manager: %w", err)
	}
	// Before the Stream too: scopes nudge the memory vector writer.
	if err := startMemory(sh); err != nil {
		return nil, err
	}
	streamProps := actor.PropsFromProducer(func() actor.Actor { return newStream(sh) },
		append(sh.props, actor.WithSupervisor(scopeSupervisor()))...)
	sh.stream, err = sys.Root.SpawnNamed(streamProps, "stream")
	if err != nil {
		return nil, fmt.Errorf("spawn stream: %w", err)
	}
	sys.Root.Send(sh.stream, &startScopes{ids: scopes})
	sys.Root.Send(sh.audit, &messages.AuditEvent{Time: sh.now(), Event: "stream_started", Data: map[string]any{"recovered_scopes": len(scopes)}})
	s := &System{d: sh}
	if sh.canExecute() {
		// Goals the owner approved run even without silas.active_goal.
		path := ""
		if scheduled(d.Goal) {
			path = d.Config.ActiveGoal
		}
		props := actor.PropsFromProducer(func() actor.Actor { return newScheduler(sh, path) }, sh.props...)
		if s.scheduler, err = sys.Root.SpawnNamed(props, schedulerName); err != nil {
			return nil, fmt.Errorf("spawn goal scheduler: %w", err)
		}
	}
	cons := actor.PropsFromProducer(func() actor.Actor { return newConsolidator(sh) }, sh.props...)
	if s.consolidator, err = sys.Root.SpawnNamed(cons, "consolidator"); err != nil {
		return nil, fmt.Errorf("spawn memory consolidator: %w", err)
	}
	return s, nil
}

// recoverQueue counts one more delivery attempt for every journaled message
// that did not finish before the last stop, dead-letters those out of
// attempts, and returns the scopes that have work: journaled messages or
// unfinished work items.
func recoverQueue(ctx context.Context, d *shared) ([]string, error) {
	q := d.DB.Queue()
	pending, err := q.Pending(ctx)
	if err != nil {
		return nil, fmt.Errorf("recover queued messages: %w", err)
	}
	seen := make(map[string]bool)
	var scopes []string
	for _, r := range pending {
		if r.Attempts >= maxDeliveryAttempts {
			reason := fmt.Sprintf("turn did not finish in %d starts", r.Attempts)
			if err := q.DeadLetter(ctx, r.ScopeID, r.MessageID, reason); err != nil {
				return nil, fmt.Errorf("dead-letter %s: %w", r.MessageID, err)
			}
			d.Log.Warn().Str("scope", r.ScopeID).Str("message_id", r.MessageID).Msg("message dead-lettered: " + reason)
			continue
		}
		if err := q.Lease(ctx, r.ScopeID, r.MessageID, time.Now().Add(time.Hour)); err != nil {
			return nil, fmt.Errorf("lease %s: %w", r.MessageID, err)
		}
		if !seen[r.ScopeID] {
			seen[r.ScopeID] = true
			scopes = append(scopes, r.ScopeID)
		}
	}
	// Scopes with unfinished work items start too, to resume them.
	active, err := d.DB.WorkItems().Scopes(ctx)
	if err != nil {
		return nil, fmt.Errorf("recover work items: %w", err)
	}
	for _, id := range active {
		if !seen[id] {
			seen[id] = true
			scopes = append(scopes, id)
		}
	}
	return scopes, nil
}

// Gateway is what the web channel attaches sockets to.
func (s *System) Gateway() messages.Gateway { return &gateway{d: s.d} }

// Pending returns the number of turns waiting or running across all scopes.
func (s *System) Pending() int64 { return s.d.admit.depth() }

// Stop drains the scopes (the turn in flight in each finishes; queued ones
// stay journaled for the next start), flushes the audit log and stops every
// actor. Close the channels first so that no new message arrives.
func (s *System) Stop(ctx context.Context) error {
	root := s.d.sys.Root
	var errs []error
	if s.scheduler != nil {
		// No goal cycle starts once the scopes drain.
		_ = root.PoisonFuture(s.scheduler).Wait()
	}
	if s.consolidator != nil {
		_ = root.PoisonFuture(s.consolidator).Wait()
	}
	if s.d.vectorWriter != nil {
		_ = root.PoisonFuture(s.d.vectorWriter).Wait()
	}
	if s.d.skills != nil {
		// Pending install cards end with the process; nothing installs.
		_ = root.PoisonFuture(s.d.skills).Wait()
	}
	if s.d.connections != nil {
		// Setups in flight stop; a connection left connecting goes back
		// to proposed at the next start.
		_ = root.PoisonFuture(s.d.connections).Wait()
	}
	if err := await(ctx, root, s.d.stream, &messages.Drain{}); err != nil {
		errs = append(errs, fmt.Errorf("drain scopes: %w", err))
	}
	if err := await(ctx, root, s.d.audit, &messages.Flush{}); err != nil {
		errs = append(errs, fmt.Errorf("flush audit: %w", err))
	}
	_ = root.PoisonFuture(s.d.stream).Wait()
	_ = root.PoisonFuture(s.d.audit).Wait()
	s.d.tasks.Close()
	s.d.sys.Shutdown()
	s.d.dispatch.Stop()
	return errors.Join(errs...)
}

// await sends msg as a request and waits for the reply until ctx ends.
func await(ctx context.Context, root *actor.RootContext, pid *actor.PID, msg any) error {
	timeout := time.Minute
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if timeout <= 0 {
		return context.DeadlineExceeded
	}
	res, err := root.RequestFuture(pid, msg, timeout).Result()
	if err != nil {
		return err
	}
	if f, ok := res.(*messages.Flushed); ok && f.Err != nil {
		return f.Err
	}
	return nil
}

// scheduled reports whether the active goal has verification cycles to
// schedule. An always_on goal configures the Stream itself (a chatbot's
// gates and access levels, models 3.3) and has none.
func scheduled(goal *messages.WorkItem) bool {
	return goal != nil && goal.Schedule != nil && *goal.Schedule != messages.ScheduleAlwaysOn
}
