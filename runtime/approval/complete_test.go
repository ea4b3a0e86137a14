package approval_test

import (
	"context"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/approval"
)

func TestCompletedExecutionIsRefusedByCheck(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	w := task(t)
	tok := f.issue(t, w, messages.ApprovalFullPlan)
	wantErr(t, "verify", f.engine.Verify(ctx, tok, w, nil), nil)
	stored := clone(t, tok) // the copy journaled with the work item
	wantErr(t, "check while running", f.engine.Check(ctx, tok, w), nil)
	wantErr(t, "complete", f.engine.Complete(ctx, tok, w), nil)
	wantErr(t, "complete again", f.engine.Complete(ctx, tok, w), nil)
	// A second run of the same work item with the same token, or with the
	// copy stored before it finished, is a replay.
	wantErr(t, "check after completion", f.engine.Check(ctx, tok, w), approval.ErrReplay)
	wantErr(t, "check the stored copy", f.engine.Check(ctx, stored, w), approval.ErrReplay)
	wantErr(t, "verify again", f.engine.Verify(ctx, stored, w, nil), approval.ErrExhausted)
	wantErr(t, "complete without token", f.engine.Complete(ctx, nil, w), approval.ErrInvalidRequest)
}

func TestCompletedFixTaskLeavesOtherFixTasksRunnable(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	g := goal(t)
	tok := f.issue(t, g, messages.ApprovalStanding, approval.WithMaxExecutions(2), approval.WithTTL(24*time.Hour))
	first := spawnFix(g, "fix-1", "health: exit code 7")
	second := spawnFix(g, "fix-2", "health: exit code 8")
	wantErr(t, "verify first", f.engine.Verify(ctx, tok, g, first), nil)
	wantErr(t, "verify second", f.engine.Verify(ctx, tok, g, second), nil)
	wantErr(t, "complete first", f.engine.Complete(ctx, tok, first), nil)
	wantErr(t, "check finished first", f.engine.Check(ctx, tok, first), approval.ErrReplay)
	wantErr(t, "check running second", f.engine.Check(ctx, tok, second), nil)
}
