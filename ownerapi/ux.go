package ownerapi

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// UX metric limits (spec 0.5.6: collected in the audit log, no external
// telemetry). The caps keep a buggy or hostile client from bloating the
// audit chain.
const (
	// MaxUXBody is the largest POST /ux/metrics body, in bytes.
	MaxUXBody = 16 << 10
	// MaxUXMetrics is the most metrics one POST /ux/metrics carries.
	MaxUXMetrics    = 50
	maxDecisionMS   = 3_600_000
	maxTaps         = 1000
	maxUXRequestID  = 128
	maxUXVerdictLen = 32
)

// uxValueMax is the largest value of each metric; 0 means "an event":
// value optional, 1 by default.
var uxValueMax = map[string]float64{
	"decision_time":    maxDecisionMS,
	"taps":             maxTaps,
	"decline":          0,
	"undo":             0,
	"correction":       0,
	"approval_fatigue": 0,
	"freetext":         0,
}

var uxCardTypes = map[string]bool{
	"plan_approval": true, "gate_approval": true, "checkpoint": true, "batch_review": true,
	"draft_review": true, "decision": true, "suggestion": true, "autonomy_threshold_review": true,
	"secure_input": true, "connection_setup": true, "permission_escalation": true,
	"connection_failure": true, "post_execution": true, "chat": true,
	"connection_approval": true, "skill_install": true,
}

var uxRiskLevels = map[string]bool{"low": true, "medium": true, "high": true, "irreversible": true}

// UXMetric is one measurement from the PWA, as POST /ux/metrics takes it
// and its ux_metric audit entry stores it.
type UXMetric struct {
	Metric    string   `json:"metric"`
	CardType  string   `json:"card_type,omitempty"`
	RequestID string   `json:"request_id,omitempty"`
	RiskLevel string   `json:"risk_level,omitempty"`
	Value     *float64 `json:"value,omitempty"`
	Verdict   string   `json:"verdict,omitempty"`
	At        string   `json:"at,omitempty"`
}

type uxRequest struct {
	Metrics []UXMetric `json:"metrics"`
}

// validate checks m and fills its default value.
func (m *UXMetric) validate() error {
	limit, ok := uxValueMax[m.Metric]
	switch {
	case !ok:
		return fmt.Errorf("metric %q is not one of decision_time, taps, decline, undo, correction, approval_fatigue, freetext", m.Metric)
	case m.CardType != "" && !uxCardTypes[m.CardType]:
		return fmt.Errorf("card_type %q is not a known card type", m.CardType)
	case m.RiskLevel != "" && !uxRiskLevels[m.RiskLevel]:
		return fmt.Errorf("risk_level %q is not low, medium, high or irreversible", m.RiskLevel)
	case len(m.RequestID) > maxUXRequestID:
		return fmt.Errorf("request_id is longer than %d bytes", maxUXRequestID)
	case !verdictOK(m.Verdict):
		return fmt.Errorf("verdict must be at most %d characters of [a-z_]", maxUXVerdictLen)
	}
	if m.At != "" {
		if _, err := time.Parse(time.RFC3339Nano, m.At); err != nil {
			return fmt.Errorf("at %q is not RFC 3339", m.At)
		}
	}
	if m.Value == nil {
		if limit > 0 {
			return fmt.Errorf("%s needs a value", m.Metric)
		}
		one := 1.0
		m.Value = &one
		return nil
	}
	v := *m.Value
	if limit == 0 {
		limit = 1000 // event counts: a batch of events at most
	}
	if v < 0 || v > limit || v != v {
		return fmt.Errorf("value %v of %s is outside 0..%v", v, m.Metric, limit)
	}
	return nil
}

func verdictOK(s string) bool {
	if len(s) > maxUXVerdictLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || c == '_') {
			return false
		}
	}
	return true
}

func (a *API) uxRoutes() map[string]fasthttp.RequestHandler {
	return map[string]fasthttp.RequestHandler{"POST /ux/metrics": a.recordUX, "GET /ux/metrics": a.summariseUX}
}

