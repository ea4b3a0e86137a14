package approval_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/approval"
	"github.com/silas-ai/silas/runtime/devices"
	"github.com/silas-ai/silas/runtime/keys"
)

func TestIssueTokenFields(t *testing.T) {
	f := newFixture(t)
	f.clock.advance(1500 * time.Millisecond) // issued_at is rounded down to the second
	w := task(t)
	d := decision(messages.VerdictConditional)
	d.Conditions = map[string]any{"only_after": "18:00", "limits": map[string]any{"files": 3}}
	tok, err := f.engine.IssueToken(w, d, messages.ApprovalFullPlan)
	if err != nil {
		t.Fatal(err)
	}
	planHash, err := messages.WorkItemPlanHash(w)
	if err != nil {
		t.Fatal(err)
	}
	issued := time.Date(2026, 3, 1, 12, 0, 1, 0, time.UTC)
	switch {
	case tok.PlanHash != planHash:
		t.Errorf("plan_hash %s, want %s", tok.PlanHash, planHash)
	case tok.WorkItemID != w.ID || tok.Scope != messages.ApprovalFullPlan || tok.Verdict != messages.VerdictConditional:
		t.Errorf("work_item_id %s scope %s verdict %s", tok.WorkItemID, tok.Scope, tok.Verdict)
	case !tok.IssuedAt.Equal(issued) || !tok.ExpiresAt.Equal(issued.Add(30*time.Minute)):
		t.Errorf("issued_at %s expires_at %s, want %s + 30m", tok.IssuedAt, tok.ExpiresAt, issued)
	case tok.MaxExecutions != 1 || tok.ExecutionsUsed != 0 || len(tok.ExecutionNonces) != 0:
		t.Errorf("max_executions %d executions_used %d nonces %v", tok.MaxExecutions, tok.ExecutionsUsed, tok.ExecutionNonces)
	case tok.ApprovalStrength != messages.StrengthTap:
		t.Errorf("approval_strength %q", tok.ApprovalStrength)
	case !strings.HasPrefix(tok.TokenID, "apt-") || len(tok.Nonce) != 64:
		t.Errorf("token_id %q nonce %q", tok.TokenID, tok.Nonce)
	case tok.Conditions["only_after"] != "18:00":
		t.Errorf("conditions %v lost the decision's conditions", tok.Conditions)
	}
	if err := tok.Validate(); err != nil {
		t.Fatalf("issued token does not validate: %v", err)
	}
	// The token owns its conditions: changing the decision afterwards does
	// not change (and so does not invalidate) the token.
	d.Conditions["limits"].(map[string]any)["files"] = 300
	wantErr(t, "verify after the decision changed", f.engine.Verify(context.Background(), tok, w, nil), nil)

	other, err := f.engine.IssueToken(w, approve(), messages.ApprovalFullPlan)
	if err != nil {
		t.Fatal(err)
	}
	if other.TokenID == tok.TokenID || other.Nonce == tok.Nonce {
		t.Errorf("two tokens share token_id or nonce: %s/%s", other.TokenID, other.Nonce)
	}
}

