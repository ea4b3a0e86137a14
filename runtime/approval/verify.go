package approval

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/silas-ai/silas/messages"
)

// Verify is the consuming verification of spec 5.11, called at an
// authorization site before execution is allowed: 5.1.2 (an interactively
// approved plan: spawned is nil) and 5.2.3 (a goal's standing token: w is
// the goal, spawned the fix task it spawned).
//
// It checks, in the spec's order: the signature over
// messages.TokenSignedBytes; the binding (single-use: t.plan_hash equals
// the plan hash of w; standing: the goal's plan hash, spawned.parent equal
// to t.work_item_id, and spawned following the policy bound by
// conditions.spawn_policy_hash, see CheckSpawnedTask); expiry;
// executions_used < max_executions. It then consumes one execution (see
// the package doc), appends the execution nonce to t.ExecutionNonces and
// increments t.ExecutionsUsed. The caller persists the work item carrying
// t (for a standing token, a copy of the updated t is attached to the
// spawned task).
//
// A nil error means authorized. Errors wrap the package's sentinels. If
// the nonce store fails after the execution slot was taken, that execution
// is lost (fail closed) and t is left unchanged.
func (e *Engine) Verify(ctx context.Context, t *messages.ApprovalToken, w, spawned *messages.WorkItem) error {
	if err := e.verifyCommon(t, w); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	var bound string // plan hash of the work item this execution authorizes
	var err error
	if t.Scope == messages.ApprovalStanding {
		bound, err = e.bindStanding(t, w, spawned)
	} else {
		bound, err = e.bindSingle(t, w, spawned)
	}
	if err != nil {
		return fmt.Errorf("verify token %s: %w", t.TokenID, err)
	}
	now := e.now()
	if err := checkExpiry(t, now); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if t.ExecutionsUsed >= t.MaxExecutions {
		return fmt.Errorf("verify token %s: used %d of %d executions: %w", t.TokenID, t.ExecutionsUsed, t.MaxExecutions, ErrExhausted)
	}

	execNonce, err := e.randomHex(32)
	if err != nil {
		return fmt.Errorf("verify token %s: %w", t.TokenID, err)
	}
	ttl := t.ExpiresAt.Sub(now) + e.cfg.NonceTTL
	slot := slotKey(t.TokenID, t.ExecutionsUsed+1)
	fresh, err := e.nonces.Consume(ctx, DomainExecSlot, slot, ttl)
	if err != nil {
		return fmt.Errorf("verify token %s: consume execution slot: %w", t.TokenID, err)
	}
	if !fresh {
		return fmt.Errorf("verify token %s: execution %d of %d was already consumed by another copy of the token: %w",
			t.TokenID, t.ExecutionsUsed+1, t.MaxExecutions, ErrReplay)
	}
	fresh, err = e.nonces.Consume(ctx, DomainExec, execKey(t.TokenID, bound, execNonce), ttl)
	if err != nil {
		return fmt.Errorf("verify token %s: consume execution nonce: %w", t.TokenID, err)
	}
	if !fresh {
		return fmt.Errorf("verify token %s: execution nonce already used: %w", t.TokenID, ErrReplay)
	}
	t.ExecutionNonces = append(t.ExecutionNonces, execNonce)
	t.ExecutionsUsed++
	return nil
}

// Check is the non-consuming validation of spec 5.11, called at the
// execution entry gate (spec 5.2.1 step 0) with the work item about to run
// and the token attached to it. It checks the signature; the binding
// (single-use: t.plan_hash equals the plan hash of w; standing: w.parent
// equals t.work_item_id); expiry; 1 <= executions_used <= max_executions;
// and that the nonce store holds the content-bound key of one of
// t.ExecutionNonces for the plan hash of w, which proves a consuming Verify
// authorized exactly this work item (for a standing token this re-checks
// the spawned task's policy binding). It consumes nothing and does not
// modify t.
//
// A nil error means the work item may execute. Any error means: block it
// and audit "execution_blocked_no_approval" with the error as reason.
func (e *Engine) Check(ctx context.Context, t *messages.ApprovalToken, w *messages.WorkItem) error {
	if err := e.verifyCommon(t, w); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	bound, err := messages.WorkItemPlanHash(w)
	if err != nil {
		return fmt.Errorf("check token %s: %w", t.TokenID, err)
	}
	standing := t.Scope == messages.ApprovalStanding
	if standing {
		if w.Parent == nil || *w.Parent != t.WorkItemID {
			return fmt.Errorf("check token %s: task %s has parent %s, the token approves goal %s: %w",
				t.TokenID, w.ID, parentOf(w), t.WorkItemID, ErrParentMismatch)
		}
	} else if err := bindPlan(t, w, bound); err != nil {
		return fmt.Errorf("check token %s: %w", t.TokenID, err)
	}
	if err := checkExpiry(t, e.now()); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if t.ExecutionsUsed < 1 {
		return fmt.Errorf("check token %s: no execution was authorized yet: %w", t.TokenID, ErrNotVerified)
	}
	finished := false
	for _, n := range t.ExecutionNonces {
		key := execKey(t.TokenID, bound, n)
		used, err := e.nonces.IsUsed(ctx, DomainExec, key)
		if err != nil {
			return fmt.Errorf("check token %s: look up execution nonce: %w", t.TokenID, err)
		}
		if !used {
			continue
		}
		done, err := e.nonces.IsUsed(ctx, DomainExecDone, key)
		if err != nil {
			return fmt.Errorf("check token %s: look up finished execution: %w", t.TokenID, err)
		}
		if !done {
			return nil
		}
		finished = true
	}
	if finished {
		return fmt.Errorf("check token %s: the execution it authorized for work item %s already ran to its end: %w",
			t.TokenID, w.ID, ErrReplay)
	}
	if standing {
		return fmt.Errorf("check token %s: task %s (plan hash %s) is not a task the standing token authorized: %w",
			t.TokenID, w.ID, bound, ErrPlanHashMismatch)
	}
	return fmt.Errorf("check token %s: none of its %d executions was verified for work item %s: %w",
		t.TokenID, len(t.ExecutionNonces), w.ID, ErrNotVerified)
}

