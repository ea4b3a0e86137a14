package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"time"
)

// Load is a scenario of Customers customers each sending Messages messages,
// one at a time, to a model that answers after Delay.
type Load struct {
	// Name labels the scenario in progress lines, reports and profile names.
	Name      string
	Customers int
	Messages  int
	// Delay is the mock model's answer delay; zero answers at once.
	Delay time.Duration
	// Think is the pause between an answer and the customer's next message.
	Think time.Duration
	// TurnTimeout is how long a customer waits for one answer; zero means
	// 30 s.
	TurnTimeout time.Duration
	// DurationLimit bounds the sending phase; zero means 5 minutes. Turns in
	// flight when it ends count as cut.
	DurationLimit time.Duration
	// Daemon is the server driven; empty means silas.
	Daemon Daemon
	// Run numbers repeated runs of the same scenario from 1; zero means a
	// single run. It labels progress lines and profile names.
	Run int
}

// daemon is the server driven.
func (l Load) daemon() Daemon {
	if l.Daemon == "" {
		return DaemonSilas
	}
	return l.Daemon
}

// label names one run of the scenario in progress lines and profile names,
// e.g. "n50", "n50 baseline", "n50 silas #2".
func (l Load) label() string {
	s := l.Name
	if l.Daemon != "" {
		s += " " + string(l.Daemon)
	}
	if l.Run > 0 {
		s += fmt.Sprintf(" #%d", l.Run)
	}
	return s
}

// Progress is a snapshot of a running scenario.
type Progress struct {
	Scenario  string
	Completed int64
	Failed    int64
	Total     int64
	Elapsed   time.Duration
	// Rate is completed per second over the last interval, or over the whole
	// phase when Final.
	Rate float64
	// Final marks the last report of a phase.
	Final bool
}

// drainGrace is how long customers keep listening after the last answer, so
// that a late duplicate answer is still counted.
const drainGrace = 500 * time.Millisecond

// loadBufSize is the socket buffer size of chatting customers: a message
// and its answer fit.
const loadBufSize = 4096

// dialConcurrency bounds handshakes in flight, below the listen backlog.
const dialConcurrency = 64

func (l Load) validate() error {
	if l.Customers < 1 || l.Messages < 1 {
		return fmt.Errorf("load scenario %q: want at least one customer and one message, got %d and %d", l.Name, l.Customers, l.Messages)
	}
	if l.Delay < 0 || l.Think < 0 {
		return fmt.Errorf("load scenario %q: delay and think time must not be negative", l.Name)
	}
	return nil
}

// RunLoad runs a load scenario against fresh daemon (l.Daemon) and mock
// processes.
func (o Options) RunLoad(ctx context.Context, l Load) (res *LoadResult, err error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	if l.TurnTimeout <= 0 {
		l.TurnTimeout = 30 * time.Second
	}
	if l.DurationLimit <= 0 {
		l.DurationLimit = 5 * time.Minute
	}
	if err := EnsureFiles(l.Customers); err != nil {
		return nil, err
	}
	profileName := l.Name
	if l.Run > 1 {
		profileName += fmt.Sprintf("-run%d", l.Run)
	}
	srv, err := o.startServer(l.daemon(), profileName, l.Delay)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", l.label(), err)
	}
	res = &LoadResult{
		Name: l.Name, Daemon: l.daemon(), Run: l.Run, Customers: l.Customers, MessagesEach: l.Messages,
		DelayMS: ms(l.Delay), ThinkMS: ms(l.Think), Planned: l.Customers * l.Messages,
		Failed: map[string]int{},
	}
	res.Server.StartToReadyMS = ms(srv.startToReady)
	if err := o.drive(ctx, srv, l, res); err != nil {
		srv.abort()
		return nil, fmt.Errorf("scenario %s: %w", l.label(), err)
	}
	st, err := srv.stop()
	res.Mock.MockStats = st.mock
	if res.Completed > 0 {
		res.Mock.CallsPerTurn = round2(float64(st.mock.Requests) / float64(res.Completed))
	}
	res.Server.LogLines = st.warnings
	res.Server.Profiles, res.Server.MissingProfiles = srv.profiles, st.missingProfiles
	if err != nil {
		return res, fmt.Errorf("scenario %s: %w", l.label(), err)
	}
	return res, nil
}

