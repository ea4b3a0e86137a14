package plan

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/approval"
)

// OnFailureSpawnTask is the on_failure value of a goal that spawns a fix
// task when a check fails (spec 5.2.3).
const OnFailureSpawnTask = "spawn_task"

// everyPrefix starts a schedule given as an interval ("@every 30s"), the
// robfig/cron descriptor a goal's schedule may use besides a cron line.
const everyPrefix = "@every "

// ErrNotAGoal is returned by ParseGoal for a plan that cannot run as a
// scheduled goal.
var ErrNotAGoal = errors.New("plan: not a scheduled goal")

// ParseGoal parses a goal file (silas.active_goal): a plan of type goal
// with a cron or "@every <duration>" schedule and verification checks;
// on_failure spawn_task also needs a failure_context template. always_on
// goals run as a stream, not on a schedule, and are refused here. The
// owner wrote the file, so its gates may run host commands (ParseOwner).
func ParseGoal(markdown string) (*messages.WorkItem, error) {
	w, err := ParseOwner(markdown)
	if err != nil {
		return nil, err
	}
	if err := CheckGoal(w); err != nil {
		return nil, err
	}
	return w, nil
}

// CheckGoal reports whether w, a parsed plan, can run as a scheduled goal:
// the rules of ParseGoal, for a goal the planner proposed (parsed with
// Parse). Every error matches ErrNotAGoal.
func CheckGoal(w *messages.WorkItem) error {
	switch {
	case w.Type != messages.WorkGoal:
		return fmt.Errorf("%w: %s is a %s; set type: goal", ErrNotAGoal, w.ID, w.Type)
	case w.Schedule == nil || *w.Schedule == messages.ScheduleAlwaysOn:
		return fmt.Errorf("%w: goal %s needs a schedule (a cron line or \"@every 10m\")", ErrNotAGoal, w.ID)
	case len(w.Verify) == 0:
		return fmt.Errorf("%w: goal %s has no verify checks to run on its schedule", ErrNotAGoal, w.ID)
	case w.OnFailure == OnFailureSpawnTask && (w.FailureContext == nil || strings.TrimSpace(*w.FailureContext) == ""):
		return fmt.Errorf("%w: goal %s spawns fix tasks but has no failure_context template", ErrNotAGoal, w.ID)
	}
	if _, _, err := Interval(*w.Schedule); err != nil {
		return fmt.Errorf("%w: goal %s: %w", ErrNotAGoal, w.ID, err)
	}
	return nil
}

// Interval reads a goal schedule: an "@every <duration>" schedule returns
// the duration; any other schedule is a cron line, returned as is.
func Interval(schedule string) (every time.Duration, cron string, err error) {
	rest, ok := strings.CutPrefix(schedule, everyPrefix)
	if !ok {
		return 0, schedule, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(rest))
	if err != nil || d < time.Second {
		return 0, "", fmt.Errorf("schedule %q: want @every with a duration of at least 1s", schedule)
	}
	return d, "", nil
}

// FixTask is the fix task goal spawns when its checks fail (spec 5.2.3): a
// task whose parent is the goal, whose body is the goal's failure_context
// with $failed_checks replaced by failedChecks, and which carries the
// goal's skills, gates, checks, escalations and budget. It is what
// approval.CheckSpawnedTask accepts under the goal's standing token.
func FixTask(goal *messages.WorkItem, id, failedChecks string) *messages.WorkItem {
	w := messages.NewWorkItem(id, messages.WorkTask, "Fix: "+goal.Title)
	parent := goal.ID
	w.Parent, w.SpawnedBy = &parent, &parent
	template := ""
	if goal.FailureContext != nil {
		template = *goal.FailureContext
	}
	w.Body = approval.FillFailureContext(template, failedChecks)
	w.Budget = goal.Budget
	w.Skills = slices.Clone(goal.Skills)
	w.Gates = slices.Clone(goal.Gates)
	w.Verify = slices.Clone(goal.Verify)
	w.Escalation = maps.Clone(goal.Escalation)
	w.Domain = goal.Domain
	return w
}
