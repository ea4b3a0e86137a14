package load

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// Kill kinds of the chaos scenario.
const (
	// KillRandom strikes at a random moment of the load.
	KillRandom = "random"
	// KillAfterSend strikes a few milliseconds after a customer sent a new
	// message: before its ack, between its ack and its answer, or (rarely)
	// after the answer.
	KillAfterSend = "after_send"
)

// Where an after-send kill landed, as the customer who sent saw it.
const (
	LandedBeforeAck    = "before_ack"
	LandedAckNoAnswer  = "between_ack_and_answer"
	LandedAfterAnswer  = "after_answer"
	landedNoSuchRecord = "unknown"
)

// ChaosResult is what a [Chaos] scenario saw.
type ChaosResult struct {
	Customers    int     `json:"customers"`
	KillsPlanned int     `json:"kills_planned"`
	Window       int     `json:"window"`
	DelayMS      float64 `json:"model_delay_ms"`
	Seed         int64   `json:"seed"`
	WallSeconds  float64 `json:"wall_seconds"`

	// Messages counts distinct messages sent; Sends every frame sent,
	// resends with the same message_id included.
	Messages int `json:"messages"`
	Sends    int `json:"sends"`
	// Acked counts messages acknowledged; Answered those answered;
	// AnsweredWithoutAck those answered whose ack never arrived (a resend
	// to a restarted daemon that was already running the turn).
	Acked              int `json:"acked"`
	Answered           int `json:"answered"`
	AnsweredWithoutAck int `json:"answered_without_ack"`
	// NotFromModel counts first answers that are not the mock's echo (the
	// daemon's apology for a failed turn).
	NotFromModel   int     `json:"answers_not_from_model"`
	TurnsPerSecond float64 `json:"turns_per_second"`

	// Lost counts acknowledged messages never answered: a broken promise.
	Lost int `json:"acked_lost"`
	// NeverAcked counts messages neither acknowledged nor answered by the
	// end, although resent after every reconnect.
	NeverAcked int `json:"unanswered_never_acked"`
	// Conflicts counts copies of an answer whose bytes differ from the
	// first copy with the same reply_to: a turn answered twice
	// differently. TextConflicts is the part whose text differs too.
	Conflicts     int `json:"answered_twice_differently"`
	TextConflicts int `json:"answered_twice_different_text"`
	// Redelivered counts copies of an answer with the same reply_to and the
	// same bytes as the first: allowed (at least once), clients drop them.
	Redelivered int `json:"answers_redelivered"`
	// Unexpected counts acks and answers naming a message the customer
	// never sent.
	Unexpected int `json:"unexpected_events"`

	Errors          map[string]int `json:"errors"`
	Reconnects      int            `json:"reconnects"`
	ConnectFailures int            `json:"connect_failures"`
	ResumeFailures  int            `json:"resume_failures"`
	ResumeError     string         `json:"resume_error,omitempty"`
	// LostIDs and NeverAckedIDs name up to ten such messages, to look up in
	// the daemon's log and store.
	LostIDs []string `json:"lost_ids,omitempty"`
	// LostTraces tell the life of up to ten lost messages as the customer
	// saw it, against the kills: what to look for in the daemon's store.
	LostTraces    []ChaosTrace    `json:"lost_traces,omitempty"`
	NeverAckedIDs []string        `json:"never_acked_ids,omitempty"`
	Conflict      *ChaosConflict  `json:"conflict_example,omitempty"`
	Kills         []KillResult    `json:"kills"`
	Recovery      ChaosRecovery   `json:"recovery"`
	Server        ChaosServerLogs `json:"server"`
	Mock          MockStats       `json:"mock"`
	// Passed is Lost == 0, Conflicts == 0 and Unexpected == 0.
	Passed bool `json:"passed"`
}

// ChaosTrace is the life of one message as its customer saw it, in
// seconds since the scenario started.
type ChaosTrace struct {
	MessageID   string  `json:"message_id"`
	FirstSentAt float64 `json:"first_sent_at"`
	LastSentAt  float64 `json:"last_sent_at"`
	Sends       int     `json:"sends"`
	AckedAt     float64 `json:"acked_at"`
	// KillsAfterAck are the kills (numbered from 1) after its ack, with
	// the first one's time.
	KillsAfterAck []int   `json:"kills_after_ack"`
	FirstKillAt   float64 `json:"first_kill_after_ack_at,omitempty"`
}

// ChaosConflict is one answer that came twice with different bytes.
type ChaosConflict struct {
	MessageID string `json:"message_id"`
	First     string `json:"first"`
	Again     string `json:"again"`
}

// ChaosServerLogs counts what the daemon's processes wrote to stderr
// (warnings and errors: silas logs at level warn), over every restart.
type ChaosServerLogs struct {
	Processes int `json:"processes"`
	LogLines  int `json:"log_lines"`
}