func TestIssueStandingToken(t *testing.T) {
	f := newFixture(t)
	g := goal(t)
	d := approve()
	d.Conditions = map[string]any{"note": "weekdays"}
	tok, err := f.engine.IssueToken(g, d, messages.ApprovalStanding, approval.WithMaxExecutions(5), approval.WithTTL(7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	sph, err := messages.SpawnPolicyHash(g)
	if err != nil {
		t.Fatal(err)
	}
	if tok.SpawnPolicyHash() != sph || tok.Conditions["note"] != "weekdays" {
		t.Errorf("conditions %v, want spawn_policy_hash %s and the decision's note", tok.Conditions, sph)
	}
	if tok.MaxExecutions != 5 || !tok.ExpiresAt.Equal(tok.IssuedAt.Add(7*24*time.Hour)) {
		t.Errorf("max_executions %d, lifetime %s", tok.MaxExecutions, tok.ExpiresAt.Sub(tok.IssuedAt))
	}
}

func TestIssueTokenRefuses(t *testing.T) {
	noTemplate := func(t *testing.T) *messages.WorkItem {
		g := goal(t)
		g.FailureContext = nil
		return g
	}
	withCondition := func(d messages.ApprovalDecision) messages.ApprovalDecision {
		d.Conditions = map[string]any{messages.ConditionSpawnPolicyHash: strings.Repeat("0", 64)}
		return d
	}
	badCondition := func(d messages.ApprovalDecision) messages.ApprovalDecision {
		d.Conditions = map[string]any{"big": int64(1<<53 + 1)} // a double cannot hold it exactly
		return d
	}
	cases := []struct {
		name  string
		item  func(*testing.T) *messages.WorkItem
		d     messages.ApprovalDecision
		scope messages.ApprovalScope
		opts  []approval.IssueOption
		want  error
	}{
		{"declined", task, decision(messages.VerdictDeclined), messages.ApprovalFullPlan, nil, approval.ErrDeclined},
		{"declined standing", goal, decision(messages.VerdictDeclined), messages.ApprovalStanding, nil, approval.ErrDeclined},
		{"edit requested", task, decision(messages.VerdictEditRequested), messages.ApprovalFullPlan, nil, approval.ErrEditRequested},
		{"unknown verdict", task, decision("maybe"), messages.ApprovalFullPlan, nil, approval.ErrInvalidDecision},
		{"no strength", task, messages.ApprovalDecision{Verdict: messages.VerdictApproved}, messages.ApprovalFullPlan, nil, approval.ErrInvalidDecision},
		{"decision sets spawn_policy_hash", goal, withCondition(approve()), messages.ApprovalStanding, nil, approval.ErrInvalidDecision},
		{"condition that cannot be signed", task, badCondition(approve()), messages.ApprovalFullPlan, nil, approval.ErrInvalidDecision},
		{"no work item", func(*testing.T) *messages.WorkItem { return nil }, approve(), messages.ApprovalFullPlan, nil, approval.ErrInvalidRequest},
		{"unknown scope", task, approve(), "everything", nil, approval.ErrInvalidRequest},
		{"standing for a task", task, approve(), messages.ApprovalStanding, nil, approval.ErrInvalidRequest},
		{"standing for a goal without template", noTemplate, approve(), messages.ApprovalStanding, nil, approval.ErrInvalidRequest},
		{"standing above the cap", goal, approve(), messages.ApprovalStanding,
			[]approval.IssueOption{approval.WithMaxExecutions(101)}, approval.ErrInvalidRequest},
		{"standing with negative executions", goal, approve(), messages.ApprovalStanding,
			[]approval.IssueOption{approval.WithMaxExecutions(-1)}, approval.ErrInvalidRequest},
		{"max_executions on a single-use scope", task, approve(), messages.ApprovalFullPlan,
			[]approval.IssueOption{approval.WithMaxExecutions(2)}, approval.ErrInvalidRequest},
		{"lifetime under a second", task, approve(), messages.ApprovalFullPlan,
			[]approval.IssueOption{approval.WithTTL(999 * time.Millisecond)}, approval.ErrInvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			tok, err := f.engine.IssueToken(c.item(t), c.d, c.scope, c.opts...)
			wantErr(t, "IssueToken", err, c.want)
			if tok != nil {
				t.Fatalf("IssueToken returned a token with error %v", err)
			}
		})
	}
}

func TestSingleUseLifecycle(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	w := task(t)
	tok := f.issue(t, w, messages.ApprovalFullPlan)

	wantErr(t, "check before verify", f.engine.Check(ctx, tok, w), approval.ErrNotVerified)
	wantErr(t, "verify without work item", f.engine.Verify(ctx, tok, nil, nil), approval.ErrInvalidRequest)
	wantErr(t, "check without work item", f.engine.Check(ctx, tok, nil), approval.ErrInvalidRequest)
	wantErr(t, "verify", f.engine.Verify(ctx, tok, w, nil), nil)
	if tok.ExecutionsUsed != 1 || len(tok.ExecutionNonces) != 1 || len(tok.ExecutionNonces[0]) != 64 {
		t.Fatalf("after verify: executions_used %d, nonces %v", tok.ExecutionsUsed, tok.ExecutionNonces)
	}
	if n := f.nonces.Len(); n != 2 {
		t.Fatalf("nonce store holds %d keys after one execution, want 2 (slot and content-bound key)", n)
	}
	before := clone(t, tok)
	for range 2 {
		wantErr(t, "check", f.engine.Check(ctx, tok, w), nil)
	}
	if tok.ExecutionsUsed != before.ExecutionsUsed || len(tok.ExecutionNonces) != 1 || f.nonces.Len() != 2 {
		t.Fatal("check changed the token or the nonce store")
	}
	// A single-use token verified twice fails the second time with
	// ErrExhausted (the counter it carries is spent) and stays unchanged.
	wantErr(t, "second verify", f.engine.Verify(ctx, tok, w, nil), approval.ErrExhausted)
	if tok.ExecutionsUsed != 1 || len(tok.ExecutionNonces) != 1 {
		t.Fatalf("failed verify changed the token: %d %v", tok.ExecutionsUsed, tok.ExecutionNonces)
	}
	// The token survives being stored and loaded.
	wantErr(t, "check a stored copy", f.engine.Check(ctx, clone(t, tok), w), nil)
}

func TestReplayOfStaleCopy(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	w := task(t)
	tok := f.issue(t, w, messages.ApprovalFullPlan)
	stale := clone(t, tok) // taken before the token was used
	wantErr(t, "verify", f.engine.Verify(ctx, tok, w, nil), nil)
	// The stale copy still says executions_used 0; the execution slot it
	// would take is already consumed.
	wantErr(t, "verify stale copy", f.engine.Verify(ctx, stale, w, nil), approval.ErrReplay)
	if stale.ExecutionsUsed != 0 || len(stale.ExecutionNonces) != 0 {
		t.Fatal("a refused replay changed the token")
	}
	wantErr(t, "check stale copy", f.engine.Check(ctx, stale, w), approval.ErrNotVerified)
	// Forging the runtime state of the copy does not help: its execution
	// nonce was never consumed for this work item.
	stale.ExecutionsUsed, stale.ExecutionNonces = 1, []string{"forged"}
	wantErr(t, "check forged copy", f.engine.Check(ctx, stale, w), approval.ErrNotVerified)
}

func TestPlanChangedAfterApproval(t *testing.T) {
	cases := []struct {
		name string
		edit func(*messages.WorkItem)
		want error
	}{
		{"one byte of the body", func(w *messages.WorkItem) { w.Body = strings.Replace(w.Body, "teh", "tex", 1) }, approval.ErrPlanHashMismatch},
		{"a byte appended to the body", func(w *messages.WorkItem) { w.Body += " " }, approval.ErrPlanHashMismatch},
		{"a skill added", func(w *messages.WorkItem) { w.Skills = append(w.Skills, "shell") }, approval.ErrPlanHashMismatch},
		{"the check weakened", func(w *messages.WorkItem) { w.Verify[0].Run = "true" }, approval.ErrPlanHashMismatch},
		{"the budget raised", func(w *messages.WorkItem) { w.Budget.MaxCostUSD = 200 }, approval.ErrPlanHashMismatch},
		{"another work item id", func(w *messages.WorkItem) { w.ID = "task-other" }, approval.ErrPlanHashMismatch},
		// Runtime state is outside the plan hash (spec 3.3).
		{"status and attempts", func(w *messages.WorkItem) { w.Status, w.Attempts = messages.StatusRunning, 2 }, nil},
		{"needs_approval false", func(w *messages.WorkItem) { w.NeedsApproval = false }, nil},
		{"created_at", func(w *messages.WorkItem) { w.CreatedAt = time.Unix(1e9, 0) }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t)
			w := task(t)
			tok := f.issue(t, w, messages.ApprovalFullPlan)

			// Changed between approval and the authorization site.
			changed := task(t)
			c.edit(changed)
			stale := clone(t, tok)
			wantErr(t, "verify", f.engine.Verify(ctx, stale, changed, nil), c.want)
			if c.want != nil && stale.ExecutionsUsed != 0 {
				t.Fatal("a refused verify consumed an execution")
			}

			// Changed between authorization and the execution entry gate.
			authorized := stale
			if c.want != nil {
				wantErr(t, "verify original", f.engine.Verify(ctx, tok, w, nil), nil)
				authorized = tok
			}
			wantErr(t, "check", f.engine.Check(ctx, authorized, changed), c.want)
		})
	}
}

