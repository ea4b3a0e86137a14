package main

import (
	"context"
	"encoding/json"
	"testing"

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
	a := &activityAPI{db: db, ownerID: "owner"}
	q := activityQuery{limit: 10}
	var found []activityEntry
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		p, err := a.page(ctx, q)
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
