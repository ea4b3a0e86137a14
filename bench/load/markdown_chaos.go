package load

import (
	"fmt"
	"strings"
)

// writeChaos renders the chaos scenario: the verdict, the totals, the
// recovery times and every kill.
func (r *Report) writeChaos(b *strings.Builder) {
	c := r.Chaos
	if c == nil {
		return
	}
	afterSend := 0
	for _, k := range c.Kills {
		if k.Kind == KillAfterSend {
			afterSend++
		}
	}
	b.WriteString("### Chaos: kill -9 under load\n\n")
	fmt.Fprintf(b, "%d customers chat with silas (model %g ms, up to %d unanswered messages each) while silas is killed with SIGKILL %d times "+
		"(%d of them a few milliseconds after a customer's send) and restarted on the same data directory; customers reconnect, resume their session with its token "+
		"and send every unanswered message again with the same message_id. Seed %d, %.1f s.\n\n",
		c.Customers, c.DelayMS, c.Window, len(c.Kills), afterSend, c.Seed, c.WallSeconds)
	if fs := c.Failures(); len(fs) > 0 {
		fmt.Fprintf(b, "**FAILED:** %s.\n\n", strings.Join(fs, "; "))
	} else {
		fmt.Fprintf(b, "**Passed:** no acknowledged message lost, no turn answered twice with different answers; %d answer copies redelivered with the same bytes.\n\n", c.Redelivered)
	}
	b.WriteString("| messages | frames sent (resends) | acked | answered | acked, lost | never acked | answered twice differently | redelivered | answered without ack | not from the model | turns/s | reconnects | resume failures | errors |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(b, "| %d | %d (%d) | %d | %d | %d | %d | %d | %d | %d | %d | %.0f | %d | %d | %s |\n\n",
		c.Messages, c.Sends, c.Sends-c.Messages, c.Acked, c.Answered, c.Lost, c.NeverAcked, c.Conflicts, c.Redelivered,
		c.AnsweredWithoutAck, c.NotFromModel, c.TurnsPerSecond, c.Reconnects, c.ResumeFailures, failedText(c.Errors))
	rc := c.Recovery
	b.WriteString("| recovery | p50 | max |\n|---|---|---|\n")
	fmt.Fprintf(b, "| kill → restarted silas ready | %.0f ms | %.0f ms |\n", rc.Ready.P50, rc.Ready.Max)
	fmt.Fprintf(b, "| kill → first new answer | %.0f ms | %.0f ms |\n", rc.FirstAnswer.P50, rc.FirstAnswer.Max)
	fmt.Fprintf(b, "| kill → every message acked before it answered | %.0f ms | %.0f ms |\n\n", rc.Recovered.P50, rc.Recovered.Max)
	b.WriteString("| kill | at | kind | landed | in flight, not acked | acked, unanswered | ready (ms) | first answer (ms) | acked answered (ms) | redelivered |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range c.Kills {
		kind := k.Kind
		if k.Kind == KillAfterSend {
			kind = fmt.Sprintf("%s +%.0f ms", k.Kind, k.AfterSendMS)
		}
		fmt.Fprintf(b, "| %d | %.1f s | %s | %s | %d | %d | %s | %s | %s | %d |\n",
			k.N, k.AtSeconds, kind, orDash(k.Landed), k.InFlight, k.AckedOpen,
			msOrNever(k.ReadyMS), msOrNever(k.FirstAnswerMS), msOrNever(k.RecoveredMS), k.Redelivered)
	}
	b.WriteString("\n")
	if c.ResumeError != "" {
		fmt.Fprintf(b, "First resume failure: %s\n\n", c.ResumeError)
	}
	for _, t := range c.LostTraces {
		fmt.Fprintf(b, "Lost %s: first sent at %.3f s, acked at %.3f s, sent %d times (last at %.3f s); kills after its ack: %v (the first at %.3f s).\n\n",
			t.MessageID, t.FirstSentAt, t.AckedAt, t.Sends, t.LastSentAt, t.KillsAfterAck, t.FirstKillAt)
	}
	if len(c.NeverAckedIDs) > 0 {
		fmt.Fprintf(b, "Never acknowledged nor answered: %s\n\n", strings.Join(c.NeverAckedIDs, ", "))
	}
	if x := c.Conflict; x != nil {
		fmt.Fprintf(b, "Answered twice differently, %s:\n\n```\n%s\n%s\n```\n\n", x.MessageID, x.First, x.Again)
	}
	fmt.Fprintf(b, "silas wrote %d warning or error lines over %d processes.\n\n", c.Server.LogLines, c.Server.Processes)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// msOrNever renders milliseconds, "never" for a negative value.
func msOrNever(v float64) string {
	if v < 0 {
		return "never"
	}
	return fmt.Sprintf("%.0f", v)
}
