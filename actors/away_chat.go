package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/away"
)

// Reading the audit log for "what did you do while I was away?".
const (
	// awayChunk is how many entries one read takes, walking back.
	awayChunk = 512
	// maxAwayScan bounds the entries one answer reads; the answer says so
	// when it stopped before the owner's last visit.
	maxAwayScan = 20000
)

// onAwayQuestion answers the owner's "what did you do while I was away?"
// from the audit log since the visit before the current one (the app
// records a visit when it opens, so the last one is this one), like a goal
// command: not a turn, no model. The log is read in a task, off the
// mailbox, and the answer goes to the asking connection.
func (s *Scope) onAwayQuestion(c actor.Context, m *messages.UserMessage) {
	send(m.Sink, &messages.AckEvent{Type: "ack", MessageID: m.MessageID})
	db, owner, now, log := s.d.DB, s.id, s.d.now(), s.d.Log
	answer := func(text string) {
		send(m.Sink, &messages.AnswerEvent{Type: messages.EventMessage, Text: text, Sender: "silas", Timestamp: now, ReplyTo: m.MessageID})
	}
	s.d.tasks.Go("away summary", func(ctx context.Context) {
		text, err := awaySummary(ctx, db, owner, now)
		if err != nil {
			log.Warn().Err(err).Msg("away summary")
			answer("I could not read the audit log just now (" + err.Error() + "); the Activity tab shows what I did.")
			return
		}
		answer(text)
	}, func(err error) { answer("I could not put the summary together; the Activity tab shows what I did.") })
}

// awaySummary reads the audit entries since the owner's previous visit,
// newest first up to maxAwayScan, and summarizes them.
func awaySummary(ctx context.Context, db *persistence.DB, owner string, now time.Time) (string, error) {
	since, err := db.OwnerVisits().Before(ctx)
	if err == nil && since.IsZero() {
		since, err = db.OwnerVisits().Last(ctx)
	}
	if err != nil {
		return "", err
	}
	head, _, err := db.Audit().Head(ctx)
	if err != nil {
		return "", fmt.Errorf("read the audit head: %w", err)
	}
	w := away.Window{Since: since, Now: now}
	var picked []persistence.AuditEntry // newest first
	cursor, scanned := head+1, 0
walk:
	for cursor > 1 {
		from := uint64(1)
		if cursor > awayChunk {
			from = cursor - awayChunk
		}
		entries, err := db.Audit().Range(ctx, from, int(cursor-from))
		if err != nil {
			return "", fmt.Errorf("read the audit log: %w", err)
		}
		for i := len(entries) - 1; i >= 0; i-- {
			e := entries[i]
			if !since.IsZero() && !e.Time.After(since) {
				break walk
			}
			if scanned++; scanned > maxAwayScan {
				w.Truncated = true
				break walk
			}
			picked = append(picked, e)
		}
		cursor = from
	}
	for i, j := 0, len(picked)-1; i < j; i, j = i+1, j-1 {
		picked[i], picked[j] = picked[j], picked[i]
	}
	return away.Summarize(picked, owner, w), nil
}
