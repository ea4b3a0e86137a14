package metrics

import (
	"bytes"
	"math"
	"os"
	"runtime"
	rtm "runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"
)

// samples parses an exposition into name{labels} -> value, and the TYPE of
// each family.
func samples(t *testing.T, text string) (map[string]float64, map[string]string) {
	t.Helper()
	vals, types := map[string]float64{}, map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			f := strings.Fields(rest)
			types[f[0]] = f[1]
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		vals[line[:i]] = v
	}
	return vals, types
}

func TestRegisterProcess(t *testing.T) {
	r := NewRegistry()
	RegisterProcess(r)
	RegisterProcess(r) // idempotent, like every registration
	runtime.GC()
	var buf bytes.Buffer
	if err := r.WritePrometheus(&buf); err != nil {
		t.Fatal(err)
	}
	vals, types := samples(t, buf.String())
	now := float64(time.Now().Unix())
	checks := []struct {
		sample, typ string
		ok          func(v float64) bool
	}{
		{"go_goroutines", "gauge", func(v float64) bool { return v >= 1 }},
		{"go_threads", "gauge", func(v float64) bool { return v >= 1 }},
		{"go_gc_cycles_total", "counter", func(v float64) bool { return v >= 1 }},
		{"go_gc_duration_seconds_count", "", func(v float64) bool { return v >= 1 }},
		{`go_gc_duration_seconds{quantile="0.5"}`, "", func(v float64) bool { return v >= 0 && v < 10 }},
		{`go_gc_duration_seconds{quantile="1"}`, "", func(v float64) bool { return v >= vals[`go_gc_duration_seconds{quantile="0"}`] }},
		{"go_memstats_heap_alloc_bytes", "gauge", func(v float64) bool { return v > 0 }},
		{"go_memstats_alloc_bytes_total", "counter", func(v float64) bool { return v > 0 }},
		{"go_memstats_sys_bytes", "gauge", func(v float64) bool { return v >= vals["go_memstats_heap_alloc_bytes"] }},
		{"go_memstats_next_gc_bytes", "gauge", func(v float64) bool { return v > 0 }},
		{`go_info{version="` + runtime.Version() + `"}`, "", func(v float64) bool { return v == 1 }},
		{"process_cpu_seconds_total", "counter", func(v float64) bool { return v > 0 }},
		{"process_max_fds", "gauge", func(v float64) bool { return v >= 1 }},
		{"process_resident_memory_bytes", "gauge", func(v float64) bool { return v > 1<<20 }},
		{"process_virtual_memory_bytes", "gauge", func(v float64) bool { return v >= vals["process_resident_memory_bytes"] }},
		{"process_open_fds", "gauge", func(v float64) bool { return v >= 3 && v <= vals["process_max_fds"] }},
		{"process_start_time_seconds", "gauge", func(v float64) bool { return v <= now+1 && v > now-24*3600 }},
	}
	if _, err := os.Stat("/proc/self/statm"); err != nil {
		t.Skipf("no /proc here (%v): the process series are left out", err)
	}
	for _, c := range checks {
		v, ok := vals[c.sample]
		if !ok {
			t.Errorf("%s missing from:\n%s", c.sample, buf.String())
			continue
		}
		if !c.ok(v) {
			t.Errorf("%s = %v, implausible", c.sample, v)
		}
		if name, _, _ := strings.Cut(c.sample, "{"); c.typ != "" && types[name] != c.typ {
			t.Errorf("%s has TYPE %q, want %q", name, types[name], c.typ)
		}
	}
	if types["go_gc_duration_seconds"] != "summary" {
		t.Errorf("go_gc_duration_seconds TYPE %q", types["go_gc_duration_seconds"])
	}
}

// TestOpenFDsFollowsTheProcess: the count moves with files opened and
// closed.
func TestOpenFDsFollowsTheProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	before := openFDs()
	var files []*os.File
	for range 20 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// Other goroutines of the test binary may open or close a few.
	if during := openFDs(); during < before+15 {
		t.Errorf("open fds %v with 20 more files open, %v before", during, before)
	}
	for _, f := range files {
		f.Close()
	}
}

func TestHistQuantile(t *testing.T) {
	inf := math.Inf(1)
	h := &rtm.Float64Histogram{
		Buckets: []float64{math.Inf(-1), 0.001, 0.01, 0.1, inf},
		Counts:  []uint64{0, 2, 1, 1},
	}
	cases := []struct {
		q    float64
		want float64
	}{
		{0, 0.01}, {0.25, 0.01}, {0.5, 0.01}, {0.75, 0.1}, {1, 0.1},
	}
	for _, c := range cases {
		if got := histQuantile(h, 4, c.q); got != c.want {
			t.Errorf("q%v = %v, want %v", c.q, got, c.want)
		}
	}
	if n, sum := histTotals(h); n != 4 || math.Abs(sum-(2*0.0055+0.055+0.1)) > 1e-12 {
		t.Errorf("totals = %d %v", n, sum)
	}
	if !math.IsNaN(histQuantile(h, 0, 0.5)) || !math.IsNaN(histQuantile(nil, 0, 0.5)) {
		t.Error("a quantile without data is not NaN")
	}
}
