// Package approval is the Approval Engine of spec 5.11: it mints Ed25519
// approval tokens for work items (IssueToken), verifies them at an
// authorization site while consuming one execution (Verify), and re-checks
// them at the execution entry gate without consuming anything (Check). It
// enforces invariants INV-01 (executable work needs a cryptographically
// verified token) and INV-02 (tokens are bound to the exact plan and
// replay-protected).
//
// The engine is pure apart from the three things it is given: a Signer (the
// key manager, runtime/keys.Manager), a NonceStore (persistence.Nonces, or
// MemoryNonces in tests) and a clock. It starts no goroutines and holds no
// state between calls; Verify records each execution on the token it is
// passed (ExecutionsUsed, ExecutionNonces) and the caller persists the work
// item carrying it.
//
// # Signing key
//
// Tokens are signed and verified with the owner key only. Spec 5.11 has the
// daemon mint a token after the owner approves (IssueToken signs it with
// the owner key, step 7), and no client ever sends a token of its own, so
// there is nothing a device key would need to sign. Owner device keys
// (runtime/devices) vouch for chat messages alone (owner taint, spec 5.12);
// accepting them here would let one stolen browser key mint executable
// approvals. Revoking a device therefore never invalidates a token.
//
// # Binding
//
// A token signs messages.TokenSignedBytes, which includes the plan hash of
// the approved work item (messages.WorkItemPlanHash). A single-use token
// authorizes exactly that work item: change one byte of its plan and both
// Verify and Check fail with ErrPlanHashMismatch. A standing token
// (scope "standing") is issued for a goal and authorizes the fix tasks the
// goal spawns (spec 5.2.3): Verify is given the goal and the spawned task
// and checks the goal's plan hash, the task's parent, and that the task
// follows the goal's spawn policy bound by conditions.spawn_policy_hash
// (see CheckSpawnedTask).
//
// # Replay protection
//
// Every Verify generates a fresh random execution nonce and consumes, in
// the nonce store domain "exec", the content-bound key
// "{token_id}:{hash}:{execution_nonce}", where hash is the plan hash of the
// authorized work item (for a standing token: of the spawned task). Because
// a random nonce alone cannot stop a stale copy of a token from being
// verified again, Verify also consumes the execution slot
// "{token_id}:{n}" in the domain "exec_slot" (n = executions_used + 1), so
// that all copies of a token together authorize at most max_executions
// executions. Both keys are remembered until the token expires plus
// nonce_store.ttl_minutes. Verifying the same token value twice past its
// limit fails with ErrExhausted; verifying a stale copy whose counter lags
// fails with ErrReplay.
//
// When a work item finishes, Complete records its execution as spent in
// the domain "exec_done" (same content-bound key); Check refuses a spent
// execution with ErrReplay, so a stored copy of a finished work item, or
// its token replayed for a second run, is blocked at the entry gate.
//
// Check proves that a consuming Verify happened for this exact work item:
// besides 1 <= executions_used <= max_executions it looks up the
// content-bound key of one of the token's execution nonces in the nonce
// store. For a standing token that lookup is what re-checks the spawned
// task's policy binding, since Check is given only the task, not the goal.
package approval
