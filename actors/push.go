package actors

import (
	"context"

	"github.com/silas-ai/silas/messages"
)

// Notifier tells an owner with no app open that a card waits for them
// (Web Push; *notify.Pusher implements it). NotifyPending does network IO
// and is called from a task, never from a mailbox; it sends at most once
// per request id.
type Notifier interface {
	NotifyPending(ctx context.Context, requestID, title string)
}

// notifyAway pushes a notification of p's card when the owner scope asked
// it with no owner connection attached (a goal's approval, a re-plan, a
// turn replayed after a restart, a turn whose app closed meanwhile). With a
// connection attached the card is on the owner's screen already, and
// Telegram, once paired, is such a connection.
func (s *Scope) notifyAway(p *pendingApproval) {
	if s.kind != messages.ScopeOwner || len(s.sinks) > 0 || s.d.Notifier == nil || p.event == nil {
		return
	}
	n, id, title := s.d.Notifier, p.event.RequestID, p.event.Title
	s.d.tasks.Go("web push", func(ctx context.Context) { n.NotifyPending(ctx, id, title) }, nil)
}
