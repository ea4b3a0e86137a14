package load

import (
	"fmt"
	"math"
	"time"
)

// SoakResult is what a [Soak] scenario measured.
type SoakResult struct {
	Customers       int     `json:"customers"`
	DurationSeconds float64 `json:"duration_seconds"`
	DelayMS         float64 `json:"model_delay_ms"`
	// Rate is the turns/s the soak drove; RateSource says where it came
	// from: "flag" (-soak-rate) or "probe" (half of ProbeTurnsPerSecond,
	// what the same customers reached without pause for ProbeSeconds on a
	// fresh daemon).
	Rate                float64 `json:"rate_turns_per_second"`
	RateSource          string  `json:"rate_source"`
	ProbeTurnsPerSecond float64 `json:"probe_turns_per_second,omitempty"`
	ProbeSeconds        float64 `json:"probe_seconds,omitempty"`
	// MemorySoftLimitMB is silas's process.memory_soft_limit_mb for the
	// run; 0: the default (none).
	MemorySoftLimitMB int `json:"memory_soft_limit_mb"`

	Completed int64          `json:"turns_completed"`
	Failed    map[string]int `json:"failed"`
	// Missed counts turns the pacer could not hand out because every
	// customer was still waiting for an answer: the daemon fell behind.
	Missed         int64   `json:"turns_missed"`
	TurnsPerSecond float64 `json:"turns_per_second"`
	StartToReadyMS float64 `json:"start_to_ready_ms"`
	LogLines       int     `json:"log_lines"`
	// ScrapeError is the first failure to read /metrics, if any.
	ScrapeError string `json:"scrape_error,omitempty"`

	Samples []SoakSample `json:"samples"`
	Verdict SoakVerdict  `json:"verdict"`
}

// SoakSample is the daemon's state at the end of one sample interval, and
// the turns of that interval.
type SoakSample struct {
	AtSeconds       float64 `json:"at_seconds"`
	IntervalSeconds float64 `json:"interval_seconds"`
	RSSBytes        int64   `json:"rss_bytes"`
	// RSSAnonBytes and RSSFileBytes split RSS into the process's own memory
	// and resident pages of mapped files (Badger's tables): growth of the
	// second follows the database, not a leak.
	RSSAnonBytes int64 `json:"rss_anon_bytes"`
	RSSFileBytes int64 `json:"rss_file_bytes"`
	// HeapBytes is the lowest go_memstats_heap_alloc_bytes of the reads;
	// HeapGoalBytes the GC's next goal (about twice the live heap).
	HeapBytes     int64 `json:"heap_bytes"`
	HeapGoalBytes int64 `json:"heap_goal_bytes"`
	Threads       int   `json:"threads"`
	// Goroutines is the lowest of a few reads of go_goroutines a moment
	// apart, GoroutinesMax the highest: turns in flight add goroutines
	// that come and go, a leak raises the floor. -1: /metrics unreadable.
	Goroutines    int `json:"goroutines"`
	GoroutinesMax int `json:"goroutines_max"`
	OpenFDs       int `json:"open_fds"`
	// BadgerBytes is the disk the database directory holds (du);
	// BadgerApparentBytes the sum of its file sizes.
	BadgerBytes         int64   `json:"badger_bytes"`
	BadgerApparentBytes int64   `json:"badger_apparent_bytes"`
	Turns               int64   `json:"turns"`
	TurnsPerSecond      float64 `json:"turns_per_second"`
	Failed              int     `json:"failed"`
	Missed              int64   `json:"missed"`
	CPUMSPerTurn        float64 `json:"cpu_ms_per_turn"`
	ServerCores         float64 `json:"server_cores_busy"`
	LatencyP50MS        float64 `json:"latency_p50_ms"`
	LatencyP99MS        float64 `json:"latency_p99_ms"`
}

