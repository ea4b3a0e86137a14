package main

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/approval"
	"github.com/silas-ai/silas/runtime/plan"
)

// TestReplayedTokenIsBlocked runs an approved plan to done, then puts the
// work item back into the store with the token it ran under, as a replay
// of that token for a second run would, and restarts Silas: the resumed
// work item is blocked at the approval check and the executor is never
// called again.
func TestReplayedTokenIsBlocked(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	cfg := loadConfig(t, overrides(t, mock, dir))
	d := startTest(t, cfg)

	// The work item as it was journaled during its run, token included.
	var mu sync.Mutex
	var journaled *messages.WorkItem
	script := planScript(helloPlan)
	mock.HandleReply(func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		if r.Schema == "ExecutorAgentOutput" {
			mu.Lock()
			if journaled == nil {
				if all, err := d.in.db.WorkItems().List(context.Background(), cfg.OwnerID); err == nil && len(all) == 1 {
					journaled = all[0]
				}
			}
			mu.Unlock()
		}
		return script(r)
	})
	c := owner(t, d.Addr())
	c.say("please write hello.txt")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	waitFinal(t, c, "task-hello-file", "done")
	checkFor(t, waitLimit, func() bool { return storedWorkItems(t, d, cfg.OwnerID) == 0 }, "the finished work item to leave the store")
	d.stop()

	mu.Lock()
	replay := journaled
	mu.Unlock()
	if replay == nil || replay.ApprovalToken == nil {
		t.Fatal("the work item was not journaled with its token during its run")
	}
	calls := len(executorCalls(mock))
	replay.Status, replay.Attempts, replay.BudgetUsed, replay.VerificationResults = messages.StatusPending, 0, messages.BudgetUsed{}, nil
	plant(t, filepath.Join(dir, "db"), cfg.OwnerID, replay)

	d2 := startTest(t, cfg)
	checkFor(t, waitLimit, func() bool { return storedWorkItems(t, d2, cfg.OwnerID) == 0 }, "the replayed work item to be blocked")
	d2.stop()
	if n := len(executorCalls(mock)); n != calls {
		t.Fatalf("the replayed token ran the executor %d more times", n-calls)
	}
	blocked := auditData(t, filepath.Join(dir, "db"), "execution_blocked_no_approval")
	if len(blocked) != 1 || !strings.Contains(blocked[0], "already ran to its end") {
		t.Fatalf("execution_blocked_no_approval entries %v, want one naming the replay", blocked)
	}
	if n := len(auditData(t, filepath.Join(dir, "db"), "execution_started")); n != 1 {
		t.Fatalf("%d execution_started entries, want the first run's only", n)
	}
}

// TestForeignTokenIsBlocked plants an approved work item whose token was
// signed by a key that is not the owner's: Silas blocks it at the approval
// check, tells the owner, and never calls the executor.
func TestForeignTokenIsBlocked(t *testing.T) {
	mock := newMock(t)
	scriptPlanner(mock)
	dir := t.TempDir()
	cfg := loadConfig(t, overrides(t, mock, dir))

	w, err := plan.Parse(helloPlan)
	if err != nil {
		t.Fatal(err)
	}
	_, key, _ := ed25519.GenerateKey(nil)
	foreign, err := approval.New(keySigner{key}, approval.NewMemoryNonces(time.Now), time.Now, approval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := foreign.IssueToken(w, messages.ApprovalDecision{Verdict: messages.VerdictApproved, ApprovalStrength: messages.StrengthTap}, messages.ApprovalFullPlan)
	if err != nil {
		t.Fatal(err)
	}
	if err := foreign.Verify(context.Background(), tok, w, nil); err != nil {
		t.Fatal(err)
	}
	w.ApprovalToken = tok
	plant(t, filepath.Join(dir, "db"), cfg.OwnerID, w)

	d := startTest(t, cfg)
	checkFor(t, waitLimit, func() bool { return storedWorkItems(t, d, cfg.OwnerID) == 0 }, "the work item to be blocked")
	d.stop()
	if n := len(executorCalls(mock)); n != 0 {
		t.Fatalf("a token signed by another key ran the executor %d times", n)
	}
	blocked := auditData(t, filepath.Join(dir, "db"), "execution_blocked_no_approval")
	if len(blocked) != 1 || !strings.Contains(blocked[0], "signature") {
		t.Fatalf("execution_blocked_no_approval entries %v, want one naming the signature", blocked)
	}
}

// keySigner signs approval tokens with a key that is not the owner's.
type keySigner struct{ key ed25519.PrivateKey }

func (s keySigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(s.key, msg), nil }

func (s keySigner) VerifyOwnerSignature(msg, sig []byte) (string, bool) {
	return "foreign", ed25519.Verify(s.key.Public().(ed25519.PublicKey), msg, sig)
}

// plant stores w as an active work item of scope in the database at dbDir,
// as a copy or forgery of a journaled work item would be.
func plant(t *testing.T, dbDir, scope string, w *messages.WorkItem) {
	t.Helper()
	db, err := persistence.Open(context.Background(), persistence.Options{Dir: dbDir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.WorkItems().Put(context.Background(), scope, w); err != nil {
		t.Fatal(err)
	}
}

// storedWorkItems counts the active work items of scope in a running daemon.
func storedWorkItems(t *testing.T, d *testDaemon, scope string) int {
	t.Helper()
	all, err := d.in.db.WorkItems().List(context.Background(), scope)
	if err != nil {
		t.Fatalf("list work items: %v", err)
	}
	return len(all)
}

// auditData returns the data of every audit entry named event in the
// database at dbDir (the daemon must be stopped).
func auditData(t *testing.T, dbDir, event string) []string {
	t.Helper()
	db, err := persistence.Open(context.Background(), persistence.Options{Dir: dbDir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, err := db.Audit().Range(context.Background(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Event == event {
			out = append(out, string(e.Data))
		}
	}
	return out
}

// waitFinal reads work_item_status events of id until a final one and
// fails unless it is want; it returns the final event.
func waitFinal(t *testing.T, c *client, id, want string) event {
	t.Helper()
	for {
		ev := c.next("work_item_status")
		if ev.str("work_item_id") != id {
			continue
		}
		switch st := ev.str("status"); st {
		case "running", "verification_failed":
		default:
			if st != want {
				t.Fatalf("work item %s ended %v, want %s", id, ev, want)
			}
			return ev
		}
	}
}
