package load

import (
	"fmt"
	"time"
)

// TargetResult is one performance goal of the bench issue and whether the
// run met it.
type TargetResult struct {
	Name     string `json:"name"`
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

// TargetDelay is the model delay the load targets are stated for.
const TargetDelay = 50 * time.Millisecond

// The goals, in the units the report shows (decimal MB and KB).
const (
	goalN50TurnsPerSec   = 900
	goalN50OverheadP50MS = 2
	goalN50OverheadP99MS = 10
	goalN1000TurnsPerSec = 3000
	goalIdleBytesPerConn = 30_000
	goalIdleRSSBytes     = 40_000_000
	goalStartToReadyMS   = 200
)

// The goals relative to the baseline daemon (the performance issue), and
// the peak RSS goals. A ratio is silas's figure over the baseline's in the
// same run of the matrix; a delta is silas's minus the baseline's.
const (
	goalN1000CPURatio      = 2.0
	goalN1000TurnsRatio    = 0.65
	goalN50TurnsRatio      = 0.98
	goalN50OverheadP50Plus = 1.0 // ms
	goalN50OverheadP99Plus = 5.0 // ms
	goalN50PeakRSSBytes    = 80_000_000
	goalN1000PeakRSSBytes  = 250_000_000
)

// EvaluateTargets checks the goals whose scenario the report holds; goals
// of scenarios that did not run are left out, and so are the goals
// relative to the baseline when the baseline did not run the scenario.
func EvaluateTargets(r *Report) []TargetResult {
	var ts []TargetResult
	add := func(name, goal, measured string, met bool) {
		ts = append(ts, TargetResult{Name: name, Goal: goal, Measured: measured, Met: met})
	}
	ts = append(ts, baselineTargets(r)...)
	ts = append(ts, chaosTargets(r.Chaos)...)
	ts = append(ts, soakTargets(r.Soak)...)
	if l := r.Load(50, TargetDelay); l != nil {
		add("N=50: throughput", fmt.Sprintf("≥ %d turns/s", goalN50TurnsPerSec),
			fmt.Sprintf("%.0f turns/s", l.TurnsPerSecond), l.TurnsPerSecond >= goalN50TurnsPerSec)
		add("N=50: overhead p50", fmt.Sprintf("< %d ms", goalN50OverheadP50MS),
			fmt.Sprintf("%.2f ms", l.Overhead.P50), l.Overhead.Count > 0 && l.Overhead.P50 < goalN50OverheadP50MS)
		add("N=50: overhead p99", fmt.Sprintf("< %d ms", goalN50OverheadP99MS),
			fmt.Sprintf("%.2f ms", l.Overhead.P99), l.Overhead.Count > 0 && l.Overhead.P99 < goalN50OverheadP99MS)
		add("N=50: errors", "0", errorsText(l), l.Errors() == 0 && l.Completed == l.Planned)
	}
	if l := r.Load(1000, TargetDelay); l != nil {
		add("N=1000: throughput", fmt.Sprintf("≥ %d turns/s", goalN1000TurnsPerSec),
			fmt.Sprintf("%.0f turns/s", l.TurnsPerSecond), l.TurnsPerSecond >= goalN1000TurnsPerSec)
		add("N=1000: errors, every turn answered exactly once", "0", errorsText(l),
			l.Errors() == 0 && l.Completed == l.Planned)
	}
	if i := r.Idle; i != nil {
		add(fmt.Sprintf("%d idle customers: RSS each", i.Customers), fmt.Sprintf("< %s", kb(goalIdleBytesPerConn)),
			kb(int64(i.RSSPerCustomerBytes)), i.ConnectFailed == 0 && i.RSSPerCustomerBytes < goalIdleBytesPerConn)
	}
	if s := r.Startup; s != nil {
		add("idle RSS", fmt.Sprintf("< %s", mb(goalIdleRSSBytes)), mb(s.IdleRSSBytes), s.IdleRSSBytes < goalIdleRSSBytes)
		add("start to ready (warm restart, p50)", fmt.Sprintf("< %d ms", goalStartToReadyMS),
			fmt.Sprintf("%.1f ms", s.Warm.P50), s.Warm.P50 < goalStartToReadyMS)
		add("start to ready (first start, p50)", fmt.Sprintf("< %d ms", goalStartToReadyMS),
			fmt.Sprintf("%.1f ms", s.Cold.P50), s.Cold.P50 < goalStartToReadyMS)
	}
	return ts
}

// baselineTargets checks the goals stated relative to the baseline, and
// the peak RSS goals of the same scenarios.
func baselineTargets(r *Report) []TargetResult {
	var ts []TargetResult
	add := func(name, goal, measured string, met bool) {
		ts = append(ts, TargetResult{Name: name, Goal: goal, Measured: measured, Met: met})
	}
	if l := r.Load(50, TargetDelay); l != nil {
		if b := r.Baseline(50, TargetDelay); b != nil {
			c := Compare(l, b)
			add("N=50: throughput vs baseline", fmt.Sprintf("≥ %s of the baseline's", pct(goalN50TurnsRatio)),
				fmt.Sprintf("%s (%.0f / %.0f turns/s)", pct(c.TurnsPerSecondRatio), c.Silas.TurnsPerSecond, c.Baseline.TurnsPerSecond),
				c.TurnsPerSecondRatio >= goalN50TurnsRatio)
			add("N=50: overhead p50 vs baseline", fmt.Sprintf("≤ baseline + %g ms", goalN50OverheadP50Plus),
				fmt.Sprintf("%s ms (%.2f / %.2f ms)", delta(c.OverheadP50DeltaMS), c.Silas.OverheadP50MS, c.Baseline.OverheadP50MS),
				l.Overhead.Count > 0 && b.Overhead.Count > 0 && c.OverheadP50DeltaMS <= goalN50OverheadP50Plus)
			add("N=50: overhead p99 vs baseline", fmt.Sprintf("≤ baseline + %g ms", goalN50OverheadP99Plus),
				fmt.Sprintf("%s ms (%.2f / %.2f ms)", delta(c.OverheadP99DeltaMS), c.Silas.OverheadP99MS, c.Baseline.OverheadP99MS),
				l.Overhead.Count > 0 && b.Overhead.Count > 0 && c.OverheadP99DeltaMS <= goalN50OverheadP99Plus)
		}
		add("N=50: peak RSS", fmt.Sprintf("≤ %s", mb(goalN50PeakRSSBytes)), mb(l.Server.PeakRSSBytes),
			l.Server.PeakRSSBytes > 0 && l.Server.PeakRSSBytes <= goalN50PeakRSSBytes)
	}
	if l := r.Load(1000, TargetDelay); l != nil {
		if b := r.Baseline(1000, TargetDelay); b != nil {
			c := Compare(l, b)
			add("N=1000: CPU per turn vs baseline", fmt.Sprintf("≤ %s the baseline's", times(goalN1000CPURatio)),
				fmt.Sprintf("%s (%.2f / %.2f ms)", times(c.CPUPerTurnRatio), c.Silas.CPUMSPerTurn, c.Baseline.CPUMSPerTurn),
				c.CPUPerTurnRatio > 0 && c.CPUPerTurnRatio <= goalN1000CPURatio)
			add("N=1000: throughput vs baseline", fmt.Sprintf("≥ %s of the baseline's", pct(goalN1000TurnsRatio)),
				fmt.Sprintf("%s (%.0f / %.0f turns/s)", pct(c.TurnsPerSecondRatio), c.Silas.TurnsPerSecond, c.Baseline.TurnsPerSecond),
				c.TurnsPerSecondRatio >= goalN1000TurnsRatio)
		}
		add(fmt.Sprintf("N=1000 × %d: peak RSS", l.MessagesEach), fmt.Sprintf("≤ %s", mb(goalN1000PeakRSSBytes)), mb(l.Server.PeakRSSBytes),
			l.Server.PeakRSSBytes > 0 && l.Server.PeakRSSBytes <= goalN1000PeakRSSBytes)
	}
	return ts
}

// pct renders a ratio as a percentage; "n/a" for an undefined (zero) one.
func pct(f float64) string {
	if f == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", f*100)
}

// times renders a ratio as a multiple; "n/a" for an undefined (zero) one.
func times(f float64) string {
	switch {
	case f == 0:
		return "n/a"
	case f < 1:
		return fmt.Sprintf("%.2fx", f)
	case f < 10:
		return fmt.Sprintf("%.1fx", f)
	}
	return fmt.Sprintf("%.0fx", f)
}

// delta renders a difference in milliseconds with its sign.
func delta(f float64) string { return fmt.Sprintf("%+.2f", f) }

// errorsText says how many turns failed or broke exactly-once, of how many.
func errorsText(l *LoadResult) string {
	s := fmt.Sprintf("%d of %d turns", l.Errors(), l.Planned)
	if n := l.Planned - l.Completed - l.FailedTotal(); n > 0 {
		s += fmt.Sprintf(" (%d never sent)", n)
	}
	return s
}

// mb renders bytes in decimal megabytes.
func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

// kb renders bytes in decimal kilobytes.
func kb(b int64) string { return fmt.Sprintf("%.1f KB", float64(b)/1e3) }
