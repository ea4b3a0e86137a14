package metrics

import (
	"bytes"
	"math"
	"os"
	"runtime"
	rtm "runtime/metrics"
	"strconv"
	"syscall"
	"time"
)

// RegisterProcess registers the Go runtime and process series Prometheus
// users look for first (goroutines, threads, GC, heap, resident memory,
// CPU, open file descriptors), under the names the Prometheus Go client
// uses, so dashboards and alerts written for it work unchanged. Values
// come from runtime/metrics (no stop-the-world ReadMemStats) and from
// /proc/self and getrusage, read on each scrape. The /proc series are left
// out where /proc is not mounted.
func RegisterProcess(r *Registry) {
	r.GaugeFunc("go_goroutines", "Number of goroutines that currently exist.", runtimeValue("/sched/goroutines:goroutines"))
	r.GaugeFunc("go_threads", "Number of OS threads the Go runtime has created and not exited.", runtimeValue("/sched/threads/total:threads"))
	r.CounterFunc("go_gc_cycles_total", "Garbage collection cycles completed since the process started.", runtimeValue("/gc/cycles/total:gc-cycles"))
	register(r, "go_gc_duration_seconds",
		"Stop-the-world pauses of the garbage collector, in seconds, since the process started; quantiles and sum are estimated from the runtime's pause histogram.",
		kindSummary, func(d desc) *pauseSummary { return &pauseSummary{desc: d, sample: "/sched/pauses/total/gc:seconds"} })
	r.GaugeFunc("go_memstats_heap_alloc_bytes", "Bytes of allocated heap objects, reachable or not yet swept.", runtimeValue("/memory/classes/heap/objects:bytes"))
	r.CounterFunc("go_memstats_alloc_bytes_total", "Bytes allocated on the heap since the process started.", runtimeValue("/gc/heap/allocs:bytes"))
	r.GaugeFunc("go_memstats_sys_bytes", "Bytes of memory the Go runtime obtained from the OS.", runtimeValue("/memory/classes/total:bytes"))
	r.GaugeFunc("go_memstats_next_gc_bytes", "Heap size at which the next garbage collection starts.", runtimeValue("/gc/heap/goal:bytes"))
	register(r, "go_info", "The Go version silas was built with.", kindGauge,
		func(d desc) *infoMetric { return &infoMetric{desc: d, label: "version", value: runtime.Version()} })

	r.CounterFunc("process_cpu_seconds_total", "User and system CPU time of the process, in seconds.", cpuSeconds)
	r.GaugeFunc("process_max_fds", "Limit on open file descriptors (RLIMIT_NOFILE, soft).", maxFDs)
	if _, err := os.ReadFile("/proc/self/statm"); err != nil {
		return
	}
	page := float64(os.Getpagesize())
	r.GaugeFunc("process_resident_memory_bytes", "Resident memory of the process, in bytes.", func() float64 { return statm(1) * page })
	r.GaugeFunc("process_virtual_memory_bytes", "Virtual memory of the process, in bytes.", func() float64 { return statm(0) * page })
	r.GaugeFunc("process_open_fds", "Open file descriptors of the process.", openFDs)
	start := startTime()
	r.GaugeFunc("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.", func() float64 { return start })
}

// kindSummary is the Prometheus summary type.
const kindSummary kind = "summary"

// runtimeValue returns a reader of one scalar runtime/metrics sample; an
// unknown name reads NaN.
func runtimeValue(name string) func() float64 {
	return func() float64 {
		s := []rtm.Sample{{Name: name}}
		rtm.Read(s)
		switch s[0].Value.Kind() {
		case rtm.KindUint64:
			return float64(s[0].Value.Uint64())
		case rtm.KindFloat64:
			return s[0].Value.Float64()
		}
		return math.NaN()
	}
}