// ChaosRecovery summarizes the recovery times of every kill.
type ChaosRecovery struct {
	// Ready is from the kill to the restarted daemon's ready line;
	// FirstAnswer from the kill to the first new answer a customer
	// received from it; Recovered from the kill to the answer of the last
	// message that was acknowledged and unanswered at the kill.
	Ready       Percentiles `json:"kill_to_ready"`
	FirstAnswer Percentiles `json:"kill_to_first_answer"`
	Recovered   Percentiles `json:"kill_to_acked_answered"`
}

// KillResult is one kill and the restart after it.
type KillResult struct {
	N         int     `json:"n"`
	AtSeconds float64 `json:"at_seconds"`
	Kind      string  `json:"kind"`
	// AfterSendMS is the pause between the send and the kill; Landed where
	// the kill fell in that message's life (after_send kills only).
	AfterSendMS float64 `json:"after_send_ms,omitempty"`
	Landed      string  `json:"landed,omitempty"`
	// InFlight counts messages sent and neither acknowledged nor answered
	// at the kill; AckedOpen those acknowledged and not yet answered: the
	// promises the restart has to keep.
	InFlight  int `json:"in_flight"`
	AckedOpen int `json:"acked_unanswered"`
	// ReadyMS, FirstAnswerMS and RecoveredMS: see [ChaosRecovery]; -1 when
	// it did not happen.
	ReadyMS       float64 `json:"kill_to_ready_ms"`
	FirstAnswerMS float64 `json:"kill_to_first_answer_ms"`
	RecoveredMS   float64 `json:"kill_to_acked_answered_ms"`
	// Slowest is the acked message answered last, the one RecoveredMS
	// waited for, and SlowestSends how many times it was sent.
	Slowest      string `json:"slowest,omitempty"`
	SlowestSends int    `json:"slowest_sends,omitempty"`
	// Redelivered counts answer copies delivered again by the daemon
	// started after this kill.
	Redelivered int `json:"redelivered"`
}

// killEvent is what the killer recorded about one kill.
type killEvent struct {
	at        time.Time
	kind      string
	afterSend time.Duration
	trigger   string // id of the message sent right before an after_send kill
	ready     time.Time
	first     time.Time // first new answer from the restarted daemon
}

// maxListed bounds the message ids a result lists.
const maxListed = 10

// summarizeChaos computes the result from the customers' ledgers and the
// kills, in the order they happened. Kill i started generation i+1.
func summarizeChaos(res *ChaosResult, ledgers []*chaosLedger, kills []killEvent, start, end time.Time) {
	elapsed := end.Sub(start)
	res.Errors = map[string]int{}
	byID := map[string]*chaosMsg{}
	var all []*chaosMsg
	for _, l := range ledgers {
		if l == nil {
			continue
		}
		res.Unexpected += l.unexpected
		res.Reconnects += l.reconnects
		res.ConnectFailures += l.connectFailures
		for k, v := range l.errors {
			res.Errors[k] += v
		}
		if l.resumeErr != "" {
			res.ResumeFailures++
			if res.ResumeError == "" {
				res.ResumeError = fmt.Sprintf("customer %d: %s", l.customer, l.resumeErr)
			}
		}
		for _, m := range l.order {
			if m.sends == 0 {
				continue // made, but the connection broke before it went out
			}
			byID[m.id] = m
			all = append(all, m)
		}
	}
	for _, m := range all {
		res.Messages++
		res.Sends += m.sends
		if m.acked() {
			res.Acked++
		}
		switch {
		case m.answered():
			res.Answered++
			if !m.acked() {
				res.AnsweredWithoutAck++
			}
			if !fromModel(m.answerText) {
				res.NotFromModel++
			}
		case m.acked():
			res.Lost++
			if len(res.LostIDs) < maxListed {
				res.LostIDs = append(res.LostIDs, m.id)
				res.LostTraces = append(res.LostTraces, traceOf(m, kills, start))
			}
		default:
			res.NeverAcked++
			if len(res.NeverAckedIDs) < maxListed {
				res.NeverAckedIDs = append(res.NeverAckedIDs, m.id)
			}
		}
		res.Redelivered += len(m.redelivered)
		res.Conflicts += len(m.conflicts)
		for _, c := range m.conflicts {
			if ev := decodeEvent(c); ev.Text != m.answerText {
				res.TextConflicts++
			}
			if res.Conflict == nil {
				res.Conflict = &ChaosConflict{MessageID: m.id, First: string(m.answer), Again: string(c)}
			}
		}
	}
	sort.Strings(res.LostIDs)
	sort.Strings(res.NeverAckedIDs)
	res.WallSeconds = seconds(elapsed)
	res.TurnsPerSecond = perSecond(res.Answered, elapsed)
	res.Kills = killResults(kills, start, all, byID)
	var ready, first, recovered []time.Duration
	for i, k := range res.Kills {
		if k.ReadyMS >= 0 {
			ready = append(ready, kills[i].ready.Sub(kills[i].at))
		}
		if k.FirstAnswerMS >= 0 {
			first = append(first, kills[i].first.Sub(kills[i].at))
		}
		if k.RecoveredMS >= 0 {
			recovered = append(recovered, msDuration(k.RecoveredMS))
		}
	}
	res.Recovery = ChaosRecovery{Ready: Summarize(ready), FirstAnswer: Summarize(first), Recovered: Summarize(recovered)}
	res.Passed = res.Lost == 0 && res.Conflicts == 0 && res.Unexpected == 0
}

