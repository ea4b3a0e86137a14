package actors

import (
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
)

// Errors of the owner's goal commands (System.PauseGoal and the others,
// /goal in chat, `silas goals`).
var (
	// ErrNoSuchGoal: no scheduled goal has that id; list them with
	// `silas goals list` (or /goals in chat) and use one of those ids.
	ErrNoSuchGoal = errors.New("no such goal")
	// ErrGoalsUnavailable: this process runs no scheduler, because plan
	// execution is not configured (no approval engine or sandbox); run
	// goals through `silas serve`.
	ErrGoalsUnavailable = errors.New("goals are not available: plan execution is not configured in this process")
	// ErrConfigGoal: the goal comes from silas.active_goal and cannot be
	// removed at runtime; pause it, or remove it from the config and
	// restart.
	ErrConfigGoal = errors.New("the goal comes from silas.active_goal; pause it, or take it out of the config file and restart silas")
)

// Goal states as the owner sees them; GoalRemoved only in the answer to
// a removal.
const (
	GoalActive  = "active"
	GoalPaused  = "paused"
	GoalRemoved = "removed"
)

// GoalView is one scheduled goal as the owner's app, `silas goals` and
// /goals in chat show it (docs/owner-api.md "Goals").
type GoalView struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Schedule string `json:"schedule"`
	// Source is "planner" (proposed in chat and approved) or "config"
	// (silas.active_goal).
	Source string `json:"source"`
	// Status is "active" or "paused".
	Status   string     `json:"status"`
	AddedAt  time.Time  `json:"added_at"`
	PausedAt *time.Time `json:"paused_at,omitempty"`
	// NextRun is when the next cycle starts; absent while paused.
	NextRun *time.Time `json:"next_run,omitempty"`
	// LastRun and LastOutcome are the last cycle since Silas started
	// ("passed", "failed: <checks>", "check error: ..."), Runs how many
	// cycles started since then, and Busy whether one is in flight (its
	// check, or the authorization of its fix task).
	LastRun     *time.Time `json:"last_run,omitempty"`
	LastOutcome string     `json:"last_outcome,omitempty"`
	Runs        int        `json:"runs"`
	Busy        bool       `json:"busy"`
	// Standing is the goal's standing approval as it stands; absent when
	// it has none (never asked, declined, exhausted or expired: the next
	// failing check asks the owner again).
	Standing *StandingView `json:"standing,omitempty"`
}

// StandingView is a goal's standing approval: how many fix tasks it
// authorized of how many, and until when.
type StandingView struct {
	ExecutionsUsed int       `json:"executions_used"`
	MaxExecutions  int       `json:"max_executions"`
	ExpiresAt      time.Time `json:"expires_at"`
}

// goalOpKind is what a goalOp asks of the Scheduler.
type goalOpKind int

const (
	opList goalOpKind = iota
	opAdd
	opPause
	opResume
	opRemove
)

func (k goalOpKind) String() string {
	return [...]string{"list", "add", "pause", "resume", "remove"}[k]
}

// goalOp asks the Scheduler to list, add, pause, resume or remove goals.
// Sender: System (a future), a Scope's IO goroutine (add, a future) or a
// Scope for a chat command (sink set). Receiver: the Scheduler, which
// answers a future with *goalOpReply, and a chat command on its sink: an
// ack of messageID, then a message that replies to it.
type goalOp struct {
	kind goalOpKind
	id   string
	// goal and token are the approved goal and its standing token (add).
	goal  *messages.WorkItem
	token *messages.ApprovalToken
	// via is who asked, for the audit: "api", "chat" or "plan".
	via string
	// sink and messageID: a chat command; nil sink answers the sender.
	sink      messages.Sink
	messageID string
	sender    *actor.PID
}

// goalOpReply answers a goalOp: the goal as it is after the change (the
// removed goal for remove), or every goal (list).
type goalOpReply struct {
	goal  GoalView
	goals []GoalView
	err   error
}
