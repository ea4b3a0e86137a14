package approval_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/approval"
	"github.com/silas-ai/silas/runtime/keys"
)

// BenchmarkIssueAndVerify mints a single-use token for a plan and consumes
// it: the plan hash twice, one Ed25519 signature and one verification, and
// two nonce-store writes (in memory here).
func BenchmarkIssueAndVerify(b *testing.B) {
	clk := newClock()
	m, err := keys.Open(keys.NewMemoryKeystore())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.EnsureOwnerKey(); err != nil {
		b.Fatal(err)
	}
	e, err := approval.New(m, approval.NewMemoryNonces(clk.now), clk.now, approval.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	var w messages.WorkItem
	if err := json.Unmarshal([]byte(`{"id":"task-readme","type":"task","title":"Fix the README typo",
		"body":"Replace 'teh' with 'the' in README.md.","skills":["coding"],
		"verify":[{"name":"no typo","run":"grep -c teh README.md","expect":{"equals":"0"}}]}`), &w); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		tok, err := e.IssueToken(&w, approve(), messages.ApprovalFullPlan)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Verify(ctx, tok, &w, nil); err != nil {
			b.Fatal(err)
		}
	}
}
