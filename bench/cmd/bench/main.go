// Command bench runs the Silas load bench (package bench/load): simulated
// chatbot customers against a real `silas serve` and the mock model, and
// writes a JSON report and a markdown table.
//
// The standard matrix of the bench issues (what `make bench` runs): every
// load against silas and against the baseline daemon (bench/cmd/baseline:
// the same protocol subset and mock, no persistence, no gates), interleaved
// and twice each, the best run of each kept, and silas reported as a ratio
// of the baseline:
//
//	bench -matrix
//	bench -matrix -runs 3             # best of three
//	bench -matrix -daemons silas      # no baseline, one run
//
// One scenario, e.g. 200 customers with a 100 ms model and a second of
// think time, plus 2,000 idle customers:
//
//	bench -customers 200 -messages 50 -delay 100ms -think 1s -idle 2000
//
// A single scenario runs against silas once unless -daemons and -runs say
// otherwise, e.g. -daemons silas,baseline -runs 2.
//
// Robustness runs, each against silas alone (see package bench/load):
//
//	bench -chaos                      # 20 customers, 10 kill -9s and restarts (make bench-chaos)
//	bench -chaos -customers 50 -kills 30 -seed 42
//	bench -soak 60m                   # half of a probed capacity for an hour (make bench-soak)
//	bench -soak 30m -soak-rate 200 -soak-sample 30s
//
// -chaos exits non-zero when an acknowledged message was lost, a turn was
// answered twice with different answers or an answer reached the wrong
// customer; -soak when RSS or goroutines were not flat after the warm-up.
//
// Reports go to -out (default bench/results): latest.json and latest.md,
// plus copies named after the start time. The markdown is printed at the
// end. -cpuprofile profiles the driver; -server-cpuprofile and
// -server-memprofile pass silas serve --cpuprofile and --memprofile, one file
// per scenario (the scenario's name goes before the extension):
//
//	bench -customers 1000 -messages 20 -server-cpuprofile /tmp/silas.pprof
//	go tool pprof -top bin/silas /tmp/silas-n1000.pprof
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/silas-ai/silas/bench/load"
)

// defaultDurationLimit caps a single scenario's sending phase.
const defaultDurationLimit = 2 * time.Minute

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// flags are the command line.
type flags struct {
	matrix        bool
	customers     int
	messages      int
	delay         time.Duration
	think         time.Duration
	turnTimeout   time.Duration
	durationLimit time.Duration
	idle          int
	startup       int
	silas, mock   string
	baseline      string
	daemons       []load.Daemon
	runs          int
	out           string
	cpuProfile    string
	serverProfile string
	serverMemProf string

	chaos      bool
	kills      int
	seed       int64
	soak       time.Duration
	soakRate   float64
	soakSample time.Duration
	soakProbe  time.Duration
	soakWarmup time.Duration
	soakMemory int
}

// robustnessCustomers is the default -customers of -chaos and -soak.
const robustnessCustomers = 20