// drive connects the customers, runs the conversations and fills res.
func (o Options) drive(ctx context.Context, srv *server, l Load, res *LoadResult) error {
	connStart := time.Now()
	var cn counters
	stopProgress := o.reportProgress(l.label()+" (connecting)", int64(l.Customers), connStart, &cn)
	customers, failed, connErr := connectAll(ctx, srv.addr, l.Customers, loadBufSize, &cn)
	stopProgress()
	defer closeAll(customers)
	res.ConnectSeconds = seconds(time.Since(connStart))
	if failed == l.Customers {
		return fmt.Errorf("no customer could connect: %w", connErr)
	}
	if failed > 0 {
		res.Failed[KindConnect] = failed * l.Messages
		res.ConnectError = connErr.Error()
	}
	before, err := snapshot(srv)
	if err != nil {
		return err
	}

	runCtx, cancel := context.WithTimeout(ctx, l.DurationLimit)
	defer cancel()
	p := plan{messages: l.Messages, think: l.Think, turnTimeout: l.TurnTimeout,
		run: strconv.FormatInt(time.Now().UnixNano(), 36)}
	var n counters
	var sending, all sync.WaitGroup
	drain := make(chan struct{})
	convs := make([]*conversation, len(customers))
	start := time.Now()
	for i, c := range customers {
		if c == nil {
			continue
		}
		sending.Add(1)
		all.Add(1)
		go func() {
			defer all.Done()
			cv := talk(runCtx, c, i, p, &n)
			sending.Done()
			cv.drain(c, drain)
			convs[i] = cv
		}()
	}
	stopProgress = o.reportProgress(l.label(), int64(res.Planned), start, &n)
	sending.Wait()
	elapsed := time.Since(start)
	stopProgress()
	res.LimitHit = runCtx.Err() != nil && ctx.Err() == nil
	after, err := snapshot(srv)
	if err != nil {
		return err
	}
	time.AfterFunc(drainGrace, func() { close(drain) })
	all.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	res.fill(convs, l.Delay, elapsed, before, after)
	return nil
}

// fill computes the client and server figures.
func (r *LoadResult) fill(convs []*conversation, delay, elapsed time.Duration, before, after usageSnapshot) {
	var lat []time.Duration
	for _, cv := range convs {
		if cv == nil {
			continue
		}
		for k, v := range cv.failed {
			r.Failed[k] += v
		}
		r.Integrity.add(cv.integrity())
		if cv.disconnect != nil && r.DisconnectError == "" {
			r.DisconnectError = cv.disconnect.Error()
		}
		lat = append(lat, cv.latencies...)
	}
	r.Completed = len(lat)
	r.WallSeconds = seconds(elapsed)
	r.TurnsPerSecond = perSecond(r.Completed, elapsed)
	r.Latency = Summarize(lat)
	r.Overhead = Summarize(Overheads(lat, delay))
	r.Server.Usage = usage(after.daemon-before.daemon, elapsed)
	if r.Completed > 0 {
		r.Server.CPUMSPerTurn = round2(float64(after.daemon-before.daemon) / float64(time.Millisecond) / float64(r.Completed))
	}
	r.Server.PeakRSSBytes = after.mem.Peak
	r.Server.Threads = after.mem.Threads
	r.Mock.Usage = usage(after.mock-before.mock, elapsed)
	r.Driver = usage(after.self-before.self, elapsed)
	ours := (after.daemon - before.daemon) + (after.mock - before.mock) + (after.self - before.self)
	r.Other = usage(max(0, after.machine-before.machine-ours), elapsed)
}

// usageSnapshot is the CPU time of the three processes and of the whole
// machine, and the daemon's memory.
type usageSnapshot struct {
	daemon, mock, self, machine time.Duration
	mem                         Memory
}

func snapshot(srv *server) (usageSnapshot, error) {
	var s usageSnapshot
	var errs [5]error
	s.daemon, errs[0] = CPUTime(srv.daemon.pid())
	s.mock, errs[1] = CPUTime(srv.mock.pid())
	s.self, errs[2] = CPUTime(os.Getpid())
	s.machine, errs[3] = MachineBusy()
	s.mem, errs[4] = ReadMemory(srv.daemon.pid())
	return s, errors.Join(errs[:]...)
}

func usage(cpu, wall time.Duration) Usage {
	u := Usage{CPUSeconds: seconds(cpu)}
	if wall > 0 {
		u.Cores = round2(cpu.Seconds() / wall.Seconds())
	}
	return u
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// talk runs one customer's conversation up to the drain.
func talk(ctx context.Context, c *customer, id int, p plan, n *counters) *conversation {
	cv := newConversation(id, p.messages)
	cv.run(ctx, c, p, n)
	return cv
}
