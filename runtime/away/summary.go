package away

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/silas-ai/silas/persistence"
)

// maxListed bounds the titles one line lists.
const maxListed = 5

// Window is the span a summary covers.
type Window struct {
	// Since is the owner's previous visit; zero: none recorded, and the
	// summary covers what the entries hold.
	Since time.Time
	Now   time.Time
	// Truncated is true when the caller stopped reading before Since: the
	// summary says that older entries were not counted.
	Truncated bool
}

// entryData is the subset of audit data fields the summary reads.
type entryData struct {
	WorkItemID string `json:"work_item_id"`
	Title      string `json:"title"`
	GoalID     string `json:"goal_id"`
	Reason     string `json:"reason"`
	Passed     *bool  `json:"passed"`
	Error      string `json:"error"`
	Stage      string `json:"stage"`
	Gate       string `json:"gate"`
}

// counts is what happened, by kind.
type counts struct {
	turns                                 int
	asked, approved, declined, expired    int
	started, done, failed, blocked, escal []string // work item ids, first seen order
	goalRuns, goalPassed, goalFailed      int
	goalFixes                             int
	goals                                 []string
	errors                                []string
	securityRefusals                      int
	titles                                map[string]string
}

// Summarize describes entries (oldest first, the owner's and unscoped
// ones; entries of other scopes are skipped) that fall in w.
func Summarize(entries []persistence.AuditEntry, ownerID string, w Window) string {
	c := counts{titles: map[string]string{}}
	for _, e := range entries {
		if e.Scope != "" && e.Scope != ownerID {
			continue
		}
		if !w.Since.IsZero() && !e.Time.After(w.Since) {
			continue
		}
		c.add(e)
	}
	return c.render(w)
}

func (c *counts) add(e persistence.AuditEntry) {
	var d entryData
	if len(e.Data) > 0 {
		_ = json.Unmarshal(e.Data, &d) // unknown shapes leave fields empty
	}
	if d.WorkItemID != "" && d.Title != "" {
		c.titles[d.WorkItemID] = d.Title
	}
	switch e.Event {
	case "turn_completed":
		c.turns++
	case "turn_failed":
		c.errors = append(c.errors, "a reply could not be finished"+stageNote(d.Stage))
	case "approval_requested":
		c.asked++
	case "approval_granted":
		c.approved++
	case "approval_declined":
		switch d.Reason {
		case "", "declined":
			c.declined++
		case "timeout", "no_owner_connection", "shutdown":
			c.expired++
		default:
			c.declined++
		}
	case "approval_failed":
		c.errors = append(c.errors, "an approval could not be recorded")
	case "approval_refused":
		c.securityRefusals++
	case "execution_started":
		c.started = addOnce(c.started, d.WorkItemID)
	case "work_item_done":
		c.done = addOnce(c.done, d.WorkItemID)
	case "work_item_failed":
		c.failed = addOnce(c.failed, d.WorkItemID)
	case "work_item_blocked":
		c.blocked = addOnce(c.blocked, d.WorkItemID)
	case "work_item_escalated":
		c.escal = addOnce(c.escal, d.WorkItemID)
	case "goal_cycle":
		c.goalRuns++
		c.goals = addOnce(c.goals, d.GoalID)
		if d.Passed != nil && *d.Passed {
			c.goalPassed++
		} else {
			c.goalFailed++
		}
	case "goal_check_error":
		c.goalRuns++
		c.goals = addOnce(c.goals, d.GoalID)
		c.errors = append(c.errors, "a check of goal "+d.GoalID+" could not run")
	case "goal_fix_started":
		c.goalFixes++
	case "goal_load_failed":
		c.errors = append(c.errors, "a goal could not be loaded")
	}
}

func addOnce(list []string, id string) []string {
	if id == "" {
		id = "?"
	}
	for _, x := range list {
		if x == id && id != "?" {
			return list
		}
	}
	return append(list, id)
}

func stageNote(stage string) string {
	if stage == "" {
		return ""
	}
	return " (at " + stage + ")"
}

