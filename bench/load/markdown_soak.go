package load

import (
	"fmt"
	"strings"
	"time"
)

// writeSoak renders the soak: how it was driven, the verdict and a row
// per sample.
func (r *Report) writeSoak(b *strings.Builder) {
	s := r.Soak
	if s == nil {
		return
	}
	v := s.Verdict
	b.WriteString("### Soak\n\n")
	rate := fmt.Sprintf("%.1f turns/s (set with -soak-rate)", s.Rate)
	if s.RateSource == "probe" {
		rate = fmt.Sprintf("%.1f turns/s, half of the %.0f turns/s the same customers reached without pause in a %.0f s probe on a fresh daemon",
			s.Rate, s.ProbeTurnsPerSecond, s.ProbeSeconds)
	}
	limit := "no soft memory limit"
	if s.MemorySoftLimitMB > 0 {
		limit = fmt.Sprintf("silas.process.memory_soft_limit_mb %d", s.MemorySoftLimitMB)
	}
	fmt.Fprintf(b, "%d customers drive silas for %s at %s (model %g ms, %s); %d turns answered (%.1f turns/s), failed: %s, turns missed because every customer was still waiting: %d. "+
		"silas wrote %d warning or error lines.\n\n",
		s.Customers, time.Duration(s.DurationSeconds*float64(time.Second)).Round(time.Second), rate, s.DelayMS, limit,
		s.Completed, s.TurnsPerSecond, failedText(s.Failed), s.Missed, s.LogLines)
	if fs := s.Failures(); len(fs) > 0 {
		fmt.Fprintf(b, "**Not flat:** %s.\n\n", strings.Join(fs, "; "))
	} else {
		fmt.Fprintf(b, "**Flat:** anonymous RSS %s to %s (%.1f%%), goroutines %.0f to %.0f (%.1f%%) over %d samples after the warm-up; mapped file pages at most %s over the database.\n\n",
			mb(int64(v.RSSAnon.Min)), mb(int64(v.RSSAnon.Max)), v.RSSAnon.Spread*100, v.Goroutines.Min, v.Goroutines.Max, v.Goroutines.Spread*100, v.Samples, signedMB(v.MappedOverStore))
	}
	fmt.Fprintf(b, "Rule: %s.\n\nAfter the warm-up: total RSS %s to %s (%.1f%%), the GC's heap goal %s to %s (%.1f%%), open files %.0f to %.0f (%.1f%%). "+
		"Turns/s, first samples after the warm-up → last: %.1f → %.1f (%s); latency p99 %.1f → %.1f ms.\n\n",
		v.Rule, mb(int64(v.RSS.Min)), mb(int64(v.RSS.Max)), v.RSS.Spread*100,
		mb(int64(v.HeapGoal.Min)), mb(int64(v.HeapGoal.Max)), v.HeapGoal.Spread*100,
		v.OpenFDs.Min, v.OpenFDs.Max, v.OpenFDs.Spread*100, v.TurnsFirst, v.TurnsLast, pct(v.TurnsRatio), v.P99First, v.P99Last)
	if s.ScrapeError != "" {
		fmt.Fprintf(b, "Reading /metrics failed: %s\n\n", s.ScrapeError)
	}
	b.WriteString("| at | turns/s | CPU / turn | cores busy | latency p50 / p99 (ms) | failed | missed | RSS (anon / file) | heap (goal) | goroutines (low / high) | threads | open files | badger on disk (apparent) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range s.Samples {
		warm := ""
		if x.AtSeconds <= v.WarmupSeconds {
			warm = " (warm-up)"
		}
		gor := "?"
		if x.Goroutines >= 0 {
			gor = fmt.Sprintf("%d / %d", x.Goroutines, x.GoroutinesMax)
		}
		fmt.Fprintf(b, "| %s%s | %.1f | %.2f ms | %.2f | %.1f / %.1f | %d | %d | %s (%s / %s) | %s (%s) | %s | %d | %d | %s (%s) |\n",
			time.Duration(x.AtSeconds*float64(time.Second)).Round(time.Second), warm, x.TurnsPerSecond, x.CPUMSPerTurn, x.ServerCores,
			x.LatencyP50MS, x.LatencyP99MS, x.Failed, x.Missed, mb(x.RSSBytes), mb(x.RSSAnonBytes), mb(x.RSSFileBytes),
			mb(x.HeapBytes), mb(x.HeapGoalBytes), gor, x.Threads, x.OpenFDs,
			mb(x.BadgerBytes), mb(x.BadgerApparentBytes))
	}
	b.WriteString("\n")
}
