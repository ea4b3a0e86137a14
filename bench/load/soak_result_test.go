package load

import (
	"strings"
	"testing"
	"time"
)

// samples makes one sample a minute with the given anonymous RSS (MB) and
// goroutines, at 100 turns/s, with 50 MB of mapped pages of a 100 MB
// database on top.
func samples(rssMB []float64, gor []int) []SoakSample {
	ss := make([]SoakSample, len(rssMB))
	for i := range ss {
		anon := int64(rssMB[i] * 1e6)
		ss[i] = SoakSample{AtSeconds: float64(60 * (i + 1)), IntervalSeconds: 60, RSSBytes: anon + 50e6, RSSAnonBytes: anon, RSSFileBytes: 50e6,
			BadgerApparentBytes: 100e6, Goroutines: gor[i], OpenFDs: 40, TurnsPerSecond: 100, LatencyP99MS: 60}
	}
	return ss
}

// growingStore makes the samples' database and mapped pages grow by step
// MB a minute, the mapped pages over by above MB.
func growingStore(ss []SoakSample, step, above float64) []SoakSample {
	for i := range ss {
		store := int64(float64(i+1) * step * 1e6)
		ss[i].BadgerApparentBytes, ss[i].RSSFileBytes = store, store+int64(above*1e6)
		ss[i].RSSBytes = ss[i].RSSAnonBytes + ss[i].RSSFileBytes
	}
	return ss
}

func TestJudgeSoak(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []SoakSample
		warmup  time.Duration
		flat    bool
		check   func(t *testing.T, v SoakVerdict)
	}{
		{
			name:    "growth during the warm-up only is flat",
			samples: samples([]float64{40, 80, 95, 96, 99, 100}, []int{50, 120, 121, 119, 124, 125}),
			warmup:  2 * time.Minute, flat: true,
			check: func(t *testing.T, v SoakVerdict) {
				if v.Samples != 4 || v.RSSAnon.Min != 95e6 || v.RSSAnon.Max != 100e6 || v.RSSAnon.Spread != 0.0526 || v.Goroutines.Spread != 0.0504 {
					t.Errorf("verdict %+v", v)
				}
			},
		},
		{
			name:    "process memory that keeps growing is not flat",
			samples: samples([]float64{80, 85, 90, 95, 100, 105}, []int{100, 100, 100, 100, 100, 100}),
			warmup:  time.Minute,
			check: func(t *testing.T, v SoakVerdict) {
				if v.RSSAnon.Flat || !v.Goroutines.Flat || v.RSSAnon.Spread != 0.2353 {
					t.Errorf("verdict %+v", v)
				}
			},
		},
		{
			name:    "goroutines that leak are not flat",
			samples: samples([]float64{90, 90, 90, 90}, []int{100, 110, 120, 130}),
			warmup:  0,
			check: func(t *testing.T, v SoakVerdict) {
				if v.Goroutines.Flat || v.Goroutines.Spread != 0.3 || !v.RSSAnon.Flat {
					t.Errorf("verdict %+v", v)
				}
			},
		},
		{
			name:    "mapped pages that grow with the database are flat",
			samples: growingStore(samples([]float64{90, 90, 91, 90, 92}, []int{100, 100, 100, 100, 100}), 70, 30),
			warmup:  time.Minute, flat: true,
			check: func(t *testing.T, v SoakVerdict) {
				if !v.MappedBounded || v.MappedOverStore != 30e6 || v.RSS.Flat {
					t.Errorf("verdict %+v: want the mapped pages bounded while total RSS grows", v)
				}
			},
		},
		{
			name:    "mapped pages beyond the database are not flat",
			samples: growingStore(samples([]float64{90, 90, 90, 90}, []int{100, 100, 100, 100}), 10, 100),
			check: func(t *testing.T, v SoakVerdict) {
				if v.MappedBounded || v.MappedOverStore != 100e6 || !v.RSSAnon.Flat {
					t.Errorf("verdict %+v: want the 100 MB over the database caught", v)
				}
			},
		},
		{
			name:    "exactly 10% is flat",
			samples: samples([]float64{100, 110}, []int{100, 110}),
			flat:    true,
		},
		{
			name:    "one sample after the warm-up is not enough",
			samples: samples([]float64{50, 100}, []int{10, 10}),
			warmup:  time.Minute,
			check: func(t *testing.T, v SoakVerdict) {
				if v.Enough || v.Samples != 1 {
					t.Errorf("verdict %+v", v)
				}
			},
		},
		{
			name: "unreadable goroutines are left out, and too few make it not flat",
			samples: func() []SoakSample {
				ss := samples([]float64{90, 90, 90}, []int{100, -1, -1})
				return ss
			}(),
			check: func(t *testing.T, v SoakVerdict) {
				if v.Goroutines.Min != 100 || v.Goroutines.Max != 100 {
					t.Errorf("goroutines %+v: want the one readable sample", v.Goroutines)
				}
			},
		},
		{
			name: "turns/s and p99, first samples against the last",
			samples: func() []SoakSample {
				ss := samples([]float64{90, 90, 90, 90, 90, 90, 90}, []int{100, 100, 100, 100, 100, 100, 100})
				for i, tps := range []float64{10, 100, 100, 100, 90, 80, 70} {
					ss[i].TurnsPerSecond, ss[i].LatencyP99MS = tps, 1000/tps
				}
				return ss
			}(),
			warmup: time.Minute, flat: true,
			check: func(t *testing.T, v SoakVerdict) {
				if v.TurnsFirst != 100 || v.TurnsLast != 80 || v.TurnsRatio != 0.8 || v.P99First != 10 || v.P99Last != 12.63 {
					t.Errorf("verdict %+v", v)
				}
				if !strings.Contains(v.Rule, "10%") || !strings.Contains(v.Rule, "1m0s") {
					t.Errorf("rule %q: want the tolerance and the warm-up stated", v.Rule)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judgeSoak(tc.samples, tc.warmup, SoakTolerance)
			if v.Flat != tc.flat {
				t.Errorf("flat = %v, want %v (%+v)", v.Flat, tc.flat, v)
			}
			if tc.check != nil {
				tc.check(t, v)
			}
		})
	}
}

