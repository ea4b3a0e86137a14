package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// Chaos is a scenario that kills silas with SIGKILL while customers talk
// to it, restarts it on the same data directory each time, and checks what
// the customers saw against the daemon's promises: an acknowledged message
// is answered, even across a crash; a turn is answered once, and an answer
// delivered again carries the same reply_to and bytes; a customer who
// reconnects resumes its own session with its token.
type Chaos struct {
	Customers int
	Kills     int
	// Delay is the mock model's answer delay: the window between a
	// message's ack and its answer that a kill can fall into. Zero
	// answers at once.
	Delay time.Duration
	// Window is how many unanswered messages each customer keeps in
	// flight; zero means 2.
	Window int
	// MinGap and MaxGap bound the random time the daemon runs between
	// being ready and being killed; zero means 1 s and 3 s.
	MinGap, MaxGap time.Duration
	// AfterSend is the share of kills that strike right after a customer
	// sent a new message: a third of them at once, the others after a
	// random pause of up to the model delay plus 10 ms. Zero means half,
	// negative none.
	AfterSend float64
	// Tail is how long the load goes on after the last restart; zero
	// means 3 s.
	Tail time.Duration
	// Settle bounds the wait for the last answers once customers stop
	// sending; zero means 60 s. What is unanswered then is lost.
	Settle time.Duration
	// Seed makes the kill times and kinds reproducible; zero picks one
	// from the clock (the result records it).
	Seed int64
}

func (ch Chaos) withDefaults() Chaos {
	if ch.Window <= 0 {
		ch.Window = 2
	}
	if ch.MinGap <= 0 {
		ch.MinGap = time.Second
	}
	if ch.MaxGap <= 0 {
		ch.MaxGap = 3 * time.Second
	}
	if ch.MaxGap < ch.MinGap {
		ch.MaxGap = ch.MinGap
	}
	switch {
	case ch.AfterSend == 0:
		ch.AfterSend = 0.5
	case ch.AfterSend < 0:
		ch.AfterSend = 0
	}
	if ch.Tail <= 0 {
		ch.Tail = 3 * time.Second
	}
	if ch.Settle <= 0 {
		ch.Settle = time.Minute
	}
	if ch.Seed == 0 {
		ch.Seed = time.Now().UnixNano()
	}
	return ch
}

func (ch Chaos) validate() error {
	if ch.Customers < 1 || ch.Kills < 1 {
		return fmt.Errorf("chaos scenario: want at least one customer and one kill, got %d and %d", ch.Customers, ch.Kills)
	}
	if ch.Delay < 0 {
		return fmt.Errorf("chaos scenario: the model delay must not be negative")
	}
	return nil
}

// chaosResendAfter is how long a customer waits for an ack before sending
// the same message again on the same connection.
const chaosResendAfter = 2 * time.Second

// afterSendWait bounds the wait for a customer's send before an after_send
// kill falls back to a random one.
const afterSendWait = 5 * time.Second

// RunChaos runs the chaos scenario against fresh silas and mock processes.
// It returns the result even when a promise was broken (see
// [ChaosResult.Passed]); an error means the scenario could not run to the
// end.
func (o Options) RunChaos(ctx context.Context, ch Chaos) (*ChaosResult, error) {
	if err := ch.validate(); err != nil {
		return nil, err
	}
	ch = ch.withDefaults()
	if err := EnsureFiles(ch.Customers); err != nil {
		return nil, err
	}
	srv, err := o.startServer(DaemonSilas, "chaos", ch.Delay)
	if err != nil {
		return nil, fmt.Errorf("chaos scenario: %w", err)
	}
	res := &ChaosResult{Customers: ch.Customers, KillsPlanned: ch.Kills, Window: ch.Window, DelayMS: ms(ch.Delay), Seed: ch.Seed}
	c := &chaosRun{o: o, ch: ch, srv: srv, hub: newChaosHub(srv.addr, ch.Kills),
		rng: rand.New(rand.NewPCG(uint64(ch.Seed), 0x5eed)), processes: 1}
	if err := c.run(ctx, res); err != nil {
		srv.abort()
		return res, fmt.Errorf("chaos scenario: %w", err)
	}
	st, err := srv.stop()
	res.Mock = st.mock
	res.Server = ChaosServerLogs{Processes: c.processes, LogLines: c.logLines + st.warnings}
	if err != nil {
		return res, fmt.Errorf("chaos scenario: %w", err)
	}
	return res, nil
}