// killResults describes each kill from the messages' timestamps.
func killResults(kills []killEvent, start time.Time, all []*chaosMsg, byID map[string]*chaosMsg) []KillResult {
	out := make([]KillResult, len(kills))
	for i, k := range kills {
		r := KillResult{N: i + 1, Kind: k.kind, AtSeconds: seconds(k.at.Sub(start)), ReadyMS: -1, FirstAnswerMS: -1, RecoveredMS: -1}
		if !k.ready.IsZero() {
			r.ReadyMS = ms(k.ready.Sub(k.at))
		}
		if !k.first.IsZero() {
			r.FirstAnswerMS = ms(k.first.Sub(k.at))
		}
		if k.kind == KillAfterSend {
			r.AfterSendMS = ms(k.afterSend)
			r.Landed = landed(byID[k.trigger], k.at)
		}
		var last time.Time
		recovered := true
		for _, m := range all {
			if m.firstSent.IsZero() || !m.firstSent.Before(k.at) {
				continue
			}
			open := !m.answered() || m.answeredAt.After(k.at)
			if !open {
				continue
			}
			if m.acked() && m.ackedAt.Before(k.at) {
				r.AckedOpen++
				if !m.answered() {
					recovered = false
				} else if m.answeredAt.After(last) {
					last = m.answeredAt
					r.Slowest, r.SlowestSends = m.id, m.sends
				}
			} else {
				r.InFlight++
			}
		}
		if recovered {
			r.RecoveredMS = 0
			if !last.IsZero() {
				r.RecoveredMS = ms(last.Sub(k.at))
			}
		}
		for _, m := range all {
			for _, g := range m.redelivered {
				if g == i+1 {
					r.Redelivered++
				}
			}
		}
		out[i] = r
	}
	return out
}

// traceOf tells the life of m against the kills.
func traceOf(m *chaosMsg, kills []killEvent, start time.Time) ChaosTrace {
	t := ChaosTrace{MessageID: m.id, FirstSentAt: seconds(m.firstSent.Sub(start)), LastSentAt: seconds(m.lastSent.Sub(start)),
		Sends: m.sends, AckedAt: seconds(m.ackedAt.Sub(start))}
	for i, k := range kills {
		if m.acked() && k.at.After(m.ackedAt) {
			if len(t.KillsAfterAck) == 0 {
				t.FirstKillAt = seconds(k.at.Sub(start))
			}
			t.KillsAfterAck = append(t.KillsAfterAck, i+1)
		}
	}
	return t
}

// landed says where a kill at `at` fell in the life of message m.
func landed(m *chaosMsg, at time.Time) string {
	switch {
	case m == nil:
		return landedNoSuchRecord
	case m.answered() && !m.answeredAt.After(at):
		return LandedAfterAnswer
	case m.acked() && !m.ackedAt.After(at):
		return LandedAckNoAnswer
	}
	return LandedBeforeAck
}

// Failures lists the broken promises, empty when the run passed.
func (r *ChaosResult) Failures() []string {
	var fs []string
	if r.Lost > 0 {
		fs = append(fs, fmt.Sprintf("%d acknowledged message(s) never answered (%v)", r.Lost, r.LostIDs))
	}
	if r.Conflicts > 0 {
		fs = append(fs, fmt.Sprintf("%d answer(s) delivered again with different bytes", r.Conflicts))
	}
	if r.Unexpected > 0 {
		fs = append(fs, fmt.Sprintf("%d ack(s) or answer(s) naming a message the customer never sent", r.Unexpected))
	}
	return fs
}

// decodeEvent reads the fields the bench knows from a server frame.
func decodeEvent(b []byte) event {
	var ev event
	_ = json.Unmarshal(b, &ev) // an undecodable frame reads as empty
	return ev
}

func msDuration(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// chaosTargets are the promises the chaos scenario checks (the
// acceptance of the robustness issue): nothing acknowledged lost, no turn
// answered twice with different answers, and redeliveries no more than
// one per kill.
func chaosTargets(c *ChaosResult) []TargetResult {
	if c == nil {
		return nil
	}
	kills := len(c.Kills)
	return []TargetResult{
		{Name: fmt.Sprintf("chaos (%d kills): acknowledged messages lost", kills), Goal: "0",
			Measured: fmt.Sprintf("%d of %d acked", c.Lost, c.Acked), Met: c.Lost == 0 && c.Acked > 0},
		{Name: fmt.Sprintf("chaos (%d kills): turns answered twice with different answers", kills), Goal: "0",
			Measured: fmt.Sprintf("%d", c.Conflicts), Met: c.Conflicts == 0},
		{Name: fmt.Sprintf("chaos (%d kills): answers redelivered (same reply_to and bytes)", kills), Goal: fmt.Sprintf("≤ %d (one per kill)", kills),
			Measured: fmt.Sprintf("%d", c.Redelivered), Met: c.Redelivered <= kills},
	}
}
