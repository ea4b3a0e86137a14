package ownerapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// A page that reads its bound of audit entries without finding activity
// still hands back a cursor, and following it reaches older activity.
func TestActivityPageScanBound(t *testing.T) {
	ctx := context.Background()
	db, err := persistence.Open(ctx, persistence.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries := []persistence.AuditEntry{{Event: "work_item_done", Scope: "owner", Data: json.RawMessage(`{"work_item_id":"wi-old"}`)}}
	for range maxActivityScan + activityChunk {
		entries = append(entries, persistence.AuditEntry{Event: "tool_call", Scope: "owner"})
	}
	for len(entries) > 0 {
		n := min(len(entries), 1000)
		if _, err := db.Audit().Append(ctx, entries[:n]...); err != nil {
			t.Fatal(err)
		}
		entries = entries[n:]
	}
	a := &API{d: Deps{DB: db, OwnerID: "owner"}}
	q := activityQuery{limit: 10}
	var found []ActivityEntry
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		p, err := a.activityPage(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, p.Entries...)
		if p.NextBefore == nil {
			break
		}
		if q.before != 0 && *p.NextBefore >= q.before {
			t.Fatalf("cursor did not move back: %d after %d", *p.NextBefore, q.before)
		}
		q.before = *p.NextBefore
	}
	if len(found) != 1 || found[0].WorkItemID != "wi-old" || found[0].Seq != 1 {
		t.Fatalf("found %+v, want the one work_item_done at seq 1", found)
	}
}

func TestActivityBadInput(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     messages.Code
		msg                      string
	}{
		{"before zero", "GET", "/activity?before=0", "", 400, messages.CodeBadRequest,
			`before must be a positive entry number (the next_before of the previous page), got "0"`},
		{"before not a number", "GET", "/activity?before=x", "", 400, messages.CodeBadRequest,
			`before must be a positive entry number (the next_before of the previous page), got "x"`},
		{"before negative", "GET", "/activity?before=-1", "", 400, messages.CodeBadRequest,
			`before must be a positive entry number (the next_before of the previous page), got "-1"`},
		{"limit zero", "GET", "/activity?limit=0", "", 400, messages.CodeBadRequest, `limit must be 1 to 200, got "0"`},
		{"limit too big", "GET", "/activity?limit=201", "", 400, messages.CodeBadRequest, `limit must be 1 to 200, got "201"`},
		{"limit not a number", "GET", "/activity?limit=ten", "", 400, messages.CodeBadRequest, `limit must be 1 to 200, got "ten"`},
		{"since not RFC 3339", "GET", "/activity?since=yesterday", "", 400, messages.CodeBadRequest,
			`since must be RFC 3339 like 2026-01-02T03:04:05Z, got "yesterday"`},
		{"scope unknown", "GET", "/activity?scope=cust-1", "", 400, messages.CodeBadRequest, `scope must be owner or all, got "cust-1"`},
		{"longer path", "GET", "/activityx", "", 404, messages.CodeNotFound, "no such endpoint"},
		{"visit with fields", "POST", "/activity/visit", `{"at":"now"}`, 400, messages.CodeBadRequest, "send no body or {}"},
		{"visit too long", "POST", "/activity/visit", `{` + strings.Repeat(" ", 64) + `}`, 400, messages.CodeBadRequest, "send no body or {}"},
		{"visit longer path", "POST", "/activity/visits", ``, 404, messages.CodeNotFound, "no such endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, h.owner(tc.method, tc.path, tc.body), tc.status, tc.code, tc.msg)
		})
	}
}

// The feed shows the owner's activity in plain words, newest first, hides
// bookkeeping and other scopes unless asked, and remembers the last visit.
func TestActivityFeed(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if _, err := h.db.Audit().Append(ctx,
		persistence.AuditEntry{Event: "plan_proposed", Scope: testOwnerID, Data: json.RawMessage(`{"title":"Tidy the inbox","work_item_id":"wi-1"}`)},
		persistence.AuditEntry{Event: "tool_call", Scope: testOwnerID},
		persistence.AuditEntry{Event: "turn_completed", Scope: "cust-1"},
		persistence.AuditEntry{Event: "verification_passed", Scope: testOwnerID, Data: json.RawMessage(`{"checks":1}`)},
	); err != nil {
		t.Fatal(err)
	}
	var page ActivityPage
	decode(t, h.owner("GET", "/activity", ""), 200, &page)
	if page.NextBefore != nil || page.LastVisit != nil || len(page.Entries) != 2 {
		t.Fatalf("page %s", mustJSON(page))
	}
	if e := page.Entries[0]; e.Title != "Checked the result: verification passed" || e.Detail != "1 check" || e.Kind != "verification" {
		t.Errorf("newest %+v", e)
	}
	if e := page.Entries[1]; e.Title != "Proposed a plan: Tidy the inbox" || e.WorkItemID != "wi-1" || e.Seq != 1 {
		t.Errorf("oldest %+v", e)
	}
	decode(t, h.owner("GET", "/activity?scope=all&limit=1", ""), 200, &page)
	if len(page.Entries) != 1 || page.NextBefore == nil || *page.NextBefore != 4 {
		t.Fatalf("first page of all %s", mustJSON(page))
	}
	decode(t, h.owner("GET", fmt.Sprintf("/activity?scope=all&limit=1&before=%d", *page.NextBefore), ""), 200, &page)
	if len(page.Entries) != 1 || page.Entries[0].Scope != "cust-1" || page.Entries[0].Title != "Answered a message" {
		t.Fatalf("second page of all %s", mustJSON(page))
	}

	var v1, v2 VisitResponse
	decode(t, h.owner("POST", "/activity/visit", ""), 200, &v1)
	decode(t, h.owner("POST", "/activity/visit", "{}"), 200, &v2)
	if v1.PreviousVisit != nil || v2.PreviousVisit == nil || !v2.PreviousVisit.Equal(v1.VisitedAt) {
		t.Fatalf("visits %+v then %+v", v1, v2)
	}
	decode(t, h.owner("GET", "/activity", ""), 200, &page)
	if page.LastVisit == nil || !page.LastVisit.Equal(v2.VisitedAt) {
		t.Fatalf("last visit %v, want %v", page.LastVisit, v2.VisitedAt)
	}
}