// chaosRun is one run of the chaos scenario.
type chaosRun struct {
	o   Options
	ch  Chaos
	srv *server
	hub *chaosHub
	rng *rand.Rand
	// logLines counts stderr lines of the killed processes; processes the
	// daemon processes started.
	logLines, processes int
}

func (c *chaosRun) run(ctx context.Context, res *ChaosResult) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := chaosPlan{run: strconv.FormatInt(time.Now().UnixNano(), 36), window: c.ch.Window,
		resendAfter: chaosResendAfter, bufSize: loadBufSize}
	ledgers := make([]*chaosLedger, c.ch.Customers)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range ledgers {
		ledgers[i] = newChaosLedger(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			runChaosCustomer(runCtx, c.hub, ledgers[i], p)
		}()
	}
	c.o.note("chaos: %d customers talking to silas (model %s, seed %d); %d kills to come", c.ch.Customers, c.ch.Delay, c.ch.Seed, c.ch.Kills)
	kills, err := c.killLoop(ctx, start)
	if err == nil {
		err = wait(ctx, c.ch.Tail)
	}
	c.hub.stopSending()
	settled := make(chan struct{})
	go func() { wg.Wait(); close(settled) }()
	if err == nil {
		c.o.note("chaos: customers stop sending; waiting up to %s for every answer", c.ch.Settle)
		t := time.NewTimer(c.ch.Settle)
		select {
		case <-settled:
		case <-t.C:
			c.o.note("chaos: settle time over with answers missing")
		case <-ctx.Done():
			err = ctx.Err()
		}
		t.Stop()
	}
	cancel()
	<-settled
	end := time.Now()
	for i := range kills {
		kills[i].first = c.hub.firstAnswerAt(i + 1)
	}
	summarizeChaos(res, ledgers, kills, start, end)
	if err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	c.o.note("chaos: %d kills, %d messages, %d answered, %d acked lost, %d answered twice differently, %d redelivered",
		len(res.Kills), res.Messages, res.Answered, res.Lost, res.Conflicts, res.Redelivered)
	return nil
}

// killLoop kills and restarts the daemon ch.Kills times, each after a
// random time up.
func (c *chaosRun) killLoop(ctx context.Context, start time.Time) ([]killEvent, error) {
	var kills []killEvent
	for n := 1; n <= c.ch.Kills; n++ {
		gap := c.ch.MinGap + time.Duration(c.rng.Int64N(int64(c.ch.MaxGap-c.ch.MinGap)+1))
		afterSend := c.rng.Float64() < c.ch.AfterSend
		jitter := time.Duration(c.rng.Int64N(int64(c.ch.Delay + 10*time.Millisecond)))
		if c.rng.IntN(3) == 0 {
			jitter = 0 // at once: the message may not even be read yet
		}
		if err := wait(ctx, gap); err != nil {
			return kills, err
		}
		k := killEvent{kind: KillRandom}
		if afterSend {
			if id, ok := c.awaitSend(ctx); ok {
				k.kind, k.trigger, k.afterSend = KillAfterSend, id, jitter
				if err := wait(ctx, jitter); err != nil {
					return kills, err
				}
			}
		}
		c.hub.down()
		k.at = time.Now()
		c.srv.daemon.kill()
		c.logLines += c.srv.daemon.stderr.Lines()
		if err := c.srv.startSilas(c.o, "chaos"); err != nil {
			return kills, fmt.Errorf("restart %d: %w", n, err)
		}
		c.processes++
		k.ready = time.Now()
		c.hub.ready(c.srv.addr)
		kills = append(kills, k)
		how := "at a random moment"
		if k.kind == KillAfterSend {
			how = fmt.Sprintf("%.0f ms after %s was sent", ms(k.afterSend), k.trigger)
		}
		c.o.note("chaos: kill %d/%d at %.1fs, %s; ready again after %.0f ms; %d answers so far",
			n, c.ch.Kills, k.at.Sub(start).Seconds(), how, ms(k.ready.Sub(k.at)), c.hub.answers.Load())
	}
	return kills, nil
}

// awaitSend waits for a customer to send a new message and returns its
// id; false when none was sent within afterSendWait.
func (c *chaosRun) awaitSend(ctx context.Context) (string, bool) {
	ch := c.hub.arm()
	t := time.NewTimer(afterSendWait)
	defer t.Stop()
	select {
	case id := <-ch:
		return id, true
	case <-t.C:
	case <-ctx.Done():
	}
	c.hub.disarm()
	select {
	case id := <-ch: // fired while disarming
		return id, true
	default:
		return "", false
	}
}
