package load

import (
	"strings"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields.
	line := "4242 (silas (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 10 0 123 456 789\n"
	got, err := parseStatCPU([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want { // (250+50) ticks of 10 ms
		t.Errorf("cpu = %v, want %v", got, want)
	}
	for _, bad := range []string{"no parens", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 5 6"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("parseStatCPU(%q) succeeded, want an error", bad)
		}
	}
}

func TestParseStatus(t *testing.T) {
	status := strings.Join([]string{
		"Name:\tsilas", "VmPeak:\t 999 kB", "VmHWM:\t   52760 kB", "VmRSS:\t   24300 kB",
		"RssAnon:\t   20000 kB", "RssFile:\t    4300 kB", "Threads:\t10", "",
	}, "\n")
	got, err := parseStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	want := Memory{RSS: 24300 * 1024, Peak: 52760 * 1024, Threads: 10, Anon: 20000 * 1024, File: 4300 * 1024}
	if got != want {
		t.Errorf("parseStatus = %+v, want %+v", got, want)
	}
	if _, err := parseStatus([]byte("Name:\tzombie\nThreads:\t1\n")); err == nil {
		t.Error("a status without VmRSS parsed, want an error")
	}
	if _, err := parseStatus([]byte("VmRSS:\t12 MB\nVmHWM:\t1 kB\n")); err == nil {
		t.Error("a size in MB parsed, want an error")
	}
}

func TestParseMachineBusy(t *testing.T) {
	// user nice system idle iowait irq softirq steal ...
	got, err := parseMachineBusy([]byte("cpu  100 1 50 9000 700 2 3 4 0 0\ncpu0 1 2 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := 1600 * time.Millisecond; got != want { // 160 ticks; idle and iowait left out
		t.Errorf("busy = %v, want %v", got, want)
	}
	if _, err := parseMachineBusy([]byte("intr 1 2 3\n")); err == nil {
		t.Error("a /proc/stat without the cpu line parsed, want an error")
	}
}

func TestMemTotalAndCPUModel(t *testing.T) {
	if got := memTotal([]byte("MemTotal:       24683624 kB\nMemFree: 1 kB\n")); got != 24683624*1024 {
		t.Errorf("memTotal = %d", got)
	}
	if got := cpuModel([]byte("processor\t: 0\nmodel name\t: AMD EPYC\n")); got != "AMD EPYC" {
		t.Errorf("cpuModel = %q", got)
	}
}

func TestParseMockStats(t *testing.T) {
	got := parseMockStats("noise\nmockllm: 20000 requests (max 987 in flight, 0 errors, 0 rate limited, 0 malformed injected)\n")
	if want := (MockStats{Requests: 20000, MaxInFlight: 987}); got != want {
		t.Errorf("parseMockStats = %+v, want %+v", got, want)
	}
	if got := parseMockStats("killed"); got != (MockStats{}) {
		t.Errorf("parseMockStats without the line = %+v, want zeros", got)
	}
}

func TestProfilePath(t *testing.T) {
	if got := profilePath("/tmp/silas.pprof", "n50"); got != "/tmp/silas-n50.pprof" {
		t.Errorf("profilePath = %q", got)
	}
	if got := profilePath("cpu", "idle"); got != "cpu-idle" {
		t.Errorf("profilePath without extension = %q", got)
	}
}

func TestTail(t *testing.T) {
	tl := newTail(8)
	_, _ = tl.Write([]byte("line one\nline two\n"))
	_, _ = tl.Write([]byte("end\n"))
	if got := tl.String(); got != "two\nend\n" {
		t.Errorf("tail keeps %q, want the last 8 bytes", got)
	}
	if got := tl.Lines(); got != 3 {
		t.Errorf("tail counted %d lines, want 3", got)
	}
}
