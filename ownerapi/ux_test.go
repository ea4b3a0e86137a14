package ownerapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

func TestUXBadInput(t *testing.T) {
	h := newHarness(t)
	one := func(m string) string { return `{"metrics":[` + m + `]}` }
	many := func(n int) string {
		return `{"metrics":[` + strings.TrimSuffix(strings.Repeat(`{"metric":"undo"},`, n), ",") + `]}`
	}
	huge := `{"metrics":[{"metric":"undo","request_id":"` + strings.Repeat("r", MaxUXBody) + `"}]}`
	for _, tc := range []struct {
		name, body string
		msg        string
	}{
		{"empty body", ``, "the body is empty; send a JSON object"},
		{"body too large", huge, fmt.Sprintf("the body is %d bytes; the limit is %d", len(huge), MaxUXBody)},
		{"unknown field", `{"metrics":[],"extra":1}`, `the body must be a JSON object of the documented fields: json: unknown field "extra"`},
		{"no metrics", `{"metrics":[]}`, "send 1 to 50 metrics, got 0"},
		{"too many metrics", many(MaxUXMetrics + 1), "send 1 to 50 metrics, got 51"},
		{"unknown metric", one(`{"metric":"clicks"}`),
			`metrics[0]: metric "clicks" is not one of decision_time, taps, decline, undo, correction, approval_fatigue, freetext`},
		{"unknown card type", one(`{"metric":"undo","card_type":"mystery"}`), `metrics[0]: card_type "mystery" is not a known card type`},
		{"unknown risk", one(`{"metric":"undo","risk_level":"extreme"}`), `metrics[0]: risk_level "extreme" is not low, medium, high or irreversible`},
		{"long request id", one(`{"metric":"undo","request_id":"` + strings.Repeat("r", 129) + `"}`), "metrics[0]: request_id is longer than 128 bytes"},
		{"verdict with capitals", one(`{"metric":"undo","verdict":"Approve"}`), "metrics[0]: verdict must be at most 32 characters of [a-z_]"},
		{"verdict too long", one(`{"metric":"undo","verdict":"` + strings.Repeat("a", 33) + `"}`), "metrics[0]: verdict must be at most 32 characters of [a-z_]"},
		{"bad time", one(`{"metric":"undo","at":"noon"}`), `metrics[0]: at "noon" is not RFC 3339`},
		{"decision time without value", one(`{"metric":"decision_time"}`), "metrics[0]: decision_time needs a value"},
		{"negative value", one(`{"metric":"taps","value":-1}`), "metrics[0]: value -1 of taps is outside 0..1000"},
		{"decision time too long", one(`{"metric":"decision_time","value":3600001}`), "metrics[0]: value 3.600001e+06 of decision_time is outside 0..3.6e+06"},
		{"event batch too big", one(`{"metric":"undo","value":1001}`), "metrics[0]: value 1001 of undo is outside 0..1000"},
		{"second metric bad", `{"metrics":[{"metric":"undo"},{"metric":"nope"}]}`,
			`metrics[1]: metric "nope" is not one of decision_time, taps, decline, undo, correction, approval_fatigue, freetext`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, h.owner("POST", "/ux/metrics", tc.body), 400, messages.CodeBadRequest, tc.msg)
		})
	}
	// All or none: a batch with one bad metric records nothing.
	if ev := h.auditEvents(); len(ev) != 0 {
		t.Fatalf("refused metrics were recorded: %+v", ev)
	}
	wantError(t, h.owner("GET", "/ux/metrics?since=last-week", ""), 400, messages.CodeBadRequest,
		`since must be RFC 3339 like 2026-01-02T03:04:05Z, got "last-week"`)
	wantError(t, h.owner("GET", "/ux/metricsx", ""), 404, messages.CodeNotFound, "no such endpoint")
	wantError(t, h.owner("POST", "/ux/metrics/x", `{}`), 404, messages.CodeNotFound, "no such endpoint")
}

func TestUXRecordAndSummarise(t *testing.T) {
	h := newHarness(t)
	var rec map[string]int
	decode(t, h.owner("POST", "/ux/metrics", `{"metrics":[
		{"metric":"decision_time","value":1000,"risk_level":"low","card_type":"plan_approval"},
		{"metric":"decision_time","value":3000,"risk_level":"low"},
		{"metric":"decision_time","value":8000,"risk_level":"high"},
		{"metric":"taps","value":4},
		{"metric":"decline"},
		{"metric":"decline","value":2}]}`), 200, &rec)
	if rec["recorded"] != 6 {
		t.Fatalf("recorded %v", rec)
	}
	ev := h.auditEvents()
	if len(ev) != 6 || ev[4].Event != "ux_metric" || ev[4].Scope != testOwnerID || string(ev[4].Data) != `{"metric":"decline","value":1}` {
		t.Fatalf("audit %+v", ev)
	}
	var sum UXSummary
	decode(t, h.owner("GET", "/ux/metrics", ""), 200, &sum)
	want := UXSummary{Complete: true, Taps: UXStat{Count: 1, Median: 4},
		DecisionTimeMS: map[string]UXStat{"all": {Count: 3, Median: 3000}, "low": {Count: 2, Median: 2000}, "high": {Count: 1, Median: 8000}},
		Events:         map[string]float64{"decline": 3}}
	want.Since = sum.Since
	if mustJSON(sum) != mustJSON(want) {
		t.Fatalf("summary %s,\nwant    %s", mustJSON(sum), mustJSON(want))
	}
	var future UXSummary
	decode(t, h.owner("GET", "/ux/metrics?since=2999-01-01T00:00:00Z", ""), 200, &future)
	if len(future.DecisionTimeMS) != 0 || future.Taps.Count != 0 || len(future.Events) != 0 {
		t.Fatalf("a window in the future holds %s", mustJSON(future))
	}
}