func TestNoTokenWhateverNeedsApprovalSays(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	w := task(t)
	w.NeedsApproval = false // the planner's claim; never consulted
	wantErr(t, "verify", f.engine.Verify(ctx, w.ApprovalToken, w, nil), approval.ErrNoToken)
	wantErr(t, "check", f.engine.Check(ctx, w.ApprovalToken, w), approval.ErrNoToken)
	wantErr(t, "check without work item", f.engine.Check(ctx, nil, nil), approval.ErrNoToken)
}

func TestForeignOrAlteredTokenRejected(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	w := task(t)

	// An engine with another key mints a token for the same work item.
	otherKeys := newManager(t, otherSeed)
	other, err := approval.New(otherKeys, approval.NewMemoryNonces(f.clock.now), f.clock.now, approval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.IssueToken(w, approve(), messages.ApprovalFullPlan)
	if err != nil {
		t.Fatal(err)
	}
	// The other key may even be an active owner device: the daemon's
	// devices.Set verifies chat messages signed with it. Device keys vouch
	// for messages, never for tokens: tokens are minted by the daemon with
	// the owner key (spec 5.11), and the engine verifies the owner key only.
	devicePub := otherKeys.OwnerPublicKey()
	registry := devices.NewSet([]devices.Key{{ID: devices.ID(devicePub), PublicKey: devicePub}})
	msg, err := keys.MessageBytes("approve it", "2026-03-01T12:00:00Z", "n-1")
	if err != nil {
		t.Fatal(err)
	}
	sig, err := otherKeys.Sign(msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := registry.Verify(msg, sig); !ok {
		t.Fatal("the device Set does not verify its own device's message")
	}
	wantErr(t, "verify foreign", f.engine.Verify(ctx, foreign, w, nil), approval.ErrBadSignature)
	wantErr(t, "check foreign", f.engine.Check(ctx, foreign, w), approval.ErrBadSignature)
	if foreign.ExecutionsUsed != 0 || f.nonces.Len() != 0 {
		t.Fatal("a foreign token consumed an execution")
	}

	// Any signed field changed after signing breaks the signature.
	altered := []struct {
		name string
		edit func(*messages.ApprovalToken)
	}{
		{"max_executions raised", func(k *messages.ApprovalToken) { k.MaxExecutions = 5 }},
		{"expiry extended", func(k *messages.ApprovalToken) { k.ExpiresAt = k.ExpiresAt.Add(time.Hour) }},
		{"issued later", func(k *messages.ApprovalToken) { k.IssuedAt = k.IssuedAt.Add(time.Second) }},
		{"condition added", func(k *messages.ApprovalToken) { k.Conditions = map[string]any{"x": 1} }},
		{"scope widened", func(k *messages.ApprovalToken) { k.Scope = messages.ApprovalSelfUpdate }},
		{"verdict changed", func(k *messages.ApprovalToken) { k.Verdict = messages.VerdictConditional }},
		{"nonce changed", func(k *messages.ApprovalToken) { k.Nonce = "00" + k.Nonce[2:] }},
		{"signature flipped", func(k *messages.ApprovalToken) { k.Signature[0] ^= 1 }},
	}
	tok := f.issue(t, w, messages.ApprovalFullPlan)
	for _, a := range altered {
		t.Run(a.name, func(t *testing.T) {
			c := clone(t, tok)
			a.edit(c)
			wantErr(t, "verify", f.engine.Verify(ctx, c, w, nil), approval.ErrBadSignature)
		})
	}

	// Re-pointing a token at another plan, even with its plan_hash, fails.
	repoint := clone(t, tok)
	other2 := task(t)
	other2.Body = "Delete the repository."
	repoint.PlanHash, _ = messages.WorkItemPlanHash(other2)
	wantErr(t, "re-pointed token", f.engine.Verify(ctx, repoint, other2, nil), approval.ErrBadSignature)
}

func TestSignedNonApprovingVerdicts(t *testing.T) {
	// Tokens are never issued for these verdicts; a signed one (an older
	// build, a bug) still does not authorize anything.
	for _, c := range []struct {
		v    messages.ApprovalVerdict
		want error
	}{
		{messages.VerdictDeclined, approval.ErrDeclined},
		{messages.VerdictEditRequested, approval.ErrEditRequested},
	} {
		t.Run(string(c.v), func(t *testing.T) {
			f := newFixture(t)
			w := task(t)
			tok := f.issue(t, w, messages.ApprovalFullPlan)
			tok.Verdict = c.v
			msg, err := messages.TokenSignedBytes(tok)
			if err != nil {
				t.Fatal(err)
			}
			if tok.Signature, err = f.keys.Sign(msg); err != nil {
				t.Fatal(err)
			}
			wantErr(t, "verify", f.engine.Verify(context.Background(), tok, w, nil), c.want)
		})
	}
}

func TestExpiry(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	w := task(t)
	tok := f.issue(t, w, messages.ApprovalFullPlan)
	late := clone(t, tok)

	f.clock.advance(30*time.Minute - time.Second)
	wantErr(t, "verify a second before expiry", f.engine.Verify(ctx, tok, w, nil), nil)
	wantErr(t, "check a second before expiry", f.engine.Check(ctx, tok, w), nil)
	f.clock.advance(time.Second)
	wantErr(t, "check at expiry", f.engine.Check(ctx, tok, w), approval.ErrExpired)
	wantErr(t, "verify at expiry", f.engine.Verify(ctx, late, w, nil), approval.ErrExpired)
	f.clock.advance(24 * time.Hour)
	wantErr(t, "verify a day later", f.engine.Verify(ctx, late, w, nil), approval.ErrExpired)
}

func TestStandingTokenAuthorizesTwoFixTasks(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	g := goal(t)
	tok := f.issue(t, g, messages.ApprovalStanding, approval.WithMaxExecutions(2), approval.WithTTL(24*time.Hour))

	var attached []*messages.ApprovalToken
	var fixes []*messages.WorkItem
	for i, id := range []string{"fix-1", "fix-2", "fix-3"} {
		f.clock.advance(30 * time.Minute) // one goal cycle later
		fix := spawnFix(g, id, "health: exit code 7 (cycle "+id+")")
		err := f.engine.Verify(ctx, tok, g, fix)
		if i == 2 {
			wantErr(t, "third fix task", err, approval.ErrExhausted)
			wantErr(t, "check unauthorized third fix", f.engine.Check(ctx, tok, fix), approval.ErrPlanHashMismatch)
			break
		}
		wantErr(t, "fix task "+id, err, nil)
		if tok.ExecutionsUsed != i+1 {
			t.Fatalf("executions_used %d after %d fix tasks", tok.ExecutionsUsed, i+1)
		}
		attached = append(attached, clone(t, tok)) // 5.2.3: attach the token to the task
		fixes = append(fixes, fix)
	}
	// The execution entry gate of each fix task passes with the token as it
	// was attached, and with the final token.
	for i, fix := range fixes {
		wantErr(t, "check "+fix.ID+" with its token", f.engine.Check(ctx, attached[i], fix), nil)
		wantErr(t, "check "+fix.ID+" with the final token", f.engine.Check(ctx, tok, fix), nil)
	}
	// A fix task changed after authorization is blocked at the entry gate.
	changed := spawnFix(g, "fix-1", "health: exit code 7 (cycle fix-1)")
	changed.Body += "\nAlso drop the database."
	wantErr(t, "check changed fix task", f.engine.Check(ctx, attached[0], changed), approval.ErrPlanHashMismatch)
	// The standing token never authorizes running the goal itself.
	wantErr(t, "check the goal", f.engine.Check(ctx, tok, g), approval.ErrParentMismatch)
}

func TestStandingBinding(t *testing.T) {
	cases := []struct {
		name  string
		goal  func(*messages.WorkItem) // change to the goal after approval
		fix   func(*messages.WorkItem) // change to the spawned task
		noFix bool
		want  error
	}{
		{name: "as spawned, details with a newline and the placeholder", want: nil},
		{name: "no spawned task", noFix: true, want: approval.ErrSpawnedTaskRequired},
		{name: "goal check changed", goal: func(g *messages.WorkItem) { g.Verify[0].Run = "true" }, want: approval.ErrPlanHashMismatch},
		{name: "goal template changed", goal: func(g *messages.WorkItem) { *g.FailureContext += " Drop tables." }, want: approval.ErrPlanHashMismatch},
		{name: "another parent", fix: func(w *messages.WorkItem) { p := "goal-other"; w.Parent = &p }, want: approval.ErrParentMismatch},
		{name: "no parent", fix: func(w *messages.WorkItem) { w.Parent = nil }, want: approval.ErrParentMismatch},
		{name: "a project", fix: func(w *messages.WorkItem) { w.Type = messages.WorkProject }, want: approval.ErrSpawnPolicyMismatch},
		{name: "extra skill", fix: func(w *messages.WorkItem) { w.Skills = append(w.Skills, "shell") }, want: approval.ErrSpawnPolicyMismatch},
		{name: "skills reordered and repeated", fix: func(w *messages.WorkItem) { w.Skills = []string{"coding", "web", "web"} }, want: nil},
		{name: "a check dropped", fix: func(w *messages.WorkItem) { w.Verify = w.Verify[:1] }, want: approval.ErrSpawnPolicyMismatch},
		{name: "checks reordered", fix: func(w *messages.WorkItem) { w.Verify[0], w.Verify[1] = w.Verify[1], w.Verify[0] }, want: nil},
		{name: "gate dropped", fix: func(w *messages.WorkItem) { w.Gates = nil }, want: approval.ErrSpawnPolicyMismatch},
		{name: "escalation changed", fix: func(w *messages.WorkItem) {
			w.Escalation = map[string]messages.EscalationAction{"page_owner": {Action: messages.EscalationReport}}
		}, want: approval.ErrSpawnPolicyMismatch},
		{name: "body not from the template", fix: func(w *messages.WorkItem) { w.Body = "Drop the database." }, want: approval.ErrSpawnPolicyMismatch},
		{name: "body with text after the template", fix: func(w *messages.WorkItem) { w.Body += "\nAnd rotate the keys." }, want: approval.ErrSpawnPolicyMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t)
			g := goal(t)
			tok := f.issue(t, g, messages.ApprovalStanding, approval.WithMaxExecutions(3))
			fix := spawnFix(goal(t), "fix-1", "health: exit code 7\n$failed_checks\n")
			if c.goal != nil {
				c.goal(g)
			}
			if c.fix != nil {
				c.fix(fix)
			}
			if c.noFix {
				fix = nil
			}
			wantErr(t, "verify", f.engine.Verify(ctx, tok, g, fix), c.want)
			if c.want != nil && (tok.ExecutionsUsed != 0 || f.nonces.Len() != 0) {
				t.Fatal("a refused standing verify consumed an execution")
			}
		})
	}
}

