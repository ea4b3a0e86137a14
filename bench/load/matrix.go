package load

import (
	"context"
	"fmt"
	"time"
)

// Matrix is a set of scenarios run one after another, each against fresh
// processes.
type Matrix struct {
	Startup *Startup
	Loads   []Load
	Idle    *Idle
	// Daemons are the servers each load runs against, in this order within
	// each round; empty means silas only. The startup and idle scenarios
	// run against silas only.
	Daemons []Daemon
	// Runs is how many rounds each load runs; the best run of each daemon
	// is kept (see [Best]). Zero means one.
	Runs int
}

// Standard matrix sizes: the rounds, and the cap on each load's sending
// phase that keeps a slow build within make bench's budget of about ten
// minutes (16 load runs).
const (
	StandardRuns  = 2
	StandardLimit = time.Minute
)

// StandardMatrix is the matrix of the bench issues: startup; N = 1, 10, 50
// and 1000 customers with a 50 ms model, each against silas and the
// baseline, interleaved (silas, baseline, silas, baseline), best of
// StandardRuns each; 10,000 idle customers. Message counts are chosen so
// each load runs about ten seconds at its target throughput.
func StandardMatrix() Matrix {
	load := func(n, m int) Load {
		return Load{Name: fmt.Sprintf("n%d", n), Customers: n, Messages: m, Delay: TargetDelay, DurationLimit: StandardLimit}
	}
	return Matrix{
		Startup: &Startup{Runs: 5},
		Loads:   []Load{load(1, 200), load(10, 200), load(50, 200), load(1000, 30)},
		Idle:    &Idle{Customers: 10_000},
		Daemons: []Daemon{DaemonSilas, DaemonBaseline},
		Runs:    StandardRuns,
	}
}

// Run runs every scenario of m into r. Each load runs m.Runs rounds of
// m.Daemons, and r keeps the best run of each daemon. A scenario that
// fails is recorded in r.Failures and the others still run; the error is
// the context's, if it ended.
func (o Options) Run(ctx context.Context, m Matrix, r *Report) error {
	fail := func(err error) { r.Failures = append(r.Failures, err.Error()) }
	if m.Startup != nil {
		res, err := o.RunStartup(ctx, *m.Startup)
		if err != nil {
			fail(err)
		}
		r.Startup = res
	}
	daemons := m.Daemons
	if len(daemons) == 0 {
		daemons = []Daemon{DaemonSilas}
	}
	runs := max(m.Runs, 1)
	for _, l := range m.Loads {
		var ran []*LoadResult // in the order they ran
		for run := 1; run <= runs && ctx.Err() == nil; run++ {
			for _, d := range daemons {
				if err := ctx.Err(); err != nil {
					break
				}
				l := l
				l.Daemon = d
				if runs > 1 || len(daemons) > 1 {
					l.Run = run
				}
				res, err := o.RunLoad(ctx, l)
				if err != nil {
					fail(err)
				}
				if res != nil {
					ran = append(ran, res)
				}
			}
		}
		r.keep(daemons, ran)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if m.Idle != nil && ctx.Err() == nil {
		res, err := o.RunIdle(ctx, *m.Idle)
		if err != nil {
			fail(err)
		}
		r.Idle = res
	}
	return ctx.Err()
}

// keep records the runs of one scenario, in the order they ran, and keeps
// the best run of each daemon: silas's in r.Loads, the baseline's in
// r.BaselineLoads.
func (r *Report) keep(daemons []Daemon, ran []*LoadResult) {
	kept := map[*LoadResult]bool{}
	for _, d := range daemons {
		var mine []*LoadResult
		for _, res := range ran {
			if res.Daemon == d {
				mine = append(mine, res)
			}
		}
		best := Best(mine)
		switch {
		case best == nil:
			continue
		case d == DaemonBaseline:
			r.BaselineLoads = append(r.BaselineLoads, best)
		default:
			r.Loads = append(r.Loads, best)
		}
		kept[best] = true
	}
	for _, res := range ran {
		r.Runs = append(r.Runs, summarize(res, kept[res]))
	}
}
