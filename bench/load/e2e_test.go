package load

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildBinaries builds silas and the mock model into a temporary directory.
func buildBinaries(t *testing.T) Options {
	t.Helper()
	dir := t.TempDir()
	o := Options{SilasBin: filepath.Join(dir, "silas"), MockBin: filepath.Join(dir, "mockllm")}
	for bin, pkg := range map[string]string{o.SilasBin: "../../cmd/silas", o.MockBin: "../cmd/mockllm"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	if err := o.Resolve(); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestScenariosAgainstTheDaemon runs each scenario kind, small, against the
// real binaries: the driver's plumbing, not the daemon's speed.
func TestScenariosAgainstTheDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds and runs the silas and mockllm binaries")
	}
	o := buildBinaries(t)
	var progressed int
	o.Progress = func(Progress) { progressed++ } // called from one goroutine at a time
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	res, err := o.RunLoad(ctx, Load{Name: "e2e", Customers: 3, Messages: 4, Delay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 12 || res.Errors() != 0 {
		t.Fatalf("completed %d of 12, failed %v, integrity %+v", res.Completed, res.Failed, res.Integrity)
	}
	if res.Mock.Requests < 12 || res.Latency.P50 < 5 || res.Overhead.Count != 12 {
		t.Errorf("mock requests %d, latency %+v, overhead %+v: want at least a model call and 5 ms per turn",
			res.Mock.Requests, res.Latency, res.Overhead)
	}
	if res.Server.PeakRSSBytes <= 0 || res.Server.StartToReadyMS <= 0 || res.TurnsPerSecond <= 0 {
		t.Errorf("server figures missing: %+v, %v turns/s", res.Server, res.TurnsPerSecond)
	}
	if progressed == 0 {
		t.Error("no progress was reported")
	}

	idle, err := o.RunIdle(ctx, Idle{Customers: 20, Settle: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if idle.Connected != 20 || idle.ProbeError != "" || idle.ProbeMS <= 0 || idle.RSSAfterBytes <= 0 {
		t.Errorf("idle result %+v", idle)
	}

	st, err := o.RunStartup(ctx, Startup{Runs: 1, Settle: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if st.Cold.P50 <= 0 || st.Warm.P50 <= 0 || st.IdleRSSBytes <= 0 {
		t.Errorf("startup result %+v", st)
	}
}

func TestResolveNamesTheBuildCommand(t *testing.T) {
	o := Options{SilasBin: filepath.Join(t.TempDir(), "nope"), MockBin: "x"}
	err := o.Resolve()
	if err == nil || !strings.Contains(err.Error(), "go build -o bin/silas ./cmd/silas") {
		t.Errorf("Resolve() = %v, want the build command", err)
	}
}
