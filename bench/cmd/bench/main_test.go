package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/bench/load"
)

func TestScenariosFromFlags(t *testing.T) {
	f, err := parseFlags([]string{"-customers", "7", "-messages", "3", "-delay", "20ms", "-think", "1s", "-idle", "100", "-startup", "2"})
	if err != nil {
		t.Fatal(err)
	}
	m := f.scenarios()
	if len(m.Loads) != 1 || m.Loads[0].Customers != 7 || m.Loads[0].Messages != 3 ||
		m.Loads[0].Delay != 20*time.Millisecond || m.Loads[0].Think != time.Second {
		t.Errorf("loads %+v", m.Loads)
	}
	if m.Idle == nil || m.Idle.Customers != 100 || m.Startup == nil || m.Startup.Runs != 2 {
		t.Errorf("idle %+v, startup %+v", m.Idle, m.Startup)
	}
}

func TestMatrixFlag(t *testing.T) {
	f, err := parseFlags([]string{"-matrix"})
	if err != nil {
		t.Fatal(err)
	}
	m := f.scenarios()
	var ns []int
	for _, l := range m.Loads {
		ns = append(ns, l.Customers)
		if l.Delay != load.TargetDelay {
			t.Errorf("matrix load %s has a %v model, want %v", l.Name, l.Delay, load.TargetDelay)
		}
	}
	if len(ns) != 4 || ns[0] != 1 || ns[1] != 10 || ns[2] != 50 || ns[3] != 1000 {
		t.Errorf("matrix customers %v, want 1, 10, 50, 1000", ns)
	}
	if m.Idle == nil || m.Idle.Customers != 10_000 || m.Startup == nil {
		t.Errorf("matrix idle %+v, startup %+v", m.Idle, m.Startup)
	}
	if len(m.Daemons) != 2 || m.Daemons[0] != load.DaemonSilas || m.Daemons[1] != load.DaemonBaseline || m.Runs != load.StandardRuns {
		t.Errorf("matrix daemons %v, runs %d: want silas then the baseline, %d rounds", m.Daemons, m.Runs, load.StandardRuns)
	}
	for _, l := range m.Loads {
		if l.DurationLimit != load.StandardLimit {
			t.Errorf("matrix load %s capped at %v, want %v", l.Name, l.DurationLimit, load.StandardLimit)
		}
	}
}

func TestDaemonsAndRunsFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		daemons []load.Daemon
		runs    int
		limit   time.Duration // of the first load
	}{
		{[]string{"-customers", "5"}, []load.Daemon{load.DaemonSilas}, 1, defaultDurationLimit},
		{[]string{"-customers", "5", "-daemons", "baseline,silas", "-runs", "3", "-duration-limit", "15m"},
			[]load.Daemon{load.DaemonBaseline, load.DaemonSilas}, 3, 15 * time.Minute},
		{[]string{"-matrix", "-daemons", "silas", "-runs", "1"}, []load.Daemon{load.DaemonSilas}, 1, load.StandardLimit},
		{[]string{"-matrix", "-duration-limit", "30s"}, []load.Daemon{load.DaemonSilas, load.DaemonBaseline}, load.StandardRuns, 30 * time.Second},
	} {
		f, err := parseFlags(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		m := f.scenarios()
		if !slices.Equal(m.Daemons, tc.daemons) || m.Runs != tc.runs || m.Loads[0].DurationLimit != tc.limit {
			t.Errorf("%v: daemons %v, runs %d, limit %v; want %v, %d, %v", tc.args, m.Daemons, m.Runs, m.Loads[0].DurationLimit, tc.daemons, tc.runs, tc.limit)
		}
	}
	for _, bad := range [][]string{{"-runs", "0"}, {"-runs", "-1"}, {"-daemons", "silas,nginx"}, {"-daemons", "silas,"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v parsed", bad)
		}
	}
}

func TestParseFlagsRefusesArguments(t *testing.T) {
	if _, err := parseFlags([]string{"extra"}); err == nil {
		t.Error("a stray argument parsed")
	}
}