// verifyCommon checks presence, shape, signature and verdict.
func (e *Engine) verifyCommon(t *messages.ApprovalToken, w *messages.WorkItem) error {
	if t == nil {
		if w != nil {
			return fmt.Errorf("work item %s: %w", w.ID, ErrNoToken)
		}
		return ErrNoToken
	}
	if w == nil {
		return fmt.Errorf("token %s: no work item: %w", t.TokenID, ErrInvalidRequest)
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	msg, err := messages.TokenSignedBytes(t)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if _, ok := e.signer.VerifyOwnerSignature(msg, t.Signature); !ok {
		return fmt.Errorf("token %s: %w", t.TokenID, ErrBadSignature)
	}
	switch t.Verdict {
	case messages.VerdictDeclined:
		return fmt.Errorf("token %s: %w", t.TokenID, ErrDeclined)
	case messages.VerdictEditRequested:
		return fmt.Errorf("token %s: %w", t.TokenID, ErrEditRequested)
	}
	return nil
}

// bindSingle is verify step 2 for a token that is not standing.
func (e *Engine) bindSingle(t *messages.ApprovalToken, w, spawned *messages.WorkItem) (string, error) {
	if spawned != nil {
		return "", fmt.Errorf("scope %s with spawned task %s: %w", t.Scope, spawned.ID, ErrScopeMismatch)
	}
	h, err := messages.WorkItemPlanHash(w)
	if err != nil {
		return "", err
	}
	return h, bindPlan(t, w, h)
}

// bindStanding is verify step 2 for a standing token: the goal's plan
// hash, then the spawned task's parent and policy binding. It returns the
// spawned task's plan hash.
func (e *Engine) bindStanding(t *messages.ApprovalToken, goal, spawned *messages.WorkItem) (string, error) {
	if spawned == nil {
		return "", ErrSpawnedTaskRequired
	}
	h, err := messages.WorkItemPlanHash(goal)
	if err != nil {
		return "", err
	}
	if err := bindPlan(t, goal, h); err != nil {
		return "", err
	}
	if err := CheckSpawnedTask(goal, spawned, t.SpawnPolicyHash()); err != nil {
		return "", err
	}
	return messages.WorkItemPlanHash(spawned)
}

// bindPlan compares the token's plan hash and work item ID with w's.
func bindPlan(t *messages.ApprovalToken, w *messages.WorkItem, planHash string) error {
	if planHash != t.PlanHash {
		return fmt.Errorf("work item %s has plan hash %s, the token approved %s: %w", w.ID, planHash, t.PlanHash, ErrPlanHashMismatch)
	}
	if w.ID != t.WorkItemID {
		return fmt.Errorf("work item %s, the token approved %s: %w", w.ID, t.WorkItemID, ErrWorkItemMismatch)
	}
	return nil
}

// checkExpiry fails once now reaches t.ExpiresAt.
func checkExpiry(t *messages.ApprovalToken, now time.Time) error {
	if !now.Before(t.ExpiresAt) {
		return fmt.Errorf("token %s expired at %s: %w", t.TokenID, t.ExpiresAt.UTC().Format(messages.TokenTimeLayout), ErrExpired)
	}
	return nil
}

// execKey is the content-bound execution key of spec 5.11 verify step 7.
func execKey(tokenID, hash, execNonce string) string {
	return tokenID + ":" + hash + ":" + execNonce
}

// slotKey names execution n (1-based) of a token.
func slotKey(tokenID string, n int) string {
	return tokenID + ":" + strconv.Itoa(n)
}

func parentOf(w *messages.WorkItem) string {
	if w.Parent == nil {
		return "(none)"
	}
	return *w.Parent
}

// Complete records that the execution t authorized for w ran to its end
// (done, failed or stuck), so that Check refuses t for w from then on: a
// token replayed for a second run of the same work item is blocked at the
// execution entry gate. It marks every execution of t bound to w's plan
// hash; the keys live as long as the execution keys themselves. It is
// idempotent and modifies neither t nor w.
func (e *Engine) Complete(ctx context.Context, t *messages.ApprovalToken, w *messages.WorkItem) error {
	if t == nil || w == nil {
		return fmt.Errorf("complete: token and work item are required: %w", ErrInvalidRequest)
	}
	bound, err := messages.WorkItemPlanHash(w)
	if err != nil {
		return fmt.Errorf("complete token %s: %w", t.TokenID, err)
	}
	ttl := t.ExpiresAt.Sub(e.now()) + e.cfg.NonceTTL
	if ttl <= 0 {
		return nil // the execution keys are gone: Check fails on expiry anyway
	}
	for _, n := range t.ExecutionNonces {
		key := execKey(t.TokenID, bound, n)
		used, err := e.nonces.IsUsed(ctx, DomainExec, key)
		if err != nil {
			return fmt.Errorf("complete token %s: look up execution nonce: %w", t.TokenID, err)
		}
		if !used {
			continue
		}
		if _, err := e.nonces.Consume(ctx, DomainExecDone, key, ttl); err != nil {
			return fmt.Errorf("complete token %s: record finished execution: %w", t.TokenID, err)
		}
	}
	return nil
}