// SoakVerdict judges the samples taken after the warm-up.
type SoakVerdict struct {
	// Rule states how flatness is judged, in words.
	Rule          string  `json:"rule"`
	WarmupSeconds float64 `json:"warmup_seconds"`
	// Samples is the number of samples after the warm-up; Enough says
	// there were at least two.
	Samples int  `json:"samples"`
	Enough  bool `json:"enough_samples"`
	// RSSAnon is the process's own resident memory (heap, stacks, Badger's
	// memtables): a leak shows here, and it decides Flat with Goroutines.
	RSSAnon    Spread `json:"rss_anon"`
	Goroutines Spread `json:"goroutines"`
	// MappedOverStore is the most the resident pages of mapped files
	// exceeded the database's apparent size in any sample (negative: they
	// never reached it). Badger writes and reads its tables through
	// mmap, so their pages count in RSS and grow with the database, not
	// with a leak; MappedBounded says they stayed within the database
	// plus mappedSlack (the binary's own pages), which decides Flat too.
	MappedOverStore int64 `json:"mapped_over_store_bytes"`
	MappedBounded   bool  `json:"mapped_bounded"`
	// RSS (the sum of both), HeapGoal and OpenFDs are shown the same way;
	// they do not decide Flat.
	RSS      Spread `json:"rss"`
	HeapGoal Spread `json:"heap_goal"`
	OpenFDs  Spread `json:"open_fds"`
	// TurnsFirst and TurnsLast are the mean turns/s of the first and last
	// few samples after the warm-up (three each, fewer with fewer than six
	// samples); TurnsRatio is last over first. P99First and P99Last are the
	// same for the latency p99.
	TurnsFirst float64 `json:"turns_per_second_first"`
	TurnsLast  float64 `json:"turns_per_second_last"`
	TurnsRatio float64 `json:"turns_ratio"`
	P99First   float64 `json:"latency_p99_first_ms"`
	P99Last    float64 `json:"latency_p99_last_ms"`
	// Flat is true when there were enough samples, anonymous RSS and
	// goroutines were both flat, and mapped pages stayed bounded by the
	// database.
	Flat bool `json:"flat"`
}

// Spread is the range of one figure over the samples after the warm-up.
type Spread struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Spread is (Max - Min) / Min.
	Spread float64 `json:"spread"`
	Flat   bool    `json:"flat"`
}

// mappedSlack is how far the resident pages of mapped files may exceed
// the database's apparent size: the static binary's text and data, about
// 40 MB, are mapped file pages too.
const mappedSlack = 64 << 20

// SoakTolerance is how far (max - min) / min of a figure may reach after
// the warm-up for it to count as flat.
const SoakTolerance = 0.10

// Warm-up of a soak: the first tenth of the run, at most maxSoakWarmup.
const (
	soakWarmupShare = 0.10
	maxSoakWarmup   = 5 * time.Minute
)

// soakTurnsHeld is the share of the first samples' turns/s the last ones
// must keep.
const soakTurnsHeld = 0.90

// SoakWarmup is the default warm-up of a soak of duration d: the first
// 10% of it, at most 5 minutes.
func SoakWarmup(d time.Duration) time.Duration {
	return min(time.Duration(float64(d)*soakWarmupShare), maxSoakWarmup)
}

// judgeSoak applies the flatness rule to the samples taken after warmup.
func judgeSoak(samples []SoakSample, warmup time.Duration, tolerance float64) SoakVerdict {
	v := SoakVerdict{WarmupSeconds: seconds(warmup), Rule: fmt.Sprintf(
		"samples taken after the warm-up (the first %s) only; anonymous RSS (RssAnon: the process's own memory) and goroutines (the lowest of a few reads per sample) are flat when "+
			"(max - min) / min <= %.0f%% over those samples, and the resident pages of mapped files (RssFile: Badger's tables, read and written through mmap) must stay within the database's apparent size plus %s; "+
			"total RSS, the GC's heap goal and open files are shown the same way; turns/s compares the mean of the last samples with the first",
		warmup, tolerance*100, mb(mappedSlack))}
	var post []SoakSample
	for _, s := range samples {
		if s.AtSeconds > warmup.Seconds() {
			post = append(post, s)
		}
	}
	v.Samples = len(post)
	v.Enough = len(post) >= 2
	var rss, gor, anon, goal, fds []float64
	v.MappedOverStore, v.MappedBounded = math.MinInt64, len(post) > 0
	for _, s := range post {
		over := s.RSSFileBytes - s.BadgerApparentBytes
		v.MappedOverStore = max(v.MappedOverStore, over)
		v.MappedBounded = v.MappedBounded && over <= mappedSlack
		rss = append(rss, float64(s.RSSBytes))
		if s.Goroutines >= 0 {
			gor = append(gor, float64(s.Goroutines))
			goal = append(goal, float64(s.HeapGoalBytes))
		}
		anon = append(anon, float64(s.RSSAnonBytes))
		fds = append(fds, float64(s.OpenFDs))
	}
	v.RSS, v.Goroutines, v.OpenFDs = spread(rss, tolerance), spread(gor, tolerance), spread(fds, tolerance)
	v.RSSAnon, v.HeapGoal = spread(anon, tolerance), spread(goal, tolerance)
	if len(post) > 0 {
		k := max(1, min(3, len(post)/2))
		first, last := post[:k], post[len(post)-k:]
		v.TurnsFirst, v.TurnsLast = meanOf(first, turnsOf), meanOf(last, turnsOf)
		v.P99First, v.P99Last = meanOf(first, p99Of), meanOf(last, p99Of)
		if v.TurnsFirst > 0 {
			v.TurnsRatio = round2(v.TurnsLast / v.TurnsFirst)
		}
	}
	if len(post) == 0 {
		v.MappedOverStore = 0
	}
	v.Flat = v.Enough && v.RSSAnon.Flat && v.Goroutines.Flat && v.MappedBounded && len(gor) >= 2
	return v
}

