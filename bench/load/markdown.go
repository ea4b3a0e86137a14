package load

import (
	"fmt"
	"sort"
	"strings"
)

// Markdown renders the report as the tables of the README's performance
// section.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("## Silas load bench\n\n")
	r.writeHeader(&b)
	r.writeComparisons(&b)
	r.writeLoads(&b)
	r.writeRuns(&b)
	r.writeIdle(&b)
	r.writeChaos(&b)
	r.writeSoak(&b)
	r.writeStartup(&b)
	r.writeTargets(&b)
	r.writeLimits(&b)
	r.writeConfig(&b)
	return b.String()
}

func (r *Report) writeHeader(b *strings.Builder) {
	m := r.Machine
	commit := r.Build.Commit
	if commit == "" {
		commit = "unknown commit"
	}
	fmt.Fprintf(b, "Measured %s on %d cores", r.Started.Format("2006-01-02 15:04 MST"), m.Cores)
	if m.CPU != "" {
		fmt.Fprintf(b, " (%s)", m.CPU)
	}
	fmt.Fprintf(b, ", %.1f GiB, %s/%s %s, load average %s at start; commit %s, %s. `%s`, %.0f s.\n\n",
		float64(m.MemoryBytes)/(1<<30), m.OS, m.Arch, m.Kernel, m.LoadAvg, commit, r.Build.GoVersion, r.Command, r.DurationSeconds)
	if len(r.Loads)+len(r.BaselineLoads) > 0 || r.Idle != nil || r.Startup != nil {
		b.WriteString("The daemon (silas, or the baseline of bench/cmd/baseline), the mock model (bench/cmd/mockllm) and the driver are three processes on the same machine; " +
			"each customer sends its next message when the last is answered. Overhead is latency minus the model delay. " +
			"\"other\" is CPU used by the rest of the machine during the load (noise when not near zero).\n\n")
	}
	for _, f := range r.Failures {
		fmt.Fprintf(b, "**Failed:** %s\n\n", f)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(b, "Note: %s\n\n", n)
	}
}

// writeComparisons renders silas as a ratio of the baseline.
func (r *Report) writeComparisons(b *strings.Builder) {
	if len(r.Comparisons) == 0 {
		return
	}
	b.WriteString("### Silas against the baseline\n\n")
	b.WriteString("The baseline (bench/cmd/baseline) speaks the same WebSocket protocol subset to the same driver and calls the same mock model, " +
		"but persists nothing and runs no gates: it is what this machine, the mock and the driver allow. " +
		r.runsText() + " This machine is shared and single runs swing by up to 2x, so the ratios, measured side by side, are what to track.\n\n")
	b.WriteString("| customers × messages | turns/s: silas / baseline | CPU per turn: silas / baseline | overhead p50 (ms): silas / baseline | overhead p99 (ms): silas / baseline | peak RSS: silas / baseline |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, c := range r.Comparisons {
		fmt.Fprintf(b, "| %d × %d | %.0f / %.0f (**%s**) | %.2f / %.2f ms (**%s**) | %.2f / %.2f (**%s**) | %.2f / %.2f (**%s**) | %s / %s (**%s**) |\n",
			c.Customers, c.MessagesEach,
			c.Silas.TurnsPerSecond, c.Baseline.TurnsPerSecond, pct(c.TurnsPerSecondRatio),
			c.Silas.CPUMSPerTurn, c.Baseline.CPUMSPerTurn, times(c.CPUPerTurnRatio),
			c.Silas.OverheadP50MS, c.Baseline.OverheadP50MS, delta(c.OverheadP50DeltaMS),
			c.Silas.OverheadP99MS, c.Baseline.OverheadP99MS, delta(c.OverheadP99DeltaMS),
			mb(c.Silas.PeakRSSBytes), mb(c.Baseline.PeakRSSBytes), times(c.PeakRSSRatio))
	}
	b.WriteString("\n")
}

