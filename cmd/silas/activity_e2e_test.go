package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/persistence"
)

// activityAll pages through GET /activity with query q until next_before is
// absent and returns the entries in the order served.
func activityAll(t *testing.T, addr, q string, limit int) []ownerapi.ActivityEntry {
	t.Helper()
	var out []ownerapi.ActivityEntry
	before := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("activity paging does not end")
		}
		var page ownerapi.ActivityPage
		pwaJSON(t, addr, "GET", fmt.Sprintf("/activity?limit=%d%s%s", limit, q, before), "owner-secret-token", "", http.StatusOK, &page)
		if len(page.Entries) > limit {
			t.Fatalf("page of %d entries, limit %d", len(page.Entries), limit)
		}
		out = append(out, page.Entries...)
		if page.NextBefore == nil {
			return out
		}
		before = fmt.Sprintf("&before=%d", *page.NextBefore)
	}
}

func TestActivityFeedPagesNewestFirst(t *testing.T) {
	mock := newMock(t)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	addr := d.Addr()
	ctx := context.Background()
	c := owner(t, addr)
	for i := range 3 {
		c.answerTo(c.say(fmt.Sprintf("message %d", i)))
	}
	pwaTurns := func() int { return len(pwaAudit(t, d, "turn_completed")) }
	checkFor(t, waitLimit, func() bool { return pwaTurns() == 3 }, "three turn_completed entries")

	// What happened overnight, as the actors would have audited it, plus
	// entries the feed must leave out.
	night := time.Now().Add(-8 * time.Hour)
	entry := func(at time.Time, event, scope, data string) persistence.AuditEntry {
		return persistence.AuditEntry{Time: at, Event: event, Scope: scope, Data: json.RawMessage(data)}
	}
	_, err := d.in.db.Audit().Append(ctx,
		entry(night, "plan_proposed", "owner", `{"work_item_id":"wi-1","title":"Fix the timezone bug"}`),
		entry(night.Add(time.Minute), "approval_granted", "owner", `{"work_item_id":"wi-1"}`),
		entry(night.Add(2*time.Minute), "tool_call", "owner", `{"tool":"shell_exec"}`),
		entry(night.Add(3*time.Minute), "verification_passed", "owner", `{"work_item_id":"wi-1","attempt":1,"checks":2}`),
		entry(night.Add(4*time.Minute), "gate_block", "owner", `{"gate":"no_secrets","reason":"looks like a key"}`),
		entry(night.Add(5*time.Minute), "turn_completed", "customer-42", `{"taint":"external"}`),
		entry(night.Add(6*time.Minute), "ux_metric", "owner", `{"metric":"taps","value":2}`),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Newer than the night, so the log is not in time order: the feed is in
	// log order, newest entry first.
	c.answerTo(c.say("good morning"))
	checkFor(t, waitLimit, func() bool { return pwaTurns() == 5 }, "the morning turn's audit entry")

	all := activityAll(t, addr, "", 2)
	seen := map[string]int{}
	for i, e := range all {
		if i > 0 && e.Seq >= all[i-1].Seq {
			t.Fatalf("entries not newest first or repeated across pages: %d after %d", e.Seq, all[i-1].Seq)
		}
		if e.Title == "" || e.Kind == "" {
			t.Fatalf("entry without plain-language title: %+v", e)
		}
		if e.Scope == "customer-42" {
			t.Fatalf("a customer's turn is in the owner's default feed: %+v", e)
		}
		seen[e.Event]++
	}
	if seen["tool_call"]+seen["ux_metric"] != 0 {
		t.Fatalf("bookkeeping entries in the feed: %v", seen)
	}
	if seen["turn_completed"] != 4 || seen["plan_proposed"] != 1 || seen["approval_granted"] != 1 ||
		seen["verification_passed"] != 1 || seen["gate_block"] != 1 {
		t.Fatalf("feed events %v", seen)
	}
	if all[0].Event != "turn_completed" || all[0].Taint != "auth" {
		t.Fatalf("newest entry %+v, want the morning turn with its taint", all[0])
	}
	withAll := activityAll(t, addr, "&scope=all", 50)
	if len(withAll) != len(all)+1 {
		t.Fatalf("scope=all has %d entries, want the owner's %d plus the customer's", len(withAll), len(all))
	}

	// "What did you do while I slept": only what happened since.
	since := url.QueryEscape(night.Add(150 * time.Second).Format(time.RFC3339Nano))
	recent := activityAll(t, addr, "&since="+since, 50)
	for _, e := range recent {
		if e.Time.Before(night.Add(150 * time.Second)) {
			t.Fatalf("entry before since: %+v", e)
		}
	}
	if len(recent) != 3 || recent[0].Event != "turn_completed" || recent[1].Event != "gate_block" || recent[2].Event != "verification_passed" {
		t.Fatalf("since: %+v", recent)
	}

	// The last visit: none, then the first one.
	var v1, v2 ownerapi.VisitResponse
	pwaJSON(t, addr, "POST", "/activity/visit", "owner-secret-token", "", http.StatusOK, &v1)
	pwaJSON(t, addr, "POST", "/activity/visit", "owner-secret-token", "{}", http.StatusOK, &v2)
	if v1.PreviousVisit != nil || v2.PreviousVisit == nil || !v2.PreviousVisit.Equal(v1.VisitedAt) {
		t.Fatalf("visits: %+v then %+v", v1, v2)
	}
	var page ownerapi.ActivityPage
	pwaJSON(t, addr, "GET", "/activity", "owner-secret-token", "", http.StatusOK, &page)
	if page.LastVisit == nil || !page.LastVisit.Equal(v2.VisitedAt) {
		t.Fatalf("last_visit %v, want %v", page.LastVisit, v2.VisitedAt)
	}

	for _, q := range []string{"?limit=0", "?limit=201", "?before=x", "?since=yesterday", "?scope=mine"} {
		if status, b := pwaCall(t, addr, "GET", "/activity"+q, "owner-secret-token", ""); status != http.StatusBadRequest {
			t.Errorf("GET /activity%s: %d %s", q, status, b)
		}
	}
	cust := pwaCustomer(t, addr)
	for _, r := range []struct{ method, path string }{{"GET", "/activity"}, {"POST", "/activity/visit"}} {
		if status, _ := pwaCall(t, addr, r.method, r.path, cust, ""); status != http.StatusForbidden {
			t.Errorf("%s %s as a customer: %d", r.method, r.path, status)
		}
		if status, _ := pwaCall(t, addr, r.method, r.path, "", ""); status != http.StatusUnauthorized {
			t.Errorf("%s %s without a token: %d", r.method, r.path, status)
		}
	}
}

func TestUXMetricsGoToTheAuditLog(t *testing.T) {
	mock := newMock(t)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	addr := d.Addr()

	good := `{"metrics":[
		{"metric":"decision_time","card_type":"plan_approval","request_id":"r1","risk_level":"low","value":3200,"verdict":"approve"},
		{"metric":"freetext","card_type":"decision"}]}`
	var res struct {
		Recorded int `json:"recorded"`
	}
	pwaJSON(t, addr, "POST", "/ux/metrics", "owner-secret-token", good, http.StatusOK, &res)
	if res.Recorded != 2 {
		t.Fatalf("recorded %d, want 2", res.Recorded)
	}
	entries := pwaAudit(t, d, "ux_metric")
	if len(entries) != 2 || entries[0].Scope != "owner" {
		t.Fatalf("ux_metric entries: %+v", entries)
	}
	var m ownerapi.UXMetric
	if err := json.Unmarshal(entries[0].Data, &m); err != nil || m.Metric != "decision_time" || *m.Value != 3200 || m.RiskLevel != "low" {
		t.Fatalf("decision time entry %s", entries[0].Data)
	}
	if err := json.Unmarshal(entries[1].Data, &m); err != nil || m.Metric != "freetext" || *m.Value != 1 {
		t.Fatalf("freetext entry %s", entries[1].Data)
	}

	many := `{"metrics":[`
	for i := range ownerapi.MaxUXMetrics + 1 {
		if i > 0 {
			many += ","
		}
		many += `{"metric":"undo"}`
	}
	many += `]}`
	huge := `{"metrics":[{"metric":"undo","request_id":"` + string(make([]byte, ownerapi.MaxUXBody)) + `"}]}`
	for _, bad := range []string{
		`{"metrics":[]}`,
		`{"metrics":[{"metric":"happiness"}]}`,
		`{"metrics":[{"metric":"decision_time"}]}`,
		`{"metrics":[{"metric":"decision_time","value":-1}]}`,
		`{"metrics":[{"metric":"decision_time","value":99999999}]}`,
		`{"metrics":[{"metric":"taps","value":2,"card_type":"poster"}]}`,
		`{"metrics":[{"metric":"undo","risk_level":"spicy"}]}`,
		`{"metrics":[{"metric":"undo","verdict":"<script>"}]}`,
		`{"metrics":[{"metric":"undo","at":"noon"}]}`,
		`{"metrics":[{"metric":"undo","text":"the user's message"}]}`,
		`{"metrics":[{"metric":"undo"}],"extra":true}`,
		`{"metrics":[{"metric":"undo"},{"metric":"nope"}]}`,
		many, huge,
	} {
		if status, b := pwaCall(t, addr, "POST", "/ux/metrics", "owner-secret-token", bad); status != http.StatusBadRequest {
			t.Errorf("POST /ux/metrics %.60s: %d %s", bad, status, b)
		}
	}
	if status, _ := pwaCall(t, addr, "POST", "/ux/metrics", pwaCustomer(t, addr), good); status != http.StatusForbidden {
		t.Errorf("customer metrics: %d", status)
	}
	if n := len(pwaAudit(t, d, "ux_metric")); n != 2 {
		t.Fatalf("%d ux_metric entries after refused requests, want 2", n)
	}
	more := `{"metrics":[{"metric":"decision_time","risk_level":"low","value":1000},
		{"metric":"decision_time","risk_level":"high","value":20000},
		{"metric":"taps","value":3},{"metric":"decline","value":2}]}`
	pwaJSON(t, addr, "POST", "/ux/metrics", "owner-secret-token", more, http.StatusOK, nil)
	var sum ownerapi.UXSummary
	pwaJSON(t, addr, "GET", "/ux/metrics", "owner-secret-token", "", http.StatusOK, &sum)
	if !sum.Complete || sum.DecisionTimeMS["low"] != (ownerapi.UXStat{Count: 2, Median: 2100}) ||
		sum.DecisionTimeMS["high"] != (ownerapi.UXStat{Count: 1, Median: 20000}) || sum.DecisionTimeMS["all"] != (ownerapi.UXStat{Count: 3, Median: 3200}) ||
		sum.Taps != (ownerapi.UXStat{Count: 1, Median: 3}) || sum.Events["decline"] != 2 || sum.Events["freetext"] != 1 {
		t.Fatalf("summary %+v", sum)
	}
	future := url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339))
	var empty ownerapi.UXSummary
	pwaJSON(t, addr, "GET", "/ux/metrics?since="+future, "owner-secret-token", "", http.StatusOK, &empty)
	if len(empty.DecisionTimeMS) != 0 || len(empty.Events) != 0 || empty.Taps.Count != 0 {
		t.Fatalf("summary since the future: %+v", empty)
	}
	// Metrics are data for the calibration loop, not activity.
	for _, e := range activityAll(t, addr, "", 50) {
		if e.Event == "ux_metric" {
			t.Fatal("a ux_metric entry is in the activity feed")
		}
	}
}