func TestProgressPrinter(t *testing.T) {
	var buf bytes.Buffer
	p := &progressPrinter{w: &buf}
	for i := 1; i <= 6; i++ {
		p.print(load.Progress{Scenario: "n50", Completed: int64(i * 100), Total: 1000, Rate: 100})
	}
	p.print(load.Progress{Scenario: "n50", Completed: 1000, Total: 1000, Rate: 950, Final: true})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("not a terminal: want the fifth report and the final one, got %q", lines)
	}
	if !strings.Contains(lines[1], "1000/1000") || !strings.Contains(lines[1], "950/s") {
		t.Errorf("final line %q", lines[1])
	}

	buf.Reset()
	p = &progressPrinter{w: &buf, terminal: true}
	p.print(load.Progress{Scenario: "n1", Completed: 1, Total: 2})
	p.print(load.Progress{Scenario: "n1", Completed: 2, Total: 2, Final: true})
	if got := buf.String(); strings.Count(got, "\r") != 2 || !strings.HasSuffix(got, "\n") || strings.Count(got, "\n") != 1 {
		t.Errorf("terminal output %q: want lines rewritten in place and one newline at the end", got)
	}
}

func TestRobustnessFlags(t *testing.T) {
	f, err := parseFlags([]string{"-chaos"})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.chaosScenario(); c.Customers != robustnessCustomers || c.Kills != 10 || c.Delay != load.TargetDelay {
		t.Errorf("-chaos defaults %+v: want %d customers, 10 kills, the target model delay", c, robustnessCustomers)
	}
	f, err = parseFlags([]string{"-chaos", "-customers", "3", "-kills", "2", "-seed", "9"})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.chaosScenario(); c.Customers != 3 || c.Kills != 2 || c.Seed != 9 {
		t.Errorf("-chaos %+v", c)
	}
	f, err = parseFlags([]string{"-soak", "30m", "-soak-rate", "120", "-soak-sample", "30s"})
	if err != nil {
		t.Fatal(err)
	}
	if s := f.soakScenario(); s.Customers != robustnessCustomers || s.Duration != 30*time.Minute || s.Rate != 120 ||
		s.Sample != 30*time.Second || s.Probe != 15*time.Second || s.Warmup != 0 {
		t.Errorf("-soak %+v", s)
	}
	for _, bad := range [][]string{
		{"-chaos", "-soak", "1m"}, {"-chaos", "-matrix"}, {"-chaos", "-kills", "0"}, {"-soak", "1m", "-idle", "5"},
		{"-soak", "-1m"}, {"-soak", "1m", "-soak-sample", "0s"}, {"-chaos", "-daemons", "baseline"}, {"-chaos", "-customers", "0"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v parsed", bad)
		}
	}
}

func TestBrokenPromisesFailTheRun(t *testing.T) {
	if err := brokenPromises(&load.Report{Chaos: &load.ChaosResult{Passed: true}}); err != nil {
		t.Errorf("a passing chaos run failed: %v", err)
	}
	err := brokenPromises(&load.Report{Chaos: &load.ChaosResult{Lost: 1, LostIDs: []string{"m1"}}})
	if err == nil || !strings.Contains(err.Error(), "never answered") {
		t.Errorf("a lost message: %v", err)
	}
	err = brokenPromises(&load.Report{Soak: &load.SoakResult{}})
	if err == nil || !strings.Contains(err.Error(), "soak") {
		t.Errorf("a soak without samples: %v", err)
	}
}

func TestNoteClearsTheProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := &progressPrinter{w: &buf, terminal: true}
	p.print(load.Progress{Scenario: "chaos", Completed: 1, Total: 2})
	p.note("chaos: kill 1/10")
	if got := buf.String(); !strings.HasSuffix(got, "\r\033[Kchaos: kill 1/10\n") {
		t.Errorf("terminal output %q", got)
	}
	buf.Reset()
	p = &progressPrinter{w: &buf}
	p.note("soak 1m0s/5m0s: ...")
	if buf.String() != "soak 1m0s/5m0s: ...\n" {
		t.Errorf("output %q: a note is always printed, on a line of its own", buf.String())
	}
}
