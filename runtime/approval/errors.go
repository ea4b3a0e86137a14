package approval

import "errors"

// Sentinel errors, wrapped with context; test with errors.Is. Unless a
// sentinel says otherwise, the caller's next step is the spec's: at the
// execution entry gate (Check, spec 5.2.1 step 0) set the work item to
// blocked, audit "execution_blocked_no_approval" with the error as reason,
// persist and return; at an authorization site (Verify, spec 5.1.2 and
// 5.2.3) do not attach the token and do not execute: ask the user for a
// fresh approval or block the work item.
var (
	// ErrNoToken means the work item carries no approval token. Whatever its
	// needs_approval says, it must not execute: audit
	// "execution_blocked_no_approval" and block it, or ask for an approval.
	ErrNoToken = errors.New("approval: no approval token")

	// ErrInvalidToken means the token is malformed (a field fails
	// messages.ApprovalToken.Validate). It cannot authorize anything: audit
	// "execution_blocked_no_approval" and block the work item.
	ErrInvalidToken = errors.New("approval: malformed approval token")

	// ErrBadSignature means the signature does not verify under the owner
	// key, the only key tokens are signed with: the token was forged, signed
	// by another key (an owner device's included) or altered after signing.
	// Audit "execution_blocked_no_approval", block the work item, and treat
	// it as a security event.
	ErrBadSignature = errors.New("approval: token signature does not verify")

	// ErrDeclined means the decision or the token declines the work. Issue
	// no token: mark the work item blocked (declined) and tell the user it
	// will not run.
	ErrDeclined = errors.New("approval: declined")

	// ErrEditRequested means the user asked for changes instead of
	// approving. Issue no token: send the plan back to the planner for a
	// revision, which needs a fresh approval.
	ErrEditRequested = errors.New("approval: edit requested")

	// ErrPlanHashMismatch means the work item's plan is not the one the token
	// approved (a byte of it changed after approval), or, at Check, a spawned
	// task is not the one a standing token authorized. Audit
	// "execution_blocked_no_approval" and block; a changed plan needs a fresh
	// approval.
	ErrPlanHashMismatch = errors.New("approval: plan hash mismatch")

	// ErrWorkItemMismatch means the token names another work item. Audit
	// "execution_blocked_no_approval" and block.
	ErrWorkItemMismatch = errors.New("approval: token was issued for another work item")

	// ErrParentMismatch means a task presented under a standing token is not
	// a child of the goal the token approved. Do not execute it under that
	// token: ask for an interactive approval (spec 5.2.3 fallback) or block.
	ErrParentMismatch = errors.New("approval: task is not a child of the approved goal")

	// ErrSpawnPolicyMismatch means a spawned task departs from the goal's
	// approved spawn policy (skills, gates, checks, escalations or the
	// failure_context template), or the goal's policy is not the one the
	// standing token binds. Fall back to an interactive approval of the task
	// (spec 5.2.3) or block it.
	ErrSpawnPolicyMismatch = errors.New("approval: spawned task does not match the approved spawn policy")

	// ErrSpawnedTaskRequired means a standing token was verified without the
	// spawned task it is to authorize. This is a bug at the call site: pass
	// the goal and the spawned task (spec 5.2.3).
	ErrSpawnedTaskRequired = errors.New("approval: standing verification requires spawned_task")

	// ErrScopeMismatch means a spawned task was presented with a token that
	// is not a standing token. Only standing tokens authorize spawned tasks;
	// approve the task interactively with its own token (spec 5.2.3).
	ErrScopeMismatch = errors.New("approval: only a standing token authorizes a spawned task")

	// ErrExpired means the token's expires_at has passed. Ask the user for a
	// fresh approval, or block the work item.
	ErrExpired = errors.New("approval: token expired")

	// ErrExhausted means the token has already been used max_executions
	// times. For a standing token, fall back to an interactive approval of
	// the spawned task (spec 5.2.3); otherwise ask for a fresh approval.
	ErrExhausted = errors.New("approval: token executions exhausted")

	// ErrReplay means an execution of this token was already consumed in the
	// nonce store: a stale copy of the token is being verified again. Refuse
	// the execution, audit it as a replay attempt, and reload the work item.
	ErrReplay = errors.New("approval: token replay refused")

	// ErrNotVerified means Check was given a token that no consuming Verify
	// authorized for this work item. Audit "execution_blocked_no_approval"
	// and block; authorization sites must call Verify first.
	ErrNotVerified = errors.New("approval: token was never verified for this work item")

	// ErrInvalidDecision means the approval decision is malformed (unknown
	// verdict or strength, or it sets a runtime-reserved condition). Issue
	// no token; the channel that built the decision has a bug.
	ErrInvalidDecision = errors.New("approval: invalid approval decision")

	// ErrInvalidRequest means the engine was called without a work item, or
	// IssueToken was asked for something it cannot sign: an unknown scope,
	// a standing token for a work item that is not a goal with a
	// failure_context template, or max_executions outside the configured
	// limits. Fix the call site.
	ErrInvalidRequest = errors.New("approval: invalid issue request")

	// ErrInvalidConfig means New was given an unusable configuration; the
	// daemon refuses to start and names the setting.
	ErrInvalidConfig = errors.New("approval: invalid configuration")
)