// pauseSummary renders a runtime/metrics duration histogram as a
// Prometheus summary: quantiles 0, .25, .5, .75 and 1 (the upper bound of
// the bucket holding each), the count, and a sum from bucket midpoints.
type pauseSummary struct {
	desc
	sample string
}

var summaryQuantiles = [...]struct {
	q     float64
	label string
}{{0, "0"}, {0.25, "0.25"}, {0.5, "0.5"}, {0.75, "0.75"}, {1, "1"}}

func (p *pauseSummary) write(b []byte) []byte {
	s := []rtm.Sample{{Name: p.sample}}
	rtm.Read(s)
	var h *rtm.Float64Histogram
	if s[0].Value.Kind() == rtm.KindFloat64Histogram {
		h = s[0].Value.Float64Histogram()
	}
	count, sum := histTotals(h)
	for _, q := range summaryQuantiles {
		b = appendSample(b, p.name, "", "quantile", q.label, histQuantile(h, count, q.q))
	}
	b = appendSample(b, p.name, "_sum", "", "", sum)
	return appendSample(b, p.name, "_count", "", "", float64(count))
}

// histTotals returns a histogram's count and estimated sum.
func histTotals(h *rtm.Float64Histogram) (uint64, float64) {
	if h == nil {
		return 0, 0
	}
	var n uint64
	var sum float64
	for i, c := range h.Counts {
		n += c
		sum += float64(c) * midpoint(h.Buckets[i], h.Buckets[i+1])
	}
	return n, sum
}

// histQuantile returns the upper bound of the bucket holding quantile q
// (the lower bound for an unbounded last bucket), or NaN without data.
func histQuantile(h *rtm.Float64Histogram, count uint64, q float64) float64 {
	if h == nil || count == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(q * float64(count)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank {
			if hi := h.Buckets[i+1]; !math.IsInf(hi, 1) {
				return hi
			}
			return h.Buckets[i]
		}
	}
	return h.Buckets[len(h.Buckets)-1]
}

// midpoint is the middle of [lo, hi), or its finite end.
func midpoint(lo, hi float64) float64 {
	switch {
	case math.IsInf(lo, -1):
		return max(hi, 0)
	case math.IsInf(hi, 1):
		return lo
	}
	return (lo + hi) / 2
}

// infoMetric is a constant 1 with one label, for build information.
type infoMetric struct {
	desc
	label, value string
}

func (m *infoMetric) write(b []byte) []byte {
	return appendSample(b, m.name, "", m.label, m.value, 1)
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func maxFDs() float64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return math.NaN()
	}
	return float64(rl.Cur)
}

// statm returns field i of /proc/self/statm (in pages), or NaN.
func statm(i int) float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return math.NaN()
	}
	fields := bytes.Fields(b)
	if i >= len(fields) {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(string(fields[i]), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// openFDs counts /proc/self/fd, the descriptor used to read it included,
// as the Prometheus client does.
func openFDs() float64 {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return math.NaN()
	}
	return float64(len(entries))
}

// startTime returns when the process started, from /proc (its start in
// clock ticks after boot, plus the boot time), or now when /proc cannot
// say. Linux's USER_HZ is 100 on every architecture Go supports.
func startTime() float64 {
	now := float64(time.Now().UnixNano()) / 1e9
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return now
	}
	// The command name (field 2) may hold spaces; fields after it are
	// counted from its closing parenthesis.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return now
	}
	fields := bytes.Fields(stat[i+1:])
	const startField = 22 - 3 // field 22 (starttime); fields[0] is field 3
	if len(fields) <= startField {
		return now
	}
	ticks, err := strconv.ParseFloat(string(fields[startField]), 64)
	if err != nil {
		return now
	}
	sys, err := os.ReadFile("/proc/stat")
	if err != nil {
		return now
	}
	for line := range bytes.SplitSeq(sys, []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			boot, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
			if err != nil {
				return now
			}
			return boot + ticks/100
		}
	}
	return now
}
