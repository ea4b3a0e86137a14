package load

import (
	"strings"
	"testing"
	"time"
)

// chaosClock builds message lives on a clock in milliseconds since t0.
type chaosClock struct{ t0 time.Time }

func (c chaosClock) at(msec int) time.Time {
	if msec < 0 {
		return time.Time{}
	}
	return c.t0.Add(time.Duration(msec) * time.Millisecond)
}

// msg is a message first sent at sent, acked at acked and answered at
// answered (-1: never), with the given answer text.
func (c chaosClock) msg(id string, sent, acked, answered int, text string) *chaosMsg {
	m := &chaosMsg{id: id, firstSent: c.at(sent), lastSent: c.at(sent), sends: 1, ackedAt: c.at(acked)}
	if answered >= 0 {
		m.answeredAt, m.answerText = c.at(answered), text
		m.answer = []byte(`{"type":"message","text":"` + text + `","reply_to":"` + id + `"}`)
	}
	return m
}

func ledgerOf(ms ...*chaosMsg) *chaosLedger {
	l := newChaosLedger(0)
	for _, m := range ms {
		l.msgs[m.id] = m
		l.order = append(l.order, m)
	}
	return l
}

func TestSummarizeChaos(t *testing.T) {
	c := chaosClock{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	kill := func(at, ready, first int) killEvent {
		return killEvent{at: c.at(at), kind: KillRandom, ready: c.at(ready), first: c.at(first)}
	}
	for _, tc := range []struct {
		name    string
		ledgers func() []*chaosLedger
		kills   []killEvent
		check   func(t *testing.T, r *ChaosResult)
	}{
		{
			name: "every message answered once passes",
			ledgers: func() []*chaosLedger {
				return []*chaosLedger{ledgerOf(c.msg("a", 0, 2, 50, "Echo: a"), c.msg("b", 60, 62, 110, "Echo: b")), nil}
			},
			check: func(t *testing.T, r *ChaosResult) {
				if !r.Passed || r.Messages != 2 || r.Answered != 2 || r.Acked != 2 || r.Lost != 0 || r.TurnsPerSecond != 2 {
					t.Errorf("result %+v", r)
				}
			},
		},
		{
			name: "an acked message never answered is lost and listed with its trace",
			ledgers: func() []*chaosLedger {
				return []*chaosLedger{ledgerOf(c.msg("a", 0, 2, -1, ""), c.msg("b", 0, -1, -1, ""))}
			},
			kills: []killEvent{kill(10, 100, 150)},
			check: func(t *testing.T, r *ChaosResult) {
				if r.Passed || r.Lost != 1 || r.NeverAcked != 1 || len(r.LostIDs) != 1 || r.LostIDs[0] != "a" || r.NeverAckedIDs[0] != "b" {
					t.Fatalf("result %+v", r)
				}
				tr := r.LostTraces[0]
				if tr.AckedAt != 0.002 || len(tr.KillsAfterAck) != 1 || tr.FirstKillAt != 0.01 {
					t.Errorf("trace %+v", tr)
				}
				if r.Kills[0].RecoveredMS != -1 || r.Kills[0].AckedOpen != 1 || r.Kills[0].InFlight != 1 {
					t.Errorf("kill %+v: an acked message never answered leaves the kill unrecovered", r.Kills[0])
				}
				if fs := r.Failures(); len(fs) != 1 || !strings.Contains(fs[0], "never answered") {
					t.Errorf("failures %q", fs)
				}
			},
		},
		{
			name: "a copy with the same bytes is a redelivery, with other bytes a conflict",
			ledgers: func() []*chaosLedger {
				same := c.msg("a", 0, 2, 50, "Echo: a")
				same.redelivered = []int{1, 1}
				differs := c.msg("b", 0, 2, 50, "Echo: b")
				differs.conflicts = [][]byte{[]byte(`{"type":"message","text":"Echo: b","reply_to":"b","timestamp":"later"}`),
					[]byte(`{"type":"message","text":"something else","reply_to":"b"}`)}
				return []*chaosLedger{ledgerOf(same, differs)}
			},
			kills: []killEvent{kill(60, 120, 150)},
			check: func(t *testing.T, r *ChaosResult) {
				if r.Passed || r.Redelivered != 2 || r.Conflicts != 2 || r.TextConflicts != 1 || r.Conflict == nil || r.Conflict.MessageID != "b" {
					t.Errorf("result %+v", r)
				}
				if r.Kills[0].Redelivered != 2 {
					t.Errorf("kill %+v: want the two copies delivered by the daemon started after it", r.Kills[0])
				}
			},
		},
		{
			name: "an answer to a message never sent fails the run",
			ledgers: func() []*chaosLedger {
				l := ledgerOf(c.msg("a", 0, 2, 50, "Echo: a"))
				l.unexpected = 1
				return []*chaosLedger{l}
			},
			check: func(t *testing.T, r *ChaosResult) {
				if r.Passed || r.Unexpected != 1 {
					t.Errorf("result %+v", r)
				}
			},
		},
		{
			name: "recovery times, what was open at each kill and where an after-send kill landed",
			ledgers: func() []*chaosLedger {
				return []*chaosLedger{ledgerOf(
					c.msg("a", 0, 5, 400, "Echo: a"),   // acked before kill 1, answered after: open
					c.msg("b", 90, -1, 420, "Echo: b"), // sent, not acked at kill 1: in flight
					c.msg("c", 500, 505, 510, "Echo: c"),
					c.msg("d", 900, 903, 1300, "Sorry"), // the trigger of kill 2, acked before it
				)}
			},
			kills: []killEvent{kill(100, 250, 380),
				{at: c.at(910), kind: KillAfterSend, afterSend: 10 * time.Millisecond, trigger: "d", ready: c.at(1100), first: c.at(1300)}},
			check: func(t *testing.T, r *ChaosResult) {
				k1, k2 := r.Kills[0], r.Kills[1]
				if k1.AckedOpen != 1 || k1.InFlight != 1 || k1.ReadyMS != 150 || k1.FirstAnswerMS != 280 || k1.RecoveredMS != 300 || k1.AtSeconds != 0.1 {
					t.Errorf("kill 1 %+v", k1)
				}
				if k2.Landed != LandedAckNoAnswer || k2.AfterSendMS != 10 || k2.AckedOpen != 1 || k2.RecoveredMS != 390 {
					t.Errorf("kill 2 %+v", k2)
				}
				if r.Recovery.Ready.Max != 190 || r.Recovery.FirstAnswer.P50 != 280 || r.Recovery.Recovered.Max != 390 {
					t.Errorf("recovery %+v", r.Recovery)
				}
				if r.NotFromModel != 1 || r.AnsweredWithoutAck != 1 || !r.Passed {
					t.Errorf("result %+v", r)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &ChaosResult{}
			summarizeChaos(r, tc.ledgers(), tc.kills, c.t0, c.at(1000))
			tc.check(t, r)
		})
	}
}

func TestLanded(t *testing.T) {
	c := chaosClock{t0: time.Now()}
	for _, tc := range []struct {
		m    *chaosMsg
		kill int
		want string
	}{
		{nil, 10, landedNoSuchRecord},
		{c.msg("a", 0, -1, -1, ""), 10, LandedBeforeAck},
		{c.msg("a", 0, 20, 60, "Echo: a"), 10, LandedBeforeAck},
		{c.msg("a", 0, 5, 60, "Echo: a"), 10, LandedAckNoAnswer},
		{c.msg("a", 0, 5, 8, "Echo: a"), 10, LandedAfterAnswer},
	} {
		if got := landed(tc.m, c.at(tc.kill)); got != tc.want {
			t.Errorf("landed(%+v, %d) = %s, want %s", tc.m, tc.kill, got, tc.want)
		}
	}
}

func TestChaosTargets(t *testing.T) {
	kills := make([]KillResult, 3)
	for _, tc := range []struct {
		r    ChaosResult
		want []bool
	}{
		{ChaosResult{Acked: 10, Redelivered: 3, Kills: kills}, []bool{true, true, true}},
		{ChaosResult{Acked: 10, Lost: 1, Conflicts: 1, Redelivered: 4, Kills: kills}, []bool{false, false, false}},
		{ChaosResult{Kills: kills}, []bool{false, true, true}}, // nothing acked proves nothing
	} {
		ts := chaosTargets(&tc.r)
		if len(ts) != len(tc.want) {
			t.Fatalf("%d targets", len(ts))
		}
		for i, tg := range ts {
			if tg.Met != tc.want[i] {
				t.Errorf("%+v: target %q met = %v, want %v", tc.r, tg.Name, tg.Met, tc.want[i])
			}
		}
	}
	if chaosTargets(nil) != nil {
		t.Error("targets without a chaos run")
	}
}