func (c *counts) render(w Window) string {
	var b strings.Builder
	switch {
	case w.Since.IsZero():
		b.WriteString("Here is what I did, from the audit log (I have no earlier visit of yours on record):\n")
	default:
		fmt.Fprintf(&b, "Since your last visit (%s UTC, %s ago), from the audit log:\n",
			w.Since.UTC().Format(time.DateTime), roughly(w.Now.Sub(w.Since)))
	}
	lines := 0
	line := func(format string, a ...any) {
		lines++
		fmt.Fprintf(&b, "- "+format+"\n", a...)
	}
	if c.turns > 0 {
		line("Answered %d %s.", c.turns, plural(c.turns, "message", "messages"))
	}
	if n := len(c.started); n > 0 {
		line("Worked on %d %s: %s.", n, plural(n, "task", "tasks"), c.list(c.started))
	}
	if n := len(c.done); n > 0 {
		line("Finished %d: %s.", n, c.list(c.done))
	}
	if n := len(c.failed); n > 0 {
		line("Gave up on %d after its attempts: %s.", n, c.list(c.failed))
	}
	if n := len(c.blocked); n > 0 {
		line("Stopped %d at a gate or check: %s.", n, c.list(c.blocked))
	}
	if n := len(c.escal); n > 0 {
		line("%d %s your decision: %s.", n, plural(n, "task needs", "tasks need"), c.list(c.escal))
	}
	if c.asked+c.approved+c.declined+c.expired > 0 {
		line("Approvals: asked %d, you approved %d, declined %d; %d ran out of time or found no app open.", c.asked, c.approved, c.declined, c.expired)
	}
	if c.goalRuns > 0 {
		line("Ran %d goal %s (%s): %d passed, %d did not.", c.goalRuns, plural(c.goalRuns, "check", "checks"), strings.Join(c.goals, ", "), c.goalPassed, c.goalRuns-c.goalPassed)
	}
	if c.goalFixes > 0 {
		line("Started %d fix %s under a goal's standing approval.", c.goalFixes, plural(c.goalFixes, "task", "tasks"))
	}
	if c.securityRefusals > 0 {
		line("Refused %d %s that lacked its confirmation; nothing ran.", c.securityRefusals, plural(c.securityRefusals, "approval", "approvals"))
	}
	if n := len(c.errors); n > 0 {
		shown := c.errors
		if n > maxListed {
			shown = shown[:maxListed]
		}
		line("%d %s: %s%s.", n, plural(n, "problem", "problems"), strings.Join(shown, "; "), more(n))
	}
	if lines == 0 {
		b.WriteString("- Nothing: no tasks, approvals, goal checks or errors.\n")
	}
	if w.Truncated {
		b.WriteString("\nThe log was long, so only its newest entries are counted here; the Activity tab has the rest.\n")
	} else {
		b.WriteString("\nThe Activity tab has each step.\n")
	}
	return b.String()
}

// list names work items by title where a plan gave one.
func (c *counts) list(ids []string) string {
	names := make([]string, 0, min(len(ids), maxListed))
	for _, id := range ids[:min(len(ids), maxListed)] {
		if t := c.titles[id]; t != "" {
			names = append(names, fmt.Sprintf("%q", t))
		} else {
			names = append(names, id)
		}
	}
	return strings.Join(names, ", ") + more(len(ids))
}

func more(n int) string {
	if n <= maxListed {
		return ""
	}
	return fmt.Sprintf(" and %d more", n-maxListed)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// roughly renders d for people: minutes, hours or days.
func roughly(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		m := int(d / time.Minute)
		return fmt.Sprintf("%d %s", m, plural(m, "minute", "minutes"))
	case d < 48*time.Hour:
		h := int(d / time.Hour)
		return fmt.Sprintf("%d %s", h, plural(h, "hour", "hours"))
	}
	days := int(d / (24 * time.Hour))
	return fmt.Sprintf("%d days", days)
}
