package plan_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/approval"
	"github.com/silas-ai/silas/runtime/plan"
)

const healthGoal = `---
id: goal-health
type: goal
title: Keep the service healthy
schedule: "@every 1s"
on_failure: spawn_task
failure_context: "The health check failed: $failed_checks. Fix it."
verify:
  - name: healthy
    run: "test -f healthy"
    expect: { exit_code: 0 }
---

Keep the service healthy.
`

func TestParseGoalAndInterval(t *testing.T) {
	g, err := plan.ParseGoal(healthGoal)
	if err != nil {
		t.Fatal(err)
	}
	every, cron, err := plan.Interval(*g.Schedule)
	if err != nil || every != time.Second || cron != "" {
		t.Fatalf("Interval = %s %q %v, want 1s", every, cron, err)
	}
	if _, cron, _ := plan.Interval("*/5 * * * *"); cron != "*/5 * * * *" {
		t.Fatalf("a cron schedule came back as %q", cron)
	}
	for name, md := range map[string]string{
		"a task":                 helloTask,
		"always_on":              strings.Replace(healthGoal, `"@every 1s"`, "always_on", 1),
		"no checks":              strings.Replace(healthGoal, "verify:\n  - name: healthy\n    run: \"test -f healthy\"\n    expect: { exit_code: 0 }\n", "", 1),
		"sub-second interval":    strings.Replace(healthGoal, "@every 1s", "@every 10ms", 1),
		"spawn without template": strings.Replace(healthGoal, "failure_context: \"The health check failed: $failed_checks. Fix it.\"\n", "", 1),
	} {
		if _, err := plan.ParseGoal(md); !errors.Is(err, plan.ErrNotAGoal) {
			t.Errorf("%s: ParseGoal error %v, want ErrNotAGoal", name, err)
		}
	}
}

const helloTask = "---\nid: task-hello\ntype: task\ntitle: Write hello\n---\n\nCreate hello.txt.\n"

type signer struct{ key ed25519.PrivateKey }

func (s signer) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(s.key, msg), nil }
func (s signer) VerifyOwnerSignature(msg, sig []byte) (string, bool) {
	return "k", ed25519.Verify(s.key.Public().(ed25519.PublicKey), msg, sig)
}

func TestFixTaskIsAuthorizedByStandingToken(t *testing.T) {
	g, err := plan.ParseGoal(healthGoal)
	if err != nil {
		t.Fatal(err)
	}
	_, key, _ := ed25519.GenerateKey(nil)
	eng, err := approval.New(signer{key}, approval.NewMemoryNonces(time.Now), time.Now, approval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := eng.IssueToken(g, messages.ApprovalDecision{Verdict: messages.VerdictApproved, ApprovalStrength: messages.StrengthTap}, messages.ApprovalStanding, approval.WithMaxExecutions(2))
	if err != nil {
		t.Fatal(err)
	}
	fix := plan.FixTask(g, "goal-health-fix-1", "healthy: exit code 1")
	if err := fix.Validate(); err != nil {
		t.Fatalf("fix task invalid: %v", err)
	}
	if fix.Body != "The health check failed: healthy: exit code 1. Fix it." || *fix.Parent != g.ID {
		t.Fatalf("fix task body %q parent %v", fix.Body, *fix.Parent)
	}
	if err := eng.Verify(context.Background(), tok, g, fix); err != nil {
		t.Fatalf("the standing token refuses the fix task: %v", err)
	}
	if err := eng.Check(context.Background(), tok, fix); err != nil {
		t.Fatalf("the fix task fails its entry check: %v", err)
	}
}