// runsText says how the kept runs were chosen.
func (r *Report) runsText() string {
	per := map[string]int{}
	most := 0
	for _, s := range r.Runs {
		k := s.Name + "/" + string(s.Daemon)
		per[k]++
		most = max(most, per[k])
	}
	if most <= 1 {
		return "Each side ran once, one after the other."
	}
	return fmt.Sprintf("Each side ran %d times per scenario, interleaved (silas, baseline, silas, ...); "+
		"the best run of each is kept (every turn answered first, then the most turns/s).", most)
}

// writeLoads renders the kept run of every scenario, silas's and then the
// baseline's.
func (r *Report) writeLoads(b *strings.Builder) {
	rows := r.keptLoads()
	if len(rows) == 0 {
		return
	}
	b.WriteString("### Chatbot load\n\n")
	b.WriteString("| customers × messages | daemon | model | turns ok | failed | dup / missing | turns/s | latency p50 / p95 / p99 / max (ms) | overhead p50 / p99 (ms) | CPU / turn | peak RSS | cores busy: daemon / mock / driver / other |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, l := range rows {
		model := fmt.Sprintf("%g ms", l.DelayMS)
		if l.ThinkMS > 0 {
			model += fmt.Sprintf(", think %g ms", l.ThinkMS)
		}
		fmt.Fprintf(b, "| %d × %d | %s | %s | %d / %d | %s | %d / %d | %.0f | %.1f / %.1f / %.1f / %.1f | %.2f / %.2f | %.2f ms | %s | %.2f / %.2f / %.2f / %.2f |\n",
			l.Customers, l.MessagesEach, daemonName(l.Daemon), model, l.Completed, l.Planned, failedText(l.Failed),
			l.Integrity.Duplicates, l.Integrity.Missing, l.TurnsPerSecond,
			l.Latency.P50, l.Latency.P95, l.Latency.P99, l.Latency.Max,
			l.Overhead.P50, l.Overhead.P99, l.Server.CPUMSPerTurn, mb(l.Server.PeakRSSBytes),
			l.Server.Cores, l.Mock.Cores, l.Driver.Cores, l.Other.Cores)
	}
	b.WriteString("\n")
	for _, l := range rows {
		if l.ConnectError != "" {
			fmt.Fprintf(b, "%s (%s): first connection failure: %s\n\n", l.Name, daemonName(l.Daemon), l.ConnectError)
		}
		if l.DisconnectError != "" {
			fmt.Fprintf(b, "%s (%s): first disconnect under a waiting turn: %s\n\n", l.Name, daemonName(l.Daemon), l.DisconnectError)
		}
	}
}

// keptLoads orders the kept runs: each silas scenario followed by the
// baseline's run of it, then baseline runs with no silas counterpart.
func (r *Report) keptLoads() []*LoadResult {
	var rows []*LoadResult
	used := map[*LoadResult]bool{}
	for _, l := range r.Loads {
		rows = append(rows, l)
		for _, b := range r.BaselineLoads {
			if !used[b] && b.Name == l.Name && b.Customers == l.Customers {
				rows = append(rows, b)
				used[b] = true
				break
			}
		}
	}
	for _, b := range r.BaselineLoads {
		if !used[b] {
			rows = append(rows, b)
		}
	}
	return rows
}

// daemonName is the daemon's name; results from before the baseline carry
// none and were silas's.
func daemonName(d Daemon) string {
	if d == "" {
		return string(DaemonSilas)
	}
	return string(d)
}