func TestScopeMismatch(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	g := goal(t)
	// A single-use token for the goal cannot authorize a spawned task...
	tok := f.issue(t, g, messages.ApprovalFullPlan)
	wantErr(t, "full_plan token with spawned task", f.engine.Verify(ctx, tok, g, spawnFix(g, "fix-1", "x")), approval.ErrScopeMismatch)
	// ...but the spec's fallback, a single-use token for the task itself, can.
	fix := spawnFix(g, "fix-1", "x")
	own := f.issue(t, fix, messages.ApprovalFullPlan)
	wantErr(t, "fallback verify", f.engine.Verify(ctx, own, fix, nil), nil)
	wantErr(t, "fallback check", f.engine.Check(ctx, own, fix), nil)
}

// failingStore fails every call.
type failingStore struct{}

var errDisk = errors.New("disk on fire")

func (failingStore) Consume(context.Context, string, string, time.Duration) (bool, error) {
	return false, errDisk
}
func (failingStore) IsUsed(context.Context, string, string) (bool, error) { return false, errDisk }

func TestNonceStoreFailure(t *testing.T) {
	f := newFixture(t)
	e, err := approval.New(f.keys, failingStore{}, f.clock.now, approval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	w := task(t)
	tok := f.issue(t, w, messages.ApprovalFullPlan)
	wantErr(t, "verify", e.Verify(context.Background(), tok, w, nil), errDisk)
	if tok.ExecutionsUsed != 0 || len(tok.ExecutionNonces) != 0 {
		t.Fatal("a failed verify changed the token")
	}
	wantErr(t, "verify with the working store", f.engine.Verify(context.Background(), tok, w, nil), nil)
	wantErr(t, "check", e.Check(context.Background(), tok, w), errDisk)
}

func TestNewAndConfig(t *testing.T) {
	f := newFixture(t)
	ok := approval.DefaultConfig()
	cases := []struct {
		name string
		edit func(*approval.Config)
		want bool
	}{
		{"defaults", func(*approval.Config) {}, true},
		{"tap minimum", func(c *approval.Config) {
			c.ScopeMinStrength = map[messages.ApprovalScope]messages.ApprovalStrength{messages.ApprovalSelfUpdate: messages.StrengthTap}
		}, true},
		{"zero ttl", func(c *approval.Config) { c.DefaultTTL = 0 }, false},
		{"zero executions", func(c *approval.Config) { c.MaxExecutions = 0 }, false},
		{"zero standing executions", func(c *approval.Config) { c.MaxStandingExecutions = 0 }, false},
		{"nonce ttl below token ttl", func(c *approval.Config) { c.NonceTTL = 29 * time.Minute }, false},
		{"unknown strength", func(c *approval.Config) {
			c.ScopeMinStrength = map[messages.ApprovalScope]messages.ApprovalStrength{messages.ApprovalSelfUpdate: "biometric"}
		}, false},
		{"unknown scope", func(c *approval.Config) {
			c.ScopeMinStrength = map[messages.ApprovalScope]messages.ApprovalStrength{"root": messages.StrengthTap}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := ok
			c.edit(&cfg)
			_, err := approval.New(f.keys, f.nonces, f.clock.now, cfg)
			if c.want {
				wantErr(t, "New", err, nil)
			} else {
				wantErr(t, "New", err, approval.ErrInvalidConfig)
			}
		})
	}
	for name, fn := range map[string]func() (*approval.Engine, error){
		"no signer": func() (*approval.Engine, error) { return approval.New(nil, f.nonces, f.clock.now, ok) },
		"no store":  func() (*approval.Engine, error) { return approval.New(f.keys, nil, f.clock.now, ok) },
		"no clock":  func() (*approval.Engine, error) { return approval.New(f.keys, f.nonces, nil, ok) },
	} {
		if _, err := fn(); !errors.Is(err, approval.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
}
