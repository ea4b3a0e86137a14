package actors

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// The owner's goal commands in chat (docs/owner-api.md "Goals"):
//
//	/goals                 list the scheduled goals
//	/goal pause <id>       no check or fix task starts until resumed
//	/goal resume <id>      back on its schedule
//	/goal remove <id>      unschedule it and forget its standing approval
//
// "/goals <verb> <id>" works the same. A command is not a turn: no model
// sees it, and the Scheduler answers it once the change is stored.
const goalUsage = "Goal commands: /goals lists your goals; /goal pause <id>, /goal resume <id> and /goal remove <id> change one."

// isGoalCommand reports whether an owner message is a goal command.
func isGoalCommand(text string) bool {
	f := strings.Fields(text)
	return len(f) > 0 && (f[0] == "/goals" || f[0] == "/goal")
}

// parseGoalCommand reads a goal command: what it asks and of which goal.
func parseGoalCommand(text string) (goalOpKind, string, error) {
	f := strings.Fields(text)[1:]
	if len(f) == 0 || (len(f) == 1 && f[0] == "list") {
		return opList, "", nil
	}
	kinds := map[string]goalOpKind{"pause": opPause, "resume": opResume, "remove": opRemove, "delete": opRemove}
	k, ok := kinds[strings.ToLower(f[0])]
	switch {
	case !ok:
		return 0, "", fmt.Errorf("%q is no goal command. %s", f[0], goalUsage)
	case len(f) != 2:
		return 0, "", fmt.Errorf("name one goal: /goal %s <id>; /goals lists the ids", strings.ToLower(f[0]))
	}
	return k, f[1], nil
}

// onGoalCommand performs an owner's goal command: the Scheduler answers
// it on the sender's connection (goalOp). A malformed command, or one
// this process cannot run, is answered here.
func (s *Scope) onGoalCommand(c actor.Context, m *messages.UserMessage) {
	kind, id, err := parseGoalCommand(m.Text)
	if err == nil && !s.d.canExecute() {
		err = ErrGoalsUnavailable
	}
	if err != nil {
		send(m.Sink, &messages.AckEvent{Type: "ack", MessageID: m.MessageID})
		send(m.Sink, &messages.AnswerEvent{Type: messages.EventMessage, Text: upperFirst(err.Error()), Sender: "silas",
			Timestamp: s.d.now(), ReplyTo: m.MessageID})
		return
	}
	c.Send(s.d.sys.NewLocalPID(schedulerName), &goalOp{kind: kind, id: id, via: "chat", sink: m.Sink, messageID: m.MessageID})
}

// goalCommandText is the chat answer to a goal command.
func goalCommandText(op *goalOp, r *goalOpReply) string {
	switch {
	case errors.Is(r.err, ErrNoSuchGoal):
		return fmt.Sprintf("There is no goal %q; /goals lists your goals.", op.id)
	case errors.Is(r.err, ErrConfigGoal):
		return fmt.Sprintf("The goal %q comes from silas.active_goal, so it cannot be removed here: pause it with /goal pause %s, or take it out of the config file and restart Silas.", op.id, op.id)
	case r.err != nil:
		return upperFirst(r.err.Error())
	}
	g := r.goal
	switch op.kind {
	case opList:
		return goalListText(r.goals)
	case opPause:
		return fmt.Sprintf("Paused %s (%s): no check or fix task starts until you resume it with /goal resume %s.", g.ID, g.Title, g.ID)
	case opResume:
		return fmt.Sprintf("Resumed %s (%s): it runs on its schedule again (%s).", g.ID, g.Title, g.Schedule)
	case opRemove:
		return fmt.Sprintf("Removed %s (%s) and its standing approval; it no longer runs.", g.ID, g.Title)
	}
	return ""
}

// goalListText lists goals for chat, one line each.
func goalListText(goals []GoalView) string {
	if len(goals) == 0 {
		return "You have no scheduled goals. Ask me to keep an eye on something (\"check every hour that the site is up\"): I propose it as a goal for you to approve."
	}
	var b strings.Builder
	b.WriteString("Your goals:\n")
	for _, g := range goals {
		fmt.Fprintf(&b, "- **%s** (%s): %s, %s", g.ID, g.Title, g.Status, g.Schedule)
		if g.Source == persistence.GoalFromConfig {
			b.WriteString(", from silas.active_goal")
		}
		if g.NextRun != nil {
			fmt.Fprintf(&b, ", next check %s UTC", g.NextRun.UTC().Format(time.DateTime))
		}
		if g.LastOutcome != "" {
			fmt.Fprintf(&b, ", last check: %s", g.LastOutcome)
		}
		if st := g.Standing; st != nil {
			fmt.Fprintf(&b, "; standing approval: %d of %d fix tasks used, until %s UTC", st.ExecutionsUsed, st.MaxExecutions, st.ExpiresAt.UTC().Format(time.DateTime))
		} else {
			b.WriteString("; no standing approval: a failing check asks you")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n" + goalUsage)
	return b.String()
}

// upperFirst capitalizes the first letter of an error text for chat.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
