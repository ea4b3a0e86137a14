package load

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Soak is a scenario that drives silas at a fixed turn rate for a long
// time and samples what it holds (RSS, goroutines, open files, the
// database's size) at a fixed interval: flat figures after a warm-up mean
// no leak.
type Soak struct {
	Customers int
	Duration  time.Duration
	// Rate is the turns/s to drive; zero means half of what the same
	// customers reach without pause during a probe of Probe on a fresh
	// daemon.
	Rate float64
	// Probe is the length of the capacity probe; zero means 15 s.
	Probe time.Duration
	// Sample is the sampling interval; zero means a minute.
	Sample time.Duration
	// Warmup is left out of the verdict; zero means [SoakWarmup].
	Warmup time.Duration
	// Delay is the mock model's answer delay.
	Delay time.Duration
	// TurnTimeout is how long a customer waits for one answer; zero
	// means 30 s.
	TurnTimeout time.Duration
	// MemorySoftLimitMB, when above zero, is silas's
	// process.memory_soft_limit_mb for the run.
	MemorySoftLimitMB int
}

func (s Soak) withDefaults() Soak {
	if s.Probe <= 0 {
		s.Probe = 15 * time.Second
	}
	if s.Sample <= 0 {
		s.Sample = time.Minute
	}
	s.Sample = min(s.Sample, s.Duration)
	if s.Warmup <= 0 {
		s.Warmup = SoakWarmup(s.Duration)
	}
	if s.TurnTimeout <= 0 {
		s.TurnTimeout = 30 * time.Second
	}
	return s
}

func (s Soak) validate() error {
	switch {
	case s.Customers < 1:
		return fmt.Errorf("soak scenario: want at least one customer, got %d", s.Customers)
	case s.Duration <= 0:
		return fmt.Errorf("soak scenario: want a duration above zero, e.g. 60m")
	case s.Rate < 0 || s.Delay < 0 || s.MemorySoftLimitMB < 0:
		return fmt.Errorf("soak scenario: the rate, the model delay and the memory limit must not be negative")
	}
	return nil
}

// goroutineReads is how many times each sample reads go_goroutines, a
// moment apart; the lowest read is kept.
const (
	goroutineReads = 5
	goroutineGap   = 100 * time.Millisecond
)

// RunSoak probes the capacity unless s.Rate is set, then drives the rate
// for s.Duration against fresh silas and mock processes, sampling every
// s.Sample.
func (o Options) RunSoak(ctx context.Context, s Soak) (*SoakResult, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	s = s.withDefaults()
	if err := EnsureFiles(s.Customers); err != nil {
		return nil, err
	}
	res := &SoakResult{Customers: s.Customers, DelayMS: ms(s.Delay), Rate: s.Rate, RateSource: "flag", Failed: map[string]int{},
		MemorySoftLimitMB: s.MemorySoftLimitMB}
	if res.Rate == 0 {
		if err := o.probeCapacity(ctx, s, res); err != nil {
			return res, err
		}
	}
	token, err := randomToken()
	if err != nil {
		return res, err
	}
	env := []string{"SILAS_CHANNELS__WEB__METRICS_TOKEN=" + token}
	if s.MemorySoftLimitMB > 0 {
		env = append(env, "SILAS_PROCESS__MEMORY_SOFT_LIMIT_MB="+strconv.Itoa(s.MemorySoftLimitMB))
	}
	srv, err := o.startServerEnv(DaemonSilas, "soak", s.Delay, env)
	if err != nil {
		return res, fmt.Errorf("soak scenario: %w", err)
	}
	res.StartToReadyMS = ms(srv.startToReady)
	if err := o.soak(ctx, srv, s, newMetricsClient(token), res); err != nil {
		srv.abort()
		return res, fmt.Errorf("soak scenario: %w", err)
	}
	st, err := srv.stop()
	res.LogLines = st.warnings
	if err != nil {
		return res, fmt.Errorf("soak scenario: %w", err)
	}
	return res, nil
}

// probeCapacity runs the customers without pause on a fresh daemon for
// s.Probe and sets the rate to half of the turns/s they reached.
func (o Options) probeCapacity(ctx context.Context, s Soak, res *SoakResult) error {
	o.note("soak: probing capacity with %d customers for %s", s.Customers, s.Probe)
	perCustomer := int(s.Probe/max(s.Delay, 5*time.Millisecond)) + 1
	pr, err := o.RunLoad(ctx, Load{Name: "soak-probe", Customers: s.Customers, Messages: perCustomer,
		Delay: s.Delay, TurnTimeout: s.TurnTimeout, DurationLimit: s.Probe})
	if err != nil {
		return fmt.Errorf("soak scenario, capacity probe: %w", err)
	}
	if pr.TurnsPerSecond <= 0 {
		return fmt.Errorf("soak scenario, capacity probe: no turn completed (failed %v); set -soak-rate", pr.Failed)
	}
	res.ProbeTurnsPerSecond, res.ProbeSeconds = pr.TurnsPerSecond, pr.WallSeconds
	res.Rate, res.RateSource = round2(pr.TurnsPerSecond/2), "probe"
	o.note("soak: capacity %.0f turns/s; driving half of it, %.1f turns/s", pr.TurnsPerSecond, res.Rate)
	return nil
}

