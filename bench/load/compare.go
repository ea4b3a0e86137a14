package load

import (
	"cmp"
	"math"
)

// Figures are the numbers of one kept load run that silas is compared on.
type Figures struct {
	TurnsPerSecond float64 `json:"turns_per_second"`
	CPUMSPerTurn   float64 `json:"cpu_ms_per_turn"`
	OverheadP50MS  float64 `json:"overhead_p50_ms"`
	OverheadP99MS  float64 `json:"overhead_p99_ms"`
	PeakRSSBytes   int64   `json:"peak_rss_bytes"`
}

func figuresOf(l *LoadResult) Figures {
	return Figures{
		TurnsPerSecond: l.TurnsPerSecond, CPUMSPerTurn: l.Server.CPUMSPerTurn,
		OverheadP50MS: l.Overhead.P50, OverheadP99MS: l.Overhead.P99, PeakRSSBytes: l.Server.PeakRSSBytes,
	}
}

// Comparison is silas against the baseline in one load scenario: the kept
// run of each and silas as a ratio of the baseline. A ratio whose baseline
// figure is zero is 0 (undefined).
type Comparison struct {
	Name         string  `json:"name"`
	Customers    int     `json:"customers"`
	MessagesEach int     `json:"messages_each"`
	Silas        Figures `json:"silas"`
	Baseline     Figures `json:"baseline"`
	// TurnsPerSecondRatio is silas's turns/s over the baseline's: 1 is as
	// fast, 0.5 half as fast.
	TurnsPerSecondRatio float64 `json:"turns_per_second_ratio"`
	// CPUPerTurnRatio is silas's CPU per turn over the baseline's: 2 is
	// twice the CPU.
	CPUPerTurnRatio float64 `json:"cpu_per_turn_ratio"`
	// OverheadP50DeltaMS and OverheadP99DeltaMS are silas's overhead
	// percentiles minus the baseline's, in milliseconds.
	OverheadP50DeltaMS float64 `json:"overhead_p50_delta_ms"`
	OverheadP99DeltaMS float64 `json:"overhead_p99_delta_ms"`
	// PeakRSSRatio is silas's peak RSS over the baseline's.
	PeakRSSRatio float64 `json:"peak_rss_ratio"`
}

// Compare puts silas's run next to the baseline's run of the same scenario.
func Compare(silas, baseline *LoadResult) Comparison {
	s, b := figuresOf(silas), figuresOf(baseline)
	return Comparison{
		Name: silas.Name, Customers: silas.Customers, MessagesEach: silas.MessagesEach,
		Silas: s, Baseline: b,
		TurnsPerSecondRatio: ratio(s.TurnsPerSecond, b.TurnsPerSecond),
		CPUPerTurnRatio:     ratio(s.CPUMSPerTurn, b.CPUMSPerTurn),
		OverheadP50DeltaMS:  round3(s.OverheadP50MS - b.OverheadP50MS),
		OverheadP99DeltaMS:  round3(s.OverheadP99MS - b.OverheadP99MS),
		PeakRSSRatio:        ratio(float64(s.PeakRSSBytes), float64(b.PeakRSSBytes)),
	}
}

// ratio is a over b to three decimals, 0 when b is not positive.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return round3(a / b)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// clean reports whether every planned turn was answered exactly once.
func (r *LoadResult) clean() bool { return r.Errors() == 0 && r.Completed == r.Planned }

// Best returns the run to keep of repeated runs of one scenario: a clean
// run before one with errors, then the highest turns/s, then the least CPU
// per turn; the earlier run on a tie. The best rather than the mean,
// because noise on a shared machine only ever slows a run down. Nil runs
// are skipped; nil for none.
func Best(runs []*LoadResult) *LoadResult {
	var best *LoadResult
	for _, r := range runs {
		if r == nil {
			continue
		}
		if best == nil || better(r, best) {
			best = r
		}
	}
	return best
}

// better reports whether a beats b.
func better(a, b *LoadResult) bool {
	if a.clean() != b.clean() {
		return a.clean()
	}
	if c := cmp.Compare(a.TurnsPerSecond, b.TurnsPerSecond); c != 0 {
		return c > 0
	}
	return a.Server.CPUMSPerTurn < b.Server.CPUMSPerTurn
}

// RunSummary is one run of a load scenario, kept or not: the spread
// between runs shows how noisy the machine was.
type RunSummary struct {
	Name   string `json:"name"`
	Daemon Daemon `json:"daemon"`
	Run    int    `json:"run"`
	Figures
	// Errors counts failed turns and integrity breaks.
	Errors int `json:"errors"`
	// OtherCores is the CPU the rest of the machine used meanwhile.
	OtherCores float64 `json:"other_cores_busy"`
	// Kept says this run is the one reported for its daemon and scenario.
	Kept bool `json:"kept"`
}

func summarize(l *LoadResult, kept bool) RunSummary {
	return RunSummary{Name: l.Name, Daemon: l.Daemon, Run: l.Run, Figures: figuresOf(l),
		Errors: l.Errors(), OtherCores: l.Other.Cores, Kept: kept}
}
