package load

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// sampleReport is a report with fixed numbers, each load run twice against
// silas and the baseline: N=50 meets its targets; N=1000 misses throughput,
// CPU per turn and peak RSS and has a duplicate; idle misses its RSS goal.
func sampleReport() *Report {
	load := func(d Daemon, run, n, m int, tps, cpu, ovP50, ovP99 float64, rss int64) *LoadResult {
		return &LoadResult{
			Name: "n" + itoa(n), Daemon: d, Run: run, Customers: n, MessagesEach: m, DelayMS: 50, Planned: n * m, Completed: n * m,
			Failed: map[string]int{}, WallSeconds: 10, TurnsPerSecond: tps,
			Latency:  Percentiles{Count: n * m, Mean: 51, P50: 50 + ovP50, P95: 55, P99: 50 + ovP99, Max: 80},
			Overhead: Percentiles{Count: n * m, Mean: 1, P50: ovP50, P95: 5, P99: ovP99, Max: 30},
			Server: ServerUsage{Usage: Usage{CPUSeconds: 8, Cores: 0.8}, CPUMSPerTurn: cpu,
				PeakRSSBytes: rss, Threads: 9, StartToReadyMS: 70},
			Mock:   MockUsage{Usage: Usage{CPUSeconds: 2, Cores: 0.2}, MockStats: MockStats{Requests: n * m, MaxInFlight: n}, CallsPerTurn: 1},
			Driver: Usage{CPUSeconds: 1, Cores: 0.1},
		}
	}
	unclean := func(l *LoadResult, failed map[string]int, dups int) *LoadResult {
		l.Completed -= failed["error:busy"]
		l.Failed, l.Integrity = failed, Integrity{Duplicates: dups}
		return l
	}
	r := &Report{
		Started:         time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		DurationSeconds: 120,
		Machine:         Machine{Cores: 2, CPU: "Test CPU", MemoryBytes: 24 << 30, Kernel: "6.1.0", OS: "linux", Arch: "amd64", LoadAvg: "0.10 0.20 0.30"},
		Build:           Build{Commit: "abc1234", GoVersion: "go1.26.8"},
		Command:         "bench -matrix",
		RaisedLimits:    RaisedLimits[:1],
		Config:          "silas:\n  log:\n    level: \"warn\"\n",
		Startup: &StartupResult{Runs: 5, Cold: Percentiles{P50: 81, Max: 90}, Warm: Percentiles{P50: 64, Max: 66},
			ColdCPUMS: 70, WarmCPUMS: 60, ReadyRSSBytes: 24_700_000, IdleRSSBytes: 24_900_000},
		Idle: &IdleResult{Customers: 10000, Connected: 10000, ConnectSeconds: 3, RSSBeforeBytes: 24_300_000,
			RSSAfterBytes: 366_000_000, RSSPerCustomerBytes: 34_170, Threads: 9, ProbeMS: 60.6},
		Notes: []string{"a note"},
	}
	both := []Daemon{DaemonSilas, DaemonBaseline}
	r.keep(both, []*LoadResult{
		load(DaemonSilas, 1, 50, 200, 900, 1.0, 1.7, 9, 62_000_000),
		load(DaemonBaseline, 1, 50, 200, 955, 0.21, 1.1, 4.5, 21_000_000),
		load(DaemonSilas, 2, 50, 200, 950, 0.9, 1.5, 8, 60_000_000),
		load(DaemonBaseline, 2, 50, 200, 960, 0.2, 1.0, 4, 20_000_000),
	})
	r.keep(both, []*LoadResult{
		unclean(load(DaemonSilas, 1, 1000, 20, 2500, 0.9, 150, 900, 300_000_000), map[string]int{"error:busy": 1}, 1),
		load(DaemonBaseline, 1, 1000, 20, 5000, 0.3, 100, 400, 150_000_000),
		unclean(load(DaemonSilas, 2, 1000, 20, 2300, 0.95, 160, 950, 310_000_000), map[string]int{"error:busy": 3}, 0),
		load(DaemonBaseline, 2, 1000, 20, 4000, 0.35, 120, 450, 155_000_000),
	})
	r.Comparisons = r.compare()
	return r
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestEvaluateTargets(t *testing.T) {
	r := sampleReport()
	got := map[string]bool{}
	for _, tr := range EvaluateTargets(r) {
		got[tr.Name] = tr.Met
	}
	want := map[string]bool{
		"N=50: throughput vs baseline": true, "N=50: overhead p50 vs baseline": true, "N=50: overhead p99 vs baseline": true,
		"N=50: peak RSS": true, "N=1000: CPU per turn vs baseline": false, "N=1000: throughput vs baseline": false,
		"N=1000 × 20: peak RSS": false, "N=50: throughput": true, "N=50: overhead p50": true, "N=50: overhead p99": true, "N=50: errors": true,
		"N=1000: throughput": false, "N=1000: errors, every turn answered exactly once": false,
		"10000 idle customers: RSS each": false, "idle RSS": true,
		"start to ready (warm restart, p50)": true, "start to ready (first start, p50)": true,
	}
	for name, met := range want {
		if g, ok := got[name]; !ok || g != met {
			t.Errorf("target %q: met=%v (present %v), want %v", name, g, ok, met)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d targets, want %d: %v", len(got), len(want), got)
	}
}

func TestTargetsOnlyForScenariosRun(t *testing.T) {
	r := &Report{Loads: []*LoadResult{{Customers: 50, DelayMS: 100, Failed: map[string]int{}}}}
	if ts := EvaluateTargets(r); len(ts) != 0 {
		t.Errorf("targets for a 100 ms model: %+v; the goals are stated for 50 ms", ts)
	}
}

func TestTargetNeedsEveryTurn(t *testing.T) {
	// No failure recorded, but turns were never sent: not "zero errors".
	l := &LoadResult{Customers: 50, DelayMS: 50, Planned: 100, Completed: 90, Failed: map[string]int{},
		Overhead: Percentiles{Count: 90}}
	for _, tr := range EvaluateTargets(&Report{Loads: []*LoadResult{l}}) {
		if tr.Name == "N=50: errors" {
			if tr.Met || !strings.Contains(tr.Measured, "10 never sent") {
				t.Errorf("errors target %+v, want missed with 10 never sent", tr)
			}
			return
		}
	}
	t.Fatal("no errors target")
}

func TestMarkdownGolden(t *testing.T) {
	r := sampleReport()
	r.Targets = EvaluateTargets(r)
	golden(t, "report.golden.md", r.Markdown())
}

func TestJSONRoundTrip(t *testing.T) {
	r := sampleReport()
	r.Targets = EvaluateTargets(r)
	b, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Loads[1].Integrity.Duplicates != 1 || back.Idle.RSSPerCustomerBytes != 34_170 || len(back.Targets) != 17 ||
		len(back.BaselineLoads) != 2 || len(back.Comparisons) != 2 || len(back.Runs) != 8 || back.Comparisons[1].CPUPerTurnRatio != 3 {
		t.Errorf("round trip lost data: %+v", back)
	}
	for _, key := range []string{`"turns_per_second"`, `"turns_per_second_ratio"`, `"cpu_per_turn_ratio"`, `"overhead_p99_delta_ms"`, `"peak_rss_ratio"`, `"daemon": "baseline"`, `"kept": true`, `"overhead"`, `"p99_ms"`, `"cpu_ms_per_turn"`, `"peak_rss_bytes"`, `"raised_limits"`, `"commit"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestFinishNotesProfiles(t *testing.T) {
	r := &Report{Started: time.Now(), Loads: []*LoadResult{{Name: "n50", Failed: map[string]int{},
		Server: ServerUsage{Profiles: []string{"/tmp/cpu-n50.pprof", "/tmp/mem-n50.pprof"}, MissingProfiles: []string{"/tmp/mem-n50.pprof"}}}}}
	r.Finish()
	if len(r.Notes) != 2 || !strings.Contains(r.Notes[0], "go tool pprof /tmp/cpu-n50.pprof") ||
		!strings.Contains(r.Notes[1], "no profile to /tmp/mem-n50.pprof") {
		t.Errorf("notes %q, want where the CPU profile is and that the heap profile is missing", r.Notes)
	}
}

func TestFailedText(t *testing.T) {
	if got := failedText(map[string]int{}); got != "0" {
		t.Errorf("failedText(none) = %q", got)
	}
	if got := failedText(map[string]int{"timeout": 2, "error:busy": 1, "zero": 0}); got != "1 error:busy, 2 timeout" {
		t.Errorf("failedText = %q", got)
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}
