package load

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Startup is a scenario that starts silas Runs times on an empty data
// directory (cold) and restarts it on the same directory (warm).
type Startup struct {
	Runs int
	// Settle is how long silas idles after ready before the idle RSS is
	// read; zero means one second.
	Settle time.Duration
}

// RunStartup measures start-to-ready, the CPU spent until ready, and the
// idle RSS.
func (o Options) RunStartup(ctx context.Context, s Startup) (*StartupResult, error) {
	if s.Runs < 1 {
		return nil, fmt.Errorf("startup scenario: want at least one run, got %d", s.Runs)
	}
	if s.Settle <= 0 {
		s.Settle = time.Second
	}
	var cold, warm, coldCPU, warmCPU []time.Duration
	var readyRSS, idleRSS []int64
	start := time.Now()
	for i := 0; i < s.Runs; i++ {
		if o.Progress != nil {
			o.Progress(Progress{Scenario: "startup", Completed: int64(i), Total: int64(s.Runs), Elapsed: time.Since(start)})
		}
		r, err := o.startupRun(ctx, s.Settle)
		if err != nil {
			return nil, fmt.Errorf("startup scenario, run %d: %w", i+1, err)
		}
		cold, coldCPU = append(cold, r.cold), append(coldCPU, r.coldCPU)
		warm, warmCPU = append(warm, r.warm), append(warmCPU, r.warmCPU)
		readyRSS, idleRSS = append(readyRSS, r.readyRSS), append(idleRSS, r.idleRSS)
	}
	if o.Progress != nil {
		o.Progress(Progress{Scenario: "startup", Completed: int64(s.Runs), Total: int64(s.Runs), Elapsed: time.Since(start), Final: true})
	}
	return &StartupResult{
		Runs: s.Runs, Cold: Summarize(cold), Warm: Summarize(warm),
		ColdCPUMS: Summarize(coldCPU).P50, WarmCPUMS: Summarize(warmCPU).P50,
		ReadyRSSBytes: median(readyRSS), IdleRSSBytes: median(idleRSS),
	}, nil
}

// startupSample is one cold start and one warm restart.
type startupSample struct {
	cold, warm, coldCPU, warmCPU time.Duration
	readyRSS, idleRSS            int64
}

func (o Options) startupRun(ctx context.Context, settle time.Duration) (r startupSample, err error) {
	srv, err := o.startServer(DaemonSilas, "startup", idleDelay)
	if err != nil {
		return r, err
	}
	defer func() {
		if err != nil {
			srv.abort()
		}
	}()
	r.cold = srv.startToReady
	if r.coldCPU, err = CPUTime(srv.daemon.pid()); err != nil {
		return r, err
	}
	if err := srv.daemon.stop(30 * time.Second); err != nil {
		return r, err
	}
	if err := srv.startSilas(o, "startup"); err != nil {
		return r, err
	}
	r.warm = srv.startToReady
	pid := srv.daemon.pid()
	if r.warmCPU, err = CPUTime(pid); err != nil {
		return r, err
	}
	mem, err := ReadMemory(pid)
	if err != nil {
		return r, err
	}
	r.readyRSS = mem.RSS
	if err := wait(ctx, settle); err != nil {
		return r, err
	}
	if mem, err = ReadMemory(pid); err != nil {
		return r, err
	}
	r.idleRSS = mem.RSS
	_, err = srv.stop()
	return r, err
}

// median returns the lower median of xs, 0 for none.
func median(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
