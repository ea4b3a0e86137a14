package load

import (
	"context"
	"fmt"
	"time"
)

// Idle is a scenario of Customers customers that connect and send nothing.
type Idle struct {
	Customers int
	// Settle is how long silas idles after ready before its RSS is read
	// (before the customers connect); zero means one second.
	Settle time.Duration
}

// idleBufSize is the socket buffer size of idle customers: the driver holds
// thousands of them and should stay small.
const idleBufSize = 512

// idleDelay is the model delay of the idle scenario's probe turn.
const idleDelay = 50 * time.Millisecond

// RunIdle connects the idle customers to fresh silas and mock processes and
// measures the RSS they cost; one probe turn checks silas still answers.
func (o Options) RunIdle(ctx context.Context, s Idle) (*IdleResult, error) {
	if s.Customers < 1 {
		return nil, fmt.Errorf("idle scenario: want at least one customer, got %d", s.Customers)
	}
	if s.Settle <= 0 {
		s.Settle = time.Second
	}
	if err := EnsureFiles(s.Customers); err != nil {
		return nil, err
	}
	srv, err := o.startServer(DaemonSilas, "idle", idleDelay)
	if err != nil {
		return nil, fmt.Errorf("idle scenario: %w", err)
	}
	res, err := o.measureIdle(ctx, srv, s)
	if err != nil {
		srv.abort()
		return nil, fmt.Errorf("idle scenario: %w", err)
	}
	if _, err := srv.stop(); err != nil {
		return res, fmt.Errorf("idle scenario: %w", err)
	}
	return res, nil
}

func (o Options) measureIdle(ctx context.Context, srv *server, s Idle) (*IdleResult, error) {
	if err := wait(ctx, s.Settle); err != nil {
		return nil, err
	}
	pid := srv.daemon.pid()
	memBefore, err := ReadMemory(pid)
	if err != nil {
		return nil, err
	}
	cpuBefore, err := CPUTime(pid)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var n counters
	stopProgress := o.reportProgress("idle (connecting)", int64(s.Customers), start, &n)
	cs, failed, connErr := connectAll(ctx, srv.addr, s.Customers, idleBufSize, &n)
	stopProgress()
	defer closeAll(cs)
	res := &IdleResult{Customers: s.Customers, ConnectFailed: failed, ConnectSeconds: seconds(time.Since(start))}
	res.Connected = s.Customers - failed
	if res.Connected == 0 {
		return nil, fmt.Errorf("no customer could connect: %w", connErr)
	}
	memAfter, err := ReadMemory(pid)
	if err != nil {
		return nil, err
	}
	cpuAfter, err := CPUTime(pid)
	if err != nil {
		return nil, err
	}
	res.RSSBeforeBytes, res.RSSAfterBytes = memBefore.RSS, memAfter.RSS
	res.RSSPerCustomerBytes = float64(memAfter.RSS-memBefore.RSS) / float64(res.Connected)
	res.ServerCPUSeconds = seconds(cpuAfter - cpuBefore)
	res.Threads = memAfter.Threads
	res.ProbeMS, res.ProbeError = probe(ctx, cs)
	return res, nil
}

// probe sends one message from the first connected customer and returns
// the latency of its answer, or why there was none.
func probe(ctx context.Context, cs []*customer) (float64, string) {
	for i, c := range cs {
		if c == nil {
			continue
		}
		cv := newConversation(i, 1)
		var n counters
		cv.run(ctx, c, plan{messages: 1, turnTimeout: 30 * time.Second, run: "probe"}, &n)
		if n.completed.Load() == 1 {
			return ms(cv.latencies[0]), ""
		}
		for kind := range cv.failed {
			return 0, kind
		}
	}
	return 0, "no connected customer"
}

// wait pauses for d unless ctx ends first.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
