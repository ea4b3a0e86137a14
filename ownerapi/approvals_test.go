package ownerapi

import (
	"errors"
	"testing"

	"github.com/silas-ai/silas/messages"
)

func TestPendingApprovals(t *testing.T) {
	h := newHarness(t)
	r := h.owner("GET", "/approvals/pending", "")
	if r.status != 200 || string(r.body) != `{"requests":[]}` {
		t.Fatalf("nothing pending: %d %s", r.status, r.body)
	}

	h.actors.set(func(f *fakeActors) {
		f.approvals = []messages.ApprovalRequestEvent{{Type: "approval_request", RequestID: "plan-1"}}
		f.skillPending = []messages.SkillInstallRequestEvent{{Type: "approval_request", RequestID: "skill-1"}}
	})
	var out struct {
		Requests []struct {
			RequestID string `json:"request_id"`
		} `json:"requests"`
	}
	decode(t, h.owner("GET", "/approvals/pending", ""), 200, &out)
	if len(out.Requests) != 2 || out.Requests[0].RequestID != "plan-1" || out.Requests[1].RequestID != "skill-1" {
		t.Fatalf("pending %+v, want the plan then the skill card", out)
	}

	// The skill cards are best effort; the plans are not.
	h.actors.set(func(f *fakeActors) { f.skillReqErr = errors.New("installer busy") })
	out.Requests = nil
	decode(t, h.owner("GET", "/approvals/pending", ""), 200, &out)
	if len(out.Requests) != 1 || out.Requests[0].RequestID != "plan-1" {
		t.Fatalf("pending %+v, want the plan alone", out)
	}
	h.actors.set(func(f *fakeActors) { f.approvalsErr = errors.New("scope stopped") })
	wantError(t, h.owner("GET", "/approvals/pending", ""), 500, messages.CodeInternal, "read the pending approvals: scope stopped; try again")
}