// writeRuns lists every run when scenarios ran more than once, so the
// spread between runs (the machine's noise) is visible.
func (r *Report) writeRuns(b *strings.Builder) {
	if len(r.Runs) <= len(r.Loads)+len(r.BaselineLoads) {
		return
	}
	b.WriteString("### Every run\n\n")
	b.WriteString("In the order they ran; the kept run of each daemon and scenario is marked.\n\n")
	b.WriteString("| scenario | daemon | run | turns/s | CPU / turn | overhead p50 / p99 (ms) | peak RSS | errors | other cores busy | kept |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Runs {
		kept := ""
		if s.Kept {
			kept = "yes"
		}
		fmt.Fprintf(b, "| %s | %s | %d | %.0f | %.2f ms | %.2f / %.2f | %s | %d | %.2f | %s |\n",
			s.Name, daemonName(s.Daemon), s.Run, s.TurnsPerSecond, s.CPUMSPerTurn, s.OverheadP50MS, s.OverheadP99MS,
			mb(s.PeakRSSBytes), s.Errors, s.OtherCores, kept)
	}
	b.WriteString("\n")
}

// failedText renders failures by kind, "0" for none.
func failedText(failed map[string]int) string {
	kinds := make([]string, 0, len(failed))
	for k, v := range failed {
		if v > 0 {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return "0"
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", failed[k], k)
	}
	return strings.Join(parts, ", ")
}

func (r *Report) writeIdle(b *strings.Builder) {
	i := r.Idle
	if i == nil {
		return
	}
	probe := fmt.Sprintf("%.1f ms", i.ProbeMS)
	if i.ProbeError != "" {
		probe = "failed: " + i.ProbeError
	}
	b.WriteString("### Idle customers\n\n")
	b.WriteString("| idle customers | connected | connect time | silas RSS before → after | RSS per customer | silas threads | one turn meanwhile |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(b, "| %d | %d | %.1f s | %s → %s | %s | %d | %s |\n\n",
		i.Customers, i.Connected, i.ConnectSeconds, mb(i.RSSBeforeBytes), mb(i.RSSAfterBytes),
		kb(int64(i.RSSPerCustomerBytes)), i.Threads, probe)
}

func (r *Report) writeStartup(b *strings.Builder) {
	s := r.Startup
	if s == nil {
		return
	}
	b.WriteString("### Startup\n\n")
	b.WriteString("| start to ready | p50 | max | CPU until ready (p50) |\n")
	b.WriteString("|---|---|---|---|\n")
	fmt.Fprintf(b, "| first start (empty data dir), %d runs | %.1f ms | %.1f ms | %.0f ms |\n", s.Runs, s.Cold.P50, s.Cold.Max, s.ColdCPUMS)
	fmt.Fprintf(b, "| restart (same data dir), %d runs | %.1f ms | %.1f ms | %.0f ms |\n\n", s.Runs, s.Warm.P50, s.Warm.Max, s.WarmCPUMS)
	fmt.Fprintf(b, "Idle RSS: %s at the ready line, %s one second later.\n\n", mb(s.ReadyRSSBytes), mb(s.IdleRSSBytes))
}

func (r *Report) writeTargets(b *strings.Builder) {
	if len(r.Targets) == 0 {
		return
	}
	b.WriteString("### Targets\n\n")
	b.WriteString("| target | goal | measured | met |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, t := range r.Targets {
		met := "yes"
		if !t.Met {
			met = "**no**"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", t.Name, t.Goal, t.Measured, met)
	}
	b.WriteString("\n")
}

func (r *Report) writeLimits(b *strings.Builder) {
	if len(r.RaisedLimits) == 0 {
		return
	}
	b.WriteString("### Limits the bench raises\n\nEverything else is the default config, at log level warn.\n\n")
	b.WriteString("| key | bench | default | why |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, l := range r.RaisedLimits {
		fmt.Fprintf(b, "| `%s` | %d | %d | %s |\n", l.Key, l.Value, l.Default, l.Why)
	}
}

func (r *Report) writeConfig(b *strings.Builder) {
	if r.Config == "" {
		return
	}
	b.WriteString("\n<details><summary>silas config of every scenario</summary>\n\n```yaml\n")
	b.WriteString(r.Config)
	b.WriteString("```\n\n</details>\n")
}