func parseFlags(args []string) (*flags, error) {
	var f flags
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.BoolVar(&f.matrix, "matrix", false, "run the standard matrix (startup; 1, 10, 50, 1000 customers with a 50 ms model, each against silas and the baseline; 10,000 idle) and ignore the scenario flags")
	fs.IntVar(&f.customers, "customers", 50, "simulated customers that chat (0: no load scenario)")
	fs.IntVar(&f.messages, "messages", 100, "messages each customer sends, one at a time")
	fs.DurationVar(&f.delay, "delay", load.TargetDelay, "the mock model's answer delay")
	fs.DurationVar(&f.think, "think", 0, "pause between an answer and the customer's next message")
	fs.DurationVar(&f.turnTimeout, "turn-timeout", 30*time.Second, "how long a customer waits for one answer")
	fs.DurationVar(&f.durationLimit, "duration-limit", defaultDurationLimit, fmt.Sprintf("bound on each load run's sending phase (with -matrix: default %s per run)", load.StandardLimit))
	fs.IntVar(&f.idle, "idle", 0, "idle customers to connect in an idle scenario (0: none)")
	fs.IntVar(&f.startup, "startup", 0, "start-to-ready runs in a startup scenario (0: none)")
	fs.StringVar(&f.silas, "silas", "bin/silas", "the silas binary")
	fs.StringVar(&f.mock, "mockllm", "bin/mockllm", "the mock model binary")
	fs.StringVar(&f.baseline, "baseline", "bin/baseline", "the baseline daemon binary")
	daemons := fs.String("daemons", "", "the daemons each load runs against, comma-separated, in the order each round runs them (default silas,baseline with -matrix, else silas)")
	fs.IntVar(&f.runs, "runs", 0, fmt.Sprintf("rounds of each load; the best run of each daemon is kept (default %d with -matrix, else 1)", load.StandardRuns))
	fs.StringVar(&f.out, "out", "bench/results", "directory for the reports (empty: write none)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the driver to this file")
	fs.StringVar(&f.serverProfile, "server-cpuprofile", "", "have silas write a CPU profile of each scenario (serve --cpuprofile) to this file, with the scenario's name added")
	fs.StringVar(&f.serverMemProf, "server-memprofile", "", "have silas write a heap profile at the end of each scenario (serve --memprofile) to this file, with the scenario's name added")
	fs.BoolVar(&f.chaos, "chaos", false, fmt.Sprintf("kill silas with SIGKILL -kills times while -customers customers (default %d) talk to it, restart it, and check that nothing acknowledged is lost and no turn is answered twice differently", robustnessCustomers))
	fs.IntVar(&f.kills, "kills", 10, "kills of the -chaos run")
	fs.Int64Var(&f.seed, "seed", 0, "seed of the -chaos kill times and kinds (0: from the clock; the report records it)")
	fs.DurationVar(&f.soak, "soak", 0, fmt.Sprintf("drive silas at a fixed rate with -customers customers (default %d) for this long, e.g. 60m, sampling RSS, goroutines, open files and the database size", robustnessCustomers))
	fs.Float64Var(&f.soakRate, "soak-rate", 0, "turns/s of the -soak run (0: half of what a capacity probe reaches)")
	fs.DurationVar(&f.soakSample, "soak-sample", time.Minute, "sampling interval of the -soak run")
	fs.DurationVar(&f.soakProbe, "soak-probe", 15*time.Second, "length of the -soak capacity probe")
	fs.DurationVar(&f.soakWarmup, "soak-warmup", 0, "warm-up the -soak verdict leaves out (0: the first 10%, at most 5 minutes)")
	fs.IntVar(&f.soakMemory, "soak-memory-limit", 0, "silas.process.memory_soft_limit_mb of the -soak run, in MB (0: none, silas's default)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case *daemons != "":
		ds, err := load.ParseDaemons(*daemons)
		if err != nil {
			return nil, fmt.Errorf("-daemons: %w", err)
		}
		f.daemons = ds
	case f.matrix:
		f.daemons = []load.Daemon{load.DaemonSilas, load.DaemonBaseline}
	default:
		f.daemons = []load.Daemon{load.DaemonSilas}
	}
	switch {
	case f.runs < 0 || (set["runs"] && f.runs == 0):
		return nil, fmt.Errorf("-runs %d: want at least 1", f.runs)
	case f.runs == 0 && f.matrix:
		f.runs = load.StandardRuns
	case f.runs == 0:
		f.runs = 1
	}
	if !set["duration-limit"] {
		f.durationLimit = 0 // each scenario's own cap
	}
	if err := f.checkRobustness(set); err != nil {
		return nil, err
	}
	return &f, nil
}

// checkRobustness validates -chaos and -soak, which run alone against
// silas, and applies their default number of customers.
func (f *flags) checkRobustness(set map[string]bool) error {
	if !f.chaos && f.soak == 0 {
		return nil
	}
	switch {
	case f.chaos && f.soak != 0:
		return fmt.Errorf("-chaos and -soak: run one at a time")
	case f.soak < 0:
		return fmt.Errorf("-soak %s: want a duration above zero, e.g. 60m", f.soak)
	case f.chaos && f.kills < 1:
		return fmt.Errorf("-kills %d: want at least 1", f.kills)
	case f.soakRate < 0 || f.soakSample <= 0 || f.soakProbe <= 0 || f.soakWarmup < 0 || f.soakMemory < 0:
		return fmt.Errorf("-soak-rate, -soak-sample, -soak-probe, -soak-warmup and -soak-memory-limit must not be negative (and the interval and probe not zero)")
	}
	for _, other := range []string{"matrix", "idle", "startup", "daemons", "runs", "messages", "think"} {
		if set[other] {
			return fmt.Errorf("-%s does not apply to -chaos or -soak, which run alone against silas", other)
		}
	}
	if !set["customers"] {
		f.customers = robustnessCustomers
	}
	if f.customers < 1 {
		return fmt.Errorf("-customers %d: -chaos and -soak need at least one", f.customers)
	}
	return nil
}

// chaosScenario is the -chaos run the flags ask for.
func (f *flags) chaosScenario() load.Chaos {
	return load.Chaos{Customers: f.customers, Kills: f.kills, Delay: f.delay, Seed: f.seed}
}