func TestSoakWarmup(t *testing.T) {
	for _, tc := range []struct{ d, want time.Duration }{
		{5 * time.Minute, 30 * time.Second},
		{30 * time.Minute, 3 * time.Minute},
		{60 * time.Minute, 5 * time.Minute},
		{10 * time.Hour, 5 * time.Minute},
	} {
		if got := SoakWarmup(tc.d); got != tc.want {
			t.Errorf("SoakWarmup(%v) = %v, want %v", tc.d, got, tc.want)
		}
	}
}

func TestSoakTargetsAndFailures(t *testing.T) {
	flat := &SoakResult{DurationSeconds: 3600, Rate: 200, Verdict: judgeSoak(samples([]float64{90, 91, 92}, []int{100, 101, 100}), 0, SoakTolerance)}
	for _, tg := range soakTargets(flat) {
		if !tg.Met {
			t.Errorf("target %+v not met", tg)
		}
	}
	if fs := flat.Failures(); len(fs) != 0 {
		t.Errorf("failures %q", fs)
	}
	leak := &SoakResult{DurationSeconds: 3600, Rate: 200, Verdict: judgeSoak(samples([]float64{90, 120, 150}, []int{100, 150, 200}), 0, SoakTolerance)}
	fs := leak.Failures()
	if len(fs) != 2 || !strings.Contains(fs[0], "anonymous RSS") || !strings.Contains(fs[1], "goroutines") {
		t.Errorf("failures %q", fs)
	}
	if ts := soakTargets(leak); ts[0].Met || !ts[1].Met || ts[2].Met || !ts[3].Met || !strings.HasPrefix(ts[0].Name, "soak 1h0m0s at 200 turns/s") {
		t.Errorf("targets %+v", ts)
	}
	short := &SoakResult{Verdict: judgeSoak(samples([]float64{90}, []int{100}), 0, SoakTolerance)}
	if fs := short.Failures(); len(fs) != 1 || !strings.Contains(fs[0], "run longer") {
		t.Errorf("failures %q", fs)
	}
}

func TestParseGauge(t *testing.T) {
	exp := []byte("# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 123\n" +
		"go_goroutines_total{x=\"1\"} 5\nsilas_turns_total{kind=\"a\"} 7\nprocess_open_fds 41\n")
	for _, tc := range []struct {
		name string
		want float64
		ok   bool
	}{
		{"go_goroutines", 123, true},
		{"process_open_fds", 41, true},
		{"silas_turns_total", 0, false}, // only labelled samples
		{"missing", 0, false},
	} {
		got, err := parseGauge(exp, tc.name)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseGauge(%s) = %v, %v; want %v, ok %v", tc.name, got, err, tc.want, tc.ok)
		}
	}
	if _, err := parseGauge([]byte("go_goroutines many\n"), "go_goroutines"); err == nil {
		t.Error("a non-numeric value parsed")
	}
}
