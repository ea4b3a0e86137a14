package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
)

// pendingApprovalsRequest asks a scope for its pending approval requests.
// Sender: System.PendingApprovals (a future). Receiver: a Scope. Reply:
// *pendingApprovalsReply.
type pendingApprovalsRequest struct{}

type pendingApprovalsReply struct {
	approvals []messages.ApprovalRequestEvent
}

// PendingApprovals returns the approval requests the owner's scope ownerID
// waits on, so that a client can tell its live cards from dead ones after a
// reconnect. The scope asks one thing at a time, so there is at most one.
func (s *System) PendingApprovals(ctx context.Context, ownerID string) ([]messages.ApprovalRequestEvent, error) {
	timeout := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if timeout <= 0 {
		return nil, context.DeadlineExceeded
	}
	root := s.d.sys.Root
	res, err := root.RequestFuture(s.d.stream, &messages.ScopeFor{ScopeID: ownerID, Kind: messages.ScopeOwner}, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("find the owner scope: %w", err)
	}
	ref, ok := res.(*messages.ScopeRef)
	if !ok || ref.PID == nil {
		return nil, fmt.Errorf("find the owner scope: unexpected answer %T", res)
	}
	res, err = root.RequestFuture(ref.PID, &pendingApprovalsRequest{}, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("ask the owner scope for pending approvals: %w", err)
	}
	r, ok := res.(*pendingApprovalsReply)
	if !ok {
		return nil, fmt.Errorf("ask the owner scope for pending approvals: unexpected answer %T", res)
	}
	return r.approvals, nil
}

// onPendingApprovals answers with the approval the scope waits on, if any.
// A scope still loading has none yet: a replayed turn asks only once loaded.
func (s *Scope) onPendingApprovals(c actor.Context) {
	r := &pendingApprovalsReply{approvals: []messages.ApprovalRequestEvent{}}
	if p := s.approval; p != nil && p.event != nil {
		r.approvals = append(r.approvals, *p.event)
	}
	c.Respond(r)
}