// recordUX serves POST /ux/metrics: every metric of the request becomes one
// ux_metric audit entry, all or none.
func (a *API) recordUX(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/ux/metrics" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	var req uxRequest
	if err := decodeOwnerBody(ctx, &req, MaxUXBody, false); err != nil {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, err.Error())
		return
	}
	if n := len(req.Metrics); n == 0 || n > MaxUXMetrics {
		WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, fmt.Sprintf("send 1 to %d metrics, got %d", MaxUXMetrics, n))
		return
	}
	entries := make([]persistence.AuditEntry, len(req.Metrics))
	for i := range req.Metrics {
		m := &req.Metrics[i]
		if err := m.validate(); err != nil {
			WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, fmt.Sprintf("metrics[%d]: %v", i, err))
			return
		}
		b, err := json.Marshal(m)
		if err != nil {
			WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
			return
		}
		entries[i] = persistence.AuditEntry{Event: "ux_metric", Scope: a.d.OwnerID, Data: b}
	}
	c, cancel := reqContext()
	defer cancel()
	if _, err := a.d.DB.Audit().Append(c, entries...); err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, map[string]int{"recorded": len(entries)})
}

// Summary bounds: the window defaults to a week, and one summary reads at
// most maxUXScan audit entries walking back from the newest.
const (
	defaultUXWindow = 7 * 24 * time.Hour
	maxUXScan       = 100_000
)

// UXStat is a count and a median.
type UXStat struct {
	Count  int     `json:"count"`
	Median float64 `json:"median"`
}

// UXSummary answers GET /ux/metrics: the 0.5.6 metrics over a window.
type UXSummary struct {
	Since time.Time `json:"since"`
	// Complete is false when the scan bound was reached before since.
	Complete bool `json:"complete"`
	// DecisionTimeMS is per risk level ("" is not reported) and "all".
	DecisionTimeMS map[string]UXStat `json:"decision_time_ms"`
	Taps           UXStat            `json:"taps"`
	// Events counts decline, undo, correction, approval_fatigue, freetext.
	Events map[string]float64 `json:"events"`
}

func (a *API) summariseUX(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/ux/metrics" {
		WriteError(ctx, fasthttp.StatusNotFound, messages.CodeNotFound, "no such endpoint")
		return
	}
	since := time.Now().Add(-defaultUXWindow).UTC()
	if v := ctx.QueryArgs().Peek("since"); len(v) > 0 {
		t, err := time.Parse(time.RFC3339Nano, string(v))
		if err != nil {
			WriteError(ctx, fasthttp.StatusBadRequest, messages.CodeBadRequest, fmt.Sprintf("since must be RFC 3339 like 2026-01-02T03:04:05Z, got %q", v))
			return
		}
		since = t
	}
	c, cancel := reqContext()
	defer cancel()
	sum, err := a.uxSummary(c, since)
	if err != nil {
		WriteError(ctx, fasthttp.StatusInternalServerError, messages.CodeInternal, err.Error())
		return
	}
	WriteJSON(ctx, fasthttp.StatusOK, sum)
}

func (a *API) uxSummary(ctx context.Context, since time.Time) (UXSummary, error) {
	out := UXSummary{Since: since, Complete: true, DecisionTimeMS: map[string]UXStat{}, Events: map[string]float64{}}
	head, _, err := a.d.DB.Audit().Head(ctx)
	if err != nil {
		return out, err
	}
	decisions := map[string][]float64{}
	var taps []float64
	cursor, scanned := head+1, 0
walk:
	for cursor > 1 {
		if scanned >= maxUXScan {
			out.Complete = false
			break
		}
		from := uint64(1)
		if cursor > activityChunk {
			from = cursor - activityChunk
		}
		entries, err := a.d.DB.Audit().Range(ctx, from, int(cursor-from))
		if err != nil {
			return out, err
		}
		for i := len(entries) - 1; i >= 0; i-- {
			e := entries[i]
			scanned++
			if e.Time.Before(since) {
				break walk
			}
			if e.Event != "ux_metric" {
				continue
			}
			var m UXMetric
			if json.Unmarshal(e.Data, &m) != nil || m.Value == nil {
				continue
			}
			switch m.Metric {
			case "decision_time":
				decisions["all"] = append(decisions["all"], *m.Value)
				if m.RiskLevel != "" {
					decisions[m.RiskLevel] = append(decisions[m.RiskLevel], *m.Value)
				}
			case "taps":
				taps = append(taps, *m.Value)
			default:
				out.Events[m.Metric] += *m.Value
			}
		}
		cursor = from
	}
	for k, v := range decisions {
		out.DecisionTimeMS[k] = stat(v)
	}
	out.Taps = stat(taps)
	return out, nil
}

func stat(v []float64) UXStat {
	if len(v) == 0 {
		return UXStat{}
	}
	slices.Sort(v)
	mid := len(v) / 2
	med := v[mid]
	if len(v)%2 == 0 {
		med = (v[mid-1] + v[mid]) / 2
	}
	return UXStat{Count: len(v), Median: med}
}
