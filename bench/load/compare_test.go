package load

import (
	"strings"
	"testing"
)

// result is a load result with the figures Compare and Best read.
func result(d Daemon, run int, tps, cpu, p50, p99 float64, rss int64) *LoadResult {
	return &LoadResult{Name: "n50", Daemon: d, Run: run, Customers: 50, MessagesEach: 200, DelayMS: 50,
		Planned: 100, Completed: 100, Failed: map[string]int{}, TurnsPerSecond: tps,
		Overhead: Percentiles{Count: 100, P50: p50, P99: p99},
		Server:   ServerUsage{CPUMSPerTurn: cpu, PeakRSSBytes: rss}}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name           string
		silas, base    *LoadResult
		tps, cpu, rss  float64
		dP50, dP99     float64
		pctText, xText string
	}{
		{"issue 17's N=50 row", result(DaemonSilas, 0, 912, 0.85, 2.9, 23, 149_000_000), result(DaemonBaseline, 0, 954, 0.21, 1.6, 10, 21_000_000),
			0.956, 4.048, 7.095, 1.3, 13, "96%", "4.0x"},
		{"silas faster and leaner", result(DaemonSilas, 0, 1100, 0.1, 0.5, 2, 10_000_000), result(DaemonBaseline, 0, 1000, 0.2, 1, 4, 20_000_000),
			1.1, 0.5, 0.5, -0.5, -2, "110%", "0.50x"},
		{"baseline measured nothing: undefined, not infinite", result(DaemonSilas, 0, 900, 0.9, 2, 9, 60_000_000), result(DaemonBaseline, 0, 0, 0, 0, 0, 0),
			0, 0, 0, 2, 9, "n/a", "n/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(tc.silas, tc.base)
			if c.TurnsPerSecondRatio != tc.tps || c.CPUPerTurnRatio != tc.cpu || c.PeakRSSRatio != tc.rss ||
				c.OverheadP50DeltaMS != tc.dP50 || c.OverheadP99DeltaMS != tc.dP99 {
				t.Errorf("Compare = %+v; want turns/s %v, CPU %v, RSS %v, overhead %+v / %+v", c, tc.tps, tc.cpu, tc.rss, tc.dP50, tc.dP99)
			}
			if c.Silas.TurnsPerSecond != tc.silas.TurnsPerSecond || c.Baseline.PeakRSSBytes != tc.base.Server.PeakRSSBytes || c.Name != "n50" {
				t.Errorf("Compare lost the absolute figures: %+v", c)
			}
			if got := pct(c.TurnsPerSecondRatio); got != tc.pctText {
				t.Errorf("pct = %q, want %q", got, tc.pctText)
			}
			if got := times(c.CPUPerTurnRatio); got != tc.xText {
				t.Errorf("times = %q, want %q", got, tc.xText)
			}
		})
	}
}

func TestBest(t *testing.T) {
	fast := result(DaemonSilas, 1, 1000, 1.0, 1, 5, 1)
	faster := result(DaemonSilas, 2, 1100, 1.2, 1, 5, 1)
	fasterCheaper := result(DaemonSilas, 3, 1100, 1.1, 1, 5, 1)
	fastestBroken := result(DaemonSilas, 4, 2000, 0.5, 1, 5, 1)
	fastestBroken.Integrity.Duplicates = 1
	cut := result(DaemonSilas, 5, 3000, 0.5, 1, 5, 1)
	cut.Completed = 90 // cut by the duration limit: turns never sent
	for _, tc := range []struct {
		name string
		runs []*LoadResult
		want *LoadResult
	}{
		{"none", nil, nil},
		{"nil runs are skipped", []*LoadResult{nil, fast, nil}, fast},
		{"most turns/s", []*LoadResult{fast, faster}, faster},
		{"a tie goes to the least CPU", []*LoadResult{faster, fasterCheaper}, fasterCheaper},
		{"a tie on both keeps the first", []*LoadResult{faster, result(DaemonSilas, 9, 1100, 1.2, 1, 5, 1)}, faster},
		{"a clean run beats a faster one with a duplicate answer", []*LoadResult{fastestBroken, fast}, fast},
		{"a clean run beats a faster cut one", []*LoadResult{cut, fast}, fast},
		{"among broken runs, the fastest", []*LoadResult{cut, fastestBroken}, cut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Best(tc.runs); got != tc.want {
				t.Errorf("Best = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestKeepAndCompare(t *testing.T) {
	r := &Report{}
	s1, b1 := result(DaemonSilas, 1, 900, 1, 2, 9, 60), result(DaemonBaseline, 1, 1000, 0.2, 1, 4, 20)
	s2, b2 := result(DaemonSilas, 2, 950, 1, 2, 9, 60), result(DaemonBaseline, 2, 900, 0.2, 1, 4, 20)
	r.keep([]Daemon{DaemonSilas, DaemonBaseline}, []*LoadResult{s1, b1, s2, b2})
	if len(r.Loads) != 1 || r.Loads[0] != s2 || len(r.BaselineLoads) != 1 || r.BaselineLoads[0] != b1 {
		t.Fatalf("kept silas %v, baseline %v; want silas run 2 and baseline run 1", r.Loads, r.BaselineLoads)
	}
	var order []string
	for _, s := range r.Runs {
		order = append(order, string(s.Daemon)+map[bool]string{true: "*", false: ""}[s.Kept])
	}
	if got := strings.Join(order, " "); got != "silas baseline* silas* baseline" {
		t.Errorf("runs %q: want them in the order they ran, the kept ones marked", got)
	}

	// A baseline run of another scenario is not compared with silas's.
	other := result(DaemonBaseline, 1, 10, 1, 1, 1, 1)
	other.Name, other.Customers = "n10", 10
	r.BaselineLoads = append([]*LoadResult{other}, r.BaselineLoads...)
	cs := r.compare()
	if len(cs) != 1 || cs[0].Baseline.TurnsPerSecond != 1000 || cs[0].TurnsPerSecondRatio != 0.95 {
		t.Errorf("comparisons %+v: want n50 silas against n50 baseline only", cs)
	}
}

func TestRatioTargetsNeedTheBaseline(t *testing.T) {
	r := &Report{Loads: []*LoadResult{result(DaemonSilas, 0, 950, 1, 1, 5, 70_000_000)}}
	for _, tr := range EvaluateTargets(r) {
		if strings.Contains(tr.Name, "vs baseline") {
			t.Errorf("target %q without a baseline run", tr.Name)
		}
	}
	r.BaselineLoads = []*LoadResult{result(DaemonBaseline, 0, 1000, 0.2, 0.5, 1, 20_000_000)}
	got := map[string]TargetResult{}
	for _, tr := range EvaluateTargets(r) {
		got[tr.Name] = tr
	}
	// 95% < 98%; +0.5 ms <= +1; +4 ms <= +5; 70 MB <= 80 MB.
	for name, met := range map[string]bool{
		"N=50: throughput vs baseline": false, "N=50: overhead p50 vs baseline": true,
		"N=50: overhead p99 vs baseline": true, "N=50: peak RSS": true,
	} {
		tr, ok := got[name]
		if !ok || tr.Met != met {
			t.Errorf("target %q = %+v (present %v), want met=%v", name, tr, ok, met)
		}
	}
	if m := got["N=50: throughput vs baseline"].Measured; m != "95% (950 / 1000 turns/s)" {
		t.Errorf("measured %q", m)
	}
}
