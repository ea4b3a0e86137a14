package load

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// soakStats are the turns of a soak, shared by the customers: totals, and
// what happened since the last sample.
type soakStats struct {
	mu        sync.Mutex
	completed int64
	missed    int64
	failed    map[string]int
	// since the last sample
	turns, misses int64
	fails         int
	latencies     []time.Duration
}

func newSoakStats() *soakStats { return &soakStats{failed: map[string]int{}} }

func (s *soakStats) done(latency time.Duration) {
	s.mu.Lock()
	s.completed++
	s.turns++
	s.latencies = append(s.latencies, latency)
	s.mu.Unlock()
}

func (s *soakStats) fail(kind string) {
	s.mu.Lock()
	s.failed[kind]++
	s.fails++
	s.mu.Unlock()
}

func (s *soakStats) miss() {
	s.mu.Lock()
	s.missed++
	s.misses++
	s.mu.Unlock()
}

// interval returns what happened since the last call and starts anew.
func (s *soakStats) interval() (turns, misses int64, fails int, lat []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	turns, misses, fails, lat = s.turns, s.misses, s.fails, s.latencies
	s.turns, s.misses, s.fails, s.latencies = 0, 0, 0, nil
	return turns, misses, fails, lat
}

func (s *soakStats) total() (completed, missed int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.completed, s.missed
}

// paceTick is how often the pacer hands out the turns that fell due.
const paceTick = 10 * time.Millisecond

// pace hands out rate turns a second on tokens until ctx ends. A turn
// that falls due while every customer still waits for an answer (tokens
// is full) is counted as missed rather than queued, so a daemon that
// falls behind shows as missed turns instead of a growing backlog.
func pace(ctx context.Context, rate float64, tokens chan<- struct{}, st *soakStats) {
	t := time.NewTicker(paceTick)
	defer t.Stop()
	start := time.Now()
	var issued int64
	for {
		select {
		case now := <-t.C:
			due := int64(now.Sub(start).Seconds() * rate)
			for ; issued < due; issued++ {
				select {
				case tokens <- struct{}{}:
				default:
					st.miss()
				}
			}
		case <-ctx.Done():
			return
		}
	}
}

// runSoakCustomer sends a message for each token it takes and waits for
// its answer, until ctx ends or the connection does.
func runSoakCustomer(ctx context.Context, c *customer, id int, run string, tokens <-chan struct{}, timeout time.Duration, st *soakStats) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for i := 0; ; i++ {
		select {
		case <-tokens:
		case <-ctx.Done():
			return
		}
		msgID := fmt.Sprintf("%s-c%d-m%d", run, id, i)
		sent := time.Now()
		if err := c.send(msgID, messageText(id, i)); err != nil {
			st.fail(KindDisconnect)
			return
		}
		switch kind := awaitAnswer(ctx, c, msgID, timeout, timer); kind {
		case "":
			st.done(time.Since(sent))
		case KindCut:
			return // the soak ended under this turn; it is not a failure
		case KindDisconnect, KindTimeout:
			st.fail(kind)
			return
		default:
			st.fail(kind)
		}
	}
}

// awaitAnswer waits for the answer to msgID and returns "" when the model
// answered, or the kind of failure.
func awaitAnswer(ctx context.Context, c *customer, msgID string, timeout time.Duration, timer *time.Timer) string {
	timer.Reset(timeout)
	defer timer.Stop()
	for {
		select {
		case ev := <-c.events:
			switch {
			case ev.Type == "error":
				return "error:" + ev.Code
			case ev.Type == "message" && ev.ReplyTo == msgID:
				if !fromModel(ev.Text) {
					return KindNotModel
				}
				return ""
			}
		case <-c.gone:
			return KindDisconnect
		case <-timer.C:
			return KindTimeout
		case <-ctx.Done():
			return KindCut
		}
	}
}

// sampler reads the daemon's state at the end of each interval.
type sampler struct {
	srv   *server
	mc    *metricsClient
	dbDir string
	st    *soakStats
	// cpu and at are the daemon's CPU time and the time at the last
	// sample.
	cpu time.Duration
	at  time.Time
}

// sample is one SoakSample and the /metrics failure, if any.
type sample struct {
	SoakSample
	scrapeErr error
}

func (sm *sampler) begin() error {
	cpu, err := CPUTime(sm.srv.daemon.pid())
	if err != nil {
		return err
	}
	sm.cpu, sm.at = cpu, time.Now()
	sm.st.interval() // turns before the first sample belong to it
	return nil
}

// take samples the daemon; at is the time since the soak started.
func (sm *sampler) take(ctx context.Context, at time.Duration) (sample, error) {
	pid := sm.srv.daemon.pid()
	var s sample
	s.AtSeconds = seconds(at)
	turns, misses, fails, lat := sm.st.interval()
	now := time.Now()
	cpu, err := CPUTime(pid)
	if err != nil {
		return s, err
	}
	mem, err := ReadMemory(pid)
	if err != nil {
		return s, err
	}
	if s.OpenFDs, err = OpenFDs(pid); err != nil {
		return s, err
	}
	size, err := MeasureDir(sm.dbDir)
	if err != nil {
		return s, err
	}
	wall := now.Sub(sm.at)
	s.IntervalSeconds = seconds(wall)
	s.RSSBytes, s.Threads = mem.RSS, mem.Threads
	s.BadgerBytes, s.BadgerApparentBytes = size.Allocated, size.Apparent
	s.Turns, s.Missed, s.Failed = turns, misses, fails
	s.TurnsPerSecond = perSecond(int(turns), wall)
	s.ServerCores = usage(cpu-sm.cpu, wall).Cores
	if turns > 0 {
		s.CPUMSPerTurn = round2(float64(cpu-sm.cpu) / float64(time.Millisecond) / float64(turns))
	}
	p := Summarize(lat)
	s.LatencyP50MS, s.LatencyP99MS = p.P50, p.P99
	sm.cpu, sm.at = cpu, now
	s.RSSAnonBytes, s.RSSFileBytes = mem.Anon, mem.File
	s.scrapeErr = sm.scrape(ctx, &s.SoakSample)
	return s, nil
}

// scrape reads go_goroutines and the heap figures from /metrics a few
// times, a moment apart, and keeps the lowest and highest goroutine counts
// and the lowest heap; goroutines are -1 when /metrics cannot be read.
func (sm *sampler) scrape(ctx context.Context, s *SoakSample) error {
	s.Goroutines, s.GoroutinesMax = -1, -1
	for i := range goroutineReads {
		if i > 0 {
			if err := wait(ctx, goroutineGap); err != nil {
				return err
			}
		}
		v, err := sm.mc.gauges(ctx, sm.srv.addr, "go_goroutines", "go_memstats_heap_alloc_bytes", "go_memstats_next_gc_bytes")
		if err != nil {
			s.Goroutines, s.GoroutinesMax = -1, -1
			return err
		}
		n, heap := int(v[0]), int64(v[1])
		if s.Goroutines < 0 || n < s.Goroutines {
			s.Goroutines = n
		}
		s.GoroutinesMax = max(s.GoroutinesMax, n)
		if s.HeapBytes == 0 || heap < s.HeapBytes {
			s.HeapBytes = heap
		}
		s.HeapGoalBytes = int64(v[2])
	}
	return nil
}
