package approval_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/approval"
	"github.com/silas-ai/silas/runtime/keys"
)

// goldenSeed is the seed of the owner key in testdata/token_vectors.json
// (and runtime/keys/testdata).
const goldenSeed = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

// otherSeed is the seed of a key that is not the owner's.
const otherSeed = "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100"

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }
func approve() messages.ApprovalDecision { return decision(messages.VerdictApproved) }
func decision(v messages.ApprovalVerdict) messages.ApprovalDecision {
	return messages.ApprovalDecision{Verdict: v, ApprovalStrength: messages.StrengthTap}
}

// newManager returns a key manager whose owner key has the given hex seed.
func newManager(t *testing.T, seedHex string) *keys.Manager {
	t.Helper()
	seed, err := hex.DecodeString(seedHex)
	if err != nil {
		t.Fatal(err)
	}
	m, err := keys.Open(keys.NewMemoryKeystore(), keys.WithRandom(bytes.NewReader(seed)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.EnsureOwnerKey(); err != nil {
		t.Fatal(err)
	}
	return m
}

// fixture is an engine with the golden owner key, an in-memory nonce store
// and a test clock.
type fixture struct {
	clock  *clock
	keys   *keys.Manager
	nonces *approval.MemoryNonces
	engine *approval.Engine
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: newClock()}
	f.keys = newManager(t, goldenSeed)
	f.nonces = approval.NewMemoryNonces(f.clock.now)
	e, err := approval.New(f.keys, f.nonces, f.clock.now, approval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	f.engine = e
	return f
}

// issue mints a token or fails the test.
func (f *fixture) issue(t *testing.T, w *messages.WorkItem, scope messages.ApprovalScope, opts ...approval.IssueOption) *messages.ApprovalToken {
	t.Helper()
	tok, err := f.engine.IssueToken(w, approve(), scope, opts...)
	if err != nil {
		t.Fatalf("IssueToken(%s, %s): %v", w.ID, scope, err)
	}
	return tok
}

// workItem decodes a work item from JSON (applying the spec's defaults).
func workItem(t *testing.T, js string) *messages.WorkItem {
	t.Helper()
	var w messages.WorkItem
	if err := json.Unmarshal([]byte(js), &w); err != nil {
		t.Fatalf("decode work item: %v", err)
	}
	if err := w.Validate(); err != nil {
		t.Fatalf("work item %s does not validate: %v", w.ID, err)
	}
	return &w
}

func task(t *testing.T) *messages.WorkItem {
	return workItem(t, `{
		"id": "task-readme",
		"type": "task",
		"title": "Fix the README typo",
		"body": "Replace 'teh' with 'the' in README.md.",
		"skills": ["coding"],
		"verify": [{"name": "no typo", "run": "grep -c teh README.md", "expect": {"equals": "0"}}]
	}`)
}

func goal(t *testing.T) *messages.WorkItem {
	return workItem(t, `{
		"id": "goal-site",
		"type": "goal",
		"title": "Keep the site healthy",
		"body": "Check the site every 30 minutes.",
		"schedule": "*/30 * * * *",
		"on_failure": "spawn_task",
		"failure_context": "The site checks failed:\n$failed_checks\nRestore the site; do not touch the database.",
		"skills": ["web", "coding"],
		"verify": [
			{"name": "health", "run": "curl -fsS http://127.0.0.1:8080/health", "expect": {"exit_code": 0}},
			{"name": "title", "run": "curl -fsS http://127.0.0.1:8080/", "expect": {"contains": "<title>Shop</title>"}}
		],
		"gates": [{"name": "no deletes", "on": "on_tool_call", "type": "string_match",
			"check": "tool_args.command", "approval_values": ["rm -rf"], "on_block": "page_owner"}],
		"escalation": {"page_owner": {"action": "escalate_human", "message": "A fix task was blocked"}}
	}`)
}

// spawnFix builds a fix task the way the goal cycle does (spec 5.2.3).
func spawnFix(g *messages.WorkItem, id, failed string) *messages.WorkItem {
	w := messages.NewWorkItem(id, messages.WorkTask, "Fix: "+g.Title)
	parent := g.ID
	w.Parent, w.SpawnedBy = &parent, &parent
	w.Body = approval.FillFailureContext(*g.FailureContext, failed)
	w.Skills = slices.Clone(g.Skills)
	w.Gates = slices.Clone(g.Gates)
	w.Verify = slices.Clone(g.Verify)
	w.Escalation = maps.Clone(g.Escalation)
	return w
}

// clone deep-copies a token through JSON, as storing and loading it does.
func clone(t *testing.T, tok *messages.ApprovalToken) *messages.ApprovalToken {
	t.Helper()
	b, err := json.Marshal(tok)
	if err != nil {
		t.Fatal(err)
	}
	var c messages.ApprovalToken
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// wantErr fails unless errors.Is(err, want); want nil means success.
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("%s: %v, want success", what, err)
	case want != nil && !errors.Is(err, want):
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}