// soakScenario is the -soak run the flags ask for.
func (f *flags) soakScenario() load.Soak {
	return load.Soak{Customers: f.customers, Duration: f.soak, Rate: f.soakRate, Probe: f.soakProbe,
		Sample: f.soakSample, Warmup: f.soakWarmup, Delay: f.delay, TurnTimeout: f.turnTimeout, MemorySoftLimitMB: f.soakMemory}
}

// uses reports whether the loads run against d.
func (f *flags) uses(d load.Daemon) bool { return slices.Contains(f.daemons, d) }

// scenarios returns what the flags ask to run.
func (f *flags) scenarios() load.Matrix {
	if f.matrix {
		m := load.StandardMatrix()
		m.Daemons, m.Runs = f.daemons, f.runs
		if f.durationLimit > 0 {
			for i := range m.Loads {
				m.Loads[i].DurationLimit = f.durationLimit
			}
		}
		return m
	}
	m := load.Matrix{Daemons: f.daemons, Runs: f.runs}
	limit := f.durationLimit
	if limit == 0 {
		limit = defaultDurationLimit
	}
	if f.startup > 0 {
		m.Startup = &load.Startup{Runs: f.startup}
	}
	if f.customers > 0 {
		m.Loads = []load.Load{{
			Name: fmt.Sprintf("n%d", f.customers), Customers: f.customers, Messages: f.messages,
			Delay: f.delay, Think: f.think, TurnTimeout: f.turnTimeout, DurationLimit: limit,
		}}
	}
	if f.idle > 0 {
		m.Idle = &load.Idle{Customers: f.idle}
	}
	return m
}

func run(args []string) error {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	pp := newProgressPrinter(os.Stderr)
	opts := load.Options{SilasBin: f.silas, MockBin: f.mock,
		ServerCPUProfile: f.serverProfile, ServerMemProfile: f.serverMemProf,
		Progress: pp.print, Note: pp.note}
	if f.uses(load.DaemonBaseline) {
		opts.BaselineBin = f.baseline
	}
	if !f.uses(load.DaemonSilas) && !f.matrix && f.idle == 0 && f.startup == 0 {
		opts.SilasBin = "" // nothing runs silas
	}
	if err := opts.Resolve(); err != nil {
		return err
	}
	report, err := load.NewReport("bench "+strings.Join(args, " "), ".")
	if err != nil {
		return err
	}
	warnIfBusy(report.Machine.LoadAvg)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runErr := f.runScenarios(ctx, opts, report)
	report.Finish()
	if f.out != "" {
		if err := writeReports(f.out, report); err != nil {
			return err
		}
	}
	fmt.Println(report.Markdown())
	if runErr != nil {
		return fmt.Errorf("interrupted: %w", runErr)
	}
	if len(report.Failures) > 0 {
		return fmt.Errorf("%d scenario(s) failed; see the report", len(report.Failures))
	}
	return brokenPromises(report)
}

// runScenarios runs what the flags ask for into report. A scenario that
// fails is recorded in report.Failures; the error is the context's, if it
// ended.
func (f *flags) runScenarios(ctx context.Context, opts load.Options, report *load.Report) error {
	var err error
	switch {
	case f.chaos:
		report.Chaos, err = opts.RunChaos(ctx, f.chaosScenario())
	case f.soak > 0:
		report.Soak, err = opts.RunSoak(ctx, f.soakScenario())
	default:
		return opts.Run(ctx, f.scenarios(), report)
	}
	if err != nil {
		report.Failures = append(report.Failures, err.Error())
	}
	return ctx.Err()
}

// brokenPromises fails a chaos run that lost an acknowledged message or
// answered a turn twice differently, and a soak that was not flat.
func brokenPromises(r *load.Report) error {
	if c := r.Chaos; c != nil {
		if fs := c.Failures(); len(fs) > 0 {
			return fmt.Errorf("chaos: %s", strings.Join(fs, "; "))
		}
	}
	if s := r.Soak; s != nil {
		if fs := s.Failures(); len(fs) > 0 {
			return fmt.Errorf("soak: %s", strings.Join(fs, "; "))
		}
	}
	return nil
}

// warnIfBusy says so when the machine was busy as the run started: other
// work competes with silas for the cores and makes the numbers noisy.
func warnIfBusy(loadAvg string) {
	f := strings.Fields(loadAvg)
	if len(f) == 0 {
		return
	}
	if l, err := strconv.ParseFloat(f[0], 64); err == nil && l >= 1 {
		fmt.Fprintf(os.Stderr, "bench: warning: load average %s at start: other work on this machine will make the numbers noisy (see the \"other\" CPU column)\n", f[0])
	}
}