// soak connects the customers, drives the rate for s.Duration and samples.
func (o Options) soak(ctx context.Context, srv *server, s Soak, mc *metricsClient, res *SoakResult) error {
	var cn counters
	customers, failed, connErr := connectAll(ctx, srv.addr, s.Customers, loadBufSize, &cn)
	defer closeAll(customers)
	if failed > 0 {
		return fmt.Errorf("%d of %d customers could not connect: %w", failed, s.Customers, connErr)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newSoakStats()
	tokens := make(chan struct{}, s.Customers)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	var wg sync.WaitGroup
	for i, c := range customers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runSoakCustomer(runCtx, c, i, run, tokens, s.TurnTimeout, st)
		}()
	}
	start := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		pace(runCtx, res.Rate, tokens, st)
	}()
	o.note("soak: %d customers at %.1f turns/s for %s, a sample every %s (warm-up %s)", s.Customers, res.Rate, s.Duration, s.Sample, s.Warmup)

	sm := &sampler{srv: srv, mc: mc, dbDir: filepath.Join(srv.dir, "data", "db"), st: st}
	if err := sm.begin(); err != nil {
		return err
	}
	var runErr error
	for at := s.Sample; ; at += s.Sample {
		at = min(at, s.Duration)
		if err := wait(ctx, time.Until(start.Add(at))); err != nil {
			runErr = err
			break
		}
		smp, err := sm.take(ctx, time.Since(start))
		if err != nil {
			runErr = err
			break
		}
		if smp.scrapeErr != nil && res.ScrapeError == "" {
			res.ScrapeError = smp.scrapeErr.Error()
		}
		res.Samples = append(res.Samples, smp.SoakSample)
		o.note("soak %s/%s: %s", time.Duration(smp.AtSeconds*float64(time.Second)).Round(time.Second), s.Duration, sampleLine(smp.SoakSample, res.Rate))
		if at >= s.Duration {
			break
		}
	}
	elapsed := time.Since(start)
	cancel()
	wg.Wait()
	// An interrupted run still reports what it measured, judged on the
	// samples it took.
	res.DurationSeconds = seconds(elapsed)
	res.Completed, res.Missed = st.total()
	st.mu.Lock()
	for k, v := range st.failed {
		res.Failed[k] += v
	}
	st.mu.Unlock()
	res.TurnsPerSecond = perSecond(int(res.Completed), elapsed)
	res.Verdict = judgeSoak(res.Samples, s.Warmup, SoakTolerance)
	if runErr != nil {
		return fmt.Errorf("interrupted after %s: %w", elapsed.Round(time.Second), runErr)
	}
	return nil
}

// sampleLine is the progress line of one sample.
func sampleLine(s SoakSample, rate float64) string {
	gor := "?"
	if s.Goroutines >= 0 {
		gor = strconv.Itoa(s.Goroutines)
	}
	return fmt.Sprintf("%.1f turns/s (target %.1f), RSS %s (anon %s, file %s), heap goal %s, %s goroutines, %d open files, badger %s, %.2f ms CPU/turn, p99 %.1f ms, %d failed, %d missed",
		s.TurnsPerSecond, rate, mb(s.RSSBytes), mb(s.RSSAnonBytes), mb(s.RSSFileBytes), mb(s.HeapGoalBytes), gor, s.OpenFDs,
		mb(s.BadgerBytes), s.CPUMSPerTurn, s.LatencyP99MS, s.Failed, s.Missed)
}

// FailedTotal is the number of turns that failed.
func (s *SoakResult) FailedTotal() int {
	n := 0
	for _, v := range s.Failed {
		n += v
	}
	return n
}

// Failures says why the soak's verdict is not flat; empty when it is.
func (s *SoakResult) Failures() []string {
	v := s.Verdict
	var fs []string
	switch {
	case !v.Enough:
		fs = append(fs, fmt.Sprintf("only %d sample(s) after the warm-up of %.0f s; run longer or sample more often", v.Samples, v.WarmupSeconds))
	default:
		if !v.RSSAnon.Flat {
			fs = append(fs, fmt.Sprintf("anonymous RSS not flat after warm-up: %s to %s (%.1f%%)", mb(int64(v.RSSAnon.Min)), mb(int64(v.RSSAnon.Max)), v.RSSAnon.Spread*100))
		}
		if !v.MappedBounded {
			fs = append(fs, fmt.Sprintf("mapped file pages exceeded the database by %s (more than %s)", signedMB(v.MappedOverStore), mb(mappedSlack)))
		}
		if !v.Goroutines.Flat {
			fs = append(fs, fmt.Sprintf("goroutines not flat after warm-up: %.0f to %.0f (%.1f%%)", v.Goroutines.Min, v.Goroutines.Max, v.Goroutines.Spread*100))
		}
	}
	return fs
}

// randomToken returns a fresh bearer token for /metrics.
func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a metrics token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