// spread computes the range of xs; an empty set or a zero minimum is not
// flat.
func spread(xs []float64, tolerance float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := Spread{Min: xs[0], Max: xs[0]}
	for _, x := range xs[1:] {
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	if s.Min <= 0 {
		return s
	}
	s.Spread = round4((s.Max - s.Min) / s.Min)
	s.Flat = s.Spread <= tolerance
	return s
}

func turnsOf(s SoakSample) float64 { return s.TurnsPerSecond }
func p99Of(s SoakSample) float64   { return s.LatencyP99MS }

func meanOf(ss []SoakSample, f func(SoakSample) float64) float64 {
	if len(ss) == 0 {
		return 0
	}
	var sum float64
	for _, s := range ss {
		sum += f(s)
	}
	return round2(sum / float64(len(ss)))
}

func round4(f float64) float64 { return float64(int64(f*10000+0.5)) / 10000 }

// soakTargets are the soak's goals (the acceptance of the robustness
// issue): the process's memory and goroutines flat within 10% after the
// warm-up, mapped table pages bounded by the database, and the turn rate
// held.
func soakTargets(s *SoakResult) []TargetResult {
	if s == nil {
		return nil
	}
	v := s.Verdict
	name := fmt.Sprintf("soak %s at %.0f turns/s", time.Duration(s.DurationSeconds*float64(time.Second)).Round(time.Second), s.Rate)
	flat := func(what string, sp Spread, unit func(float64) string) TargetResult {
		return TargetResult{Name: name + ": " + what + " flat after warm-up", Goal: fmt.Sprintf("(max - min) / min ≤ %.0f%%", SoakTolerance*100),
			Measured: fmt.Sprintf("%.1f%% (%s to %s, %d samples)", sp.Spread*100, unit(sp.Min), unit(sp.Max), v.Samples),
			Met:      v.Enough && sp.Flat}
	}
	count := func(f float64) string { return fmt.Sprintf("%.0f", f) }
	return []TargetResult{
		flat("process memory (anonymous RSS)", v.RSSAnon, func(f float64) string { return mb(int64(f)) }),
		{Name: name + ": mapped table pages within the database", Goal: fmt.Sprintf("RssFile ≤ database + %s in every sample", mb(mappedSlack)),
			Measured: fmt.Sprintf("at most %s over the database (total RSS %s to %s)", signedMB(v.MappedOverStore), mb(int64(v.RSS.Min)), mb(int64(v.RSS.Max))),
			Met:      v.Enough && v.MappedBounded},
		flat("goroutines", v.Goroutines, count),
		{Name: name + ": turns/s held", Goal: fmt.Sprintf("last ≥ %.0f%% of first", soakTurnsHeld*100),
			Measured: fmt.Sprintf("%.1f → %.1f turns/s", v.TurnsFirst, v.TurnsLast),
			Met:      v.Enough && v.TurnsRatio >= soakTurnsHeld},
	}
}

// signedMB is mb for a difference that may be negative.
func signedMB(b int64) string {
	if b < 0 {
		return "-" + mb(-b)
	}
	return mb(b)
}
