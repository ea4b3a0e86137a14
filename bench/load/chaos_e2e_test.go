package load

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestChaosAndSoakAgainstTheDaemon runs a tiny chaos run (3 customers, 2
// kills right after a send) and a few seconds of soak against the real
// binaries: the kill, restart, resume and resend plumbing, and the soak's
// sampling (including /metrics behind its token).
func TestChaosAndSoakAgainstTheDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds and runs the silas and mockllm binaries and kills silas")
	}
	o := buildBinaries(t)
	var mu sync.Mutex
	var notes []string
	o.Note = func(s string) { mu.Lock(); notes = append(notes, s); mu.Unlock() }
	// noted counts the notes with one of prefixes, and forgets them all.
	noted := func(prefixes ...string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, note := range notes {
			for _, p := range prefixes {
				if strings.HasPrefix(note, p) {
					n++
				}
			}
		}
		notes = nil
		return n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("chaos", func(t *testing.T) {
		res, err := o.RunChaos(ctx, Chaos{Customers: 3, Kills: 2, Delay: 20 * time.Millisecond,
			MinGap: 300 * time.Millisecond, MaxGap: 600 * time.Millisecond, AfterSend: 1,
			Tail: 500 * time.Millisecond, Settle: 30 * time.Second, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Passed || res.Lost != 0 || res.Conflicts != 0 || res.NeverAcked != 0 {
			t.Errorf("promises broken: %v; lost %v, never acked %v", res.Failures(), res.LostTraces, res.NeverAckedIDs)
		}
		if res.Messages == 0 || res.Answered != res.Messages || res.Acked == 0 {
			t.Errorf("%d messages, %d acked, %d answered: want every message answered", res.Messages, res.Acked, res.Answered)
		}
		if res.ResumeFailures != 0 || res.Reconnects < 3*2 {
			t.Errorf("resume failures %d (%s), reconnects %d: want every customer to resume after each kill", res.ResumeFailures, res.ResumeError, res.Reconnects)
		}
		if len(res.Kills) != 2 || res.Server.Processes != 3 {
			t.Fatalf("kills %+v, processes %d: want 2 kills and 3 daemon processes", res.Kills, res.Server.Processes)
		}
		for _, k := range res.Kills {
			if k.Kind != KillAfterSend || k.Landed == "" || k.Landed == landedNoSuchRecord {
				t.Errorf("kill %+v: want it right after a known send", k)
			}
			if k.ReadyMS <= 0 || k.FirstAnswerMS < k.ReadyMS {
				t.Errorf("kill %+v: want a ready time, and the first answer after it", k)
			}
		}
		var md strings.Builder
		(&Report{Chaos: res}).writeChaos(&md)
		if !strings.Contains(md.String(), "**Passed:**") || strings.Count(md.String(), "after_send +") != 2 {
			t.Errorf("chaos markdown:\n%s", md.String())
		}
		if n := noted("chaos: kill "); n != 2 {
			t.Errorf("%d progress notes of kills, want one per kill", n)
		}
	})

	t.Run("soak", func(t *testing.T) {
		res, err := o.RunSoak(ctx, Soak{Customers: 2, Duration: 3 * time.Second, Probe: time.Second,
			Sample: time.Second, Delay: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if res.RateSource != "probe" || res.ProbeTurnsPerSecond <= 0 || res.Rate != round2(res.ProbeTurnsPerSecond/2) {
			t.Errorf("rate %v from %q, probe %v turns/s: want half the probe's", res.Rate, res.RateSource, res.ProbeTurnsPerSecond)
		}
		if res.ScrapeError != "" {
			t.Errorf("reading /metrics with the metrics token: %s", res.ScrapeError)
		}
		if len(res.Samples) != 3 {
			t.Fatalf("%d samples, want one a second for 3 s", len(res.Samples))
		}
		for _, s := range res.Samples {
			if s.RSSBytes <= 0 || s.RSSAnonBytes <= 0 || s.HeapBytes <= 0 || s.HeapGoalBytes <= 0 || s.Goroutines <= 0 || s.GoroutinesMax < s.Goroutines || s.OpenFDs <= 0 || s.BadgerBytes <= 0 || s.Turns <= 0 {
				t.Errorf("sample %+v: want every figure read", s)
			}
		}
		if res.Completed <= 0 || res.FailedTotal() != 0 {
			t.Errorf("completed %d, failed %v", res.Completed, res.Failed)
		}
		if n := noted("soak 1s/3s", "soak 2s/3s", "soak 3s/3s"); n != 3 {
			t.Errorf("%d progress notes of samples, want one per sample", n)
		}
	})
}
