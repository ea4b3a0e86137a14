package load

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// buildBaseline builds the mock model and the baseline daemon (not silas)
// into a temporary directory.
func buildBaseline(t *testing.T) Options {
	t.Helper()
	dir := t.TempDir()
	o := Options{MockBin: filepath.Join(dir, "mockllm"), BaselineBin: filepath.Join(dir, "baseline")}
	for bin, pkg := range map[string]string{o.MockBin: "../cmd/mockllm", o.BaselineBin: "../cmd/baseline"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	if err := o.Resolve(); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestBaselineThroughTheDriver runs the baseline daemon and the mock as
// processes and drives them as the matrix does: two rounds, the best kept.
func TestBaselineThroughTheDriver(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds and runs the baseline and mockllm binaries")
	}
	o := buildBaseline(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	r := &Report{}
	m := Matrix{
		Loads:   []Load{{Name: "e2e", Customers: 2, Messages: 3, Delay: 5 * time.Millisecond}},
		Daemons: []Daemon{DaemonBaseline}, Runs: 2,
	}
	if err := o.Run(ctx, m, r); err != nil {
		t.Fatal(err)
	}
	if len(r.Failures) > 0 {
		t.Fatalf("failures: %q", r.Failures)
	}
	if len(r.Loads) != 0 || len(r.BaselineLoads) != 1 || len(r.Runs) != 2 {
		t.Fatalf("silas loads %d, baseline loads %d, runs %d: want the baseline's best of 2 only", len(r.Loads), len(r.BaselineLoads), len(r.Runs))
	}
	res := r.BaselineLoads[0]
	if res.Daemon != DaemonBaseline || res.Completed != 6 || res.Errors() != 0 {
		t.Fatalf("baseline run %+v: want 6 turns answered exactly once", res)
	}
	if res.Mock.Requests != 6 || res.Latency.P50 < 5 || res.Server.PeakRSSBytes <= 0 || res.Server.CPUSeconds < 0 {
		t.Errorf("mock requests %d (want one per turn), latency %+v, server %+v", res.Mock.Requests, res.Latency, res.Server)
	}
	if kept := r.Runs[0].Kept != r.Runs[1].Kept; !kept {
		t.Errorf("runs %+v: want exactly one kept", r.Runs)
	}

	// Without a baseline binary, a baseline scenario says how to build one.
	o.BaselineBin = ""
	if _, err := o.RunLoad(ctx, Load{Name: "nobin", Customers: 1, Messages: 1, Daemon: DaemonBaseline}); err == nil {
		t.Error("a baseline load ran without a baseline binary")
	}
}
