package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/pipeline"
)

// stepDone carries the result of a request a turn awaited, tagged with the
// turn it belongs to.
type stepDone struct {
	turnID string
	result pipeline.Result
}

var errShuttingDown = errors.New("silas is shutting down")

// FailedTurnText is the answer to a turn that crashed.
const FailedTurnText = "Sorry, something went wrong on my side while handling this message, and the error was logged. Please send it again."

// maybeStart starts the next turn when the scope is rehydrated and no turn
// is in flight. The head may still be on its way to the journal: nothing the
// turn does is durable or visible before its commit, and the commit is
// ordered after the journal write by the store's single committer.
func (s *Scope) maybeStart(c actor.Context) {
	if !s.loaded || s.current != nil || s.draining || len(s.queue) == 0 {
		return
	}
	q := s.queue[0]
	s.queue = s.queue[1:]
	s.d.metrics.QueueDepth.Dec()
	m := q.msg
	s.current = &run{msg: m, slot: q.slot, started: time.Now(), journaled: q.journaled, acked: q.journaled, turn: &pipeline.Turn{
		ID: uuid.NewString(), Scope: s.id, Number: s.turnNo + 1, Now: s.d.now(),
		In: pipeline.Inbound{
			MessageID: m.MessageID, Channel: m.Channel, SenderID: m.SenderID, Text: m.Text,
			Authenticated: m.Authenticated, Signature: m.Signature, Nonce: m.Nonce,
			Timestamp: m.Timestamp, ReceivedAt: m.ReceivedAt,
		},
	}}
	s.setState(c)
	s.refreshSkillPrompts()
	req, err := pipeline.Advance(s.current.turn, s.env)
	s.step(c, req, err)
}

func (s *Scope) onStepDone(c actor.Context, m *stepDone) {
	r := s.current
	if r == nil || r.turn.ID != m.turnID {
		return
	}
	if r.failed {
		s.onFailureCommitted(c, m.result.Err)
		return
	}
	if r.turn.Stage() == "send" { // the only request of stage 13 is the commit
		if m.result.Err != nil {
			s.onCommitFailed(c, m.result.Err)
			return
		}
		s.afterCommit(c, r)
	}
	req, err := pipeline.Resume(r.turn, s.env, m.result)
	s.step(c, req, err)
}

// step performs what the turn awaits next, or finishes it.
func (s *Scope) step(c actor.Context, req any, err error) {
	t := s.current.turn
	for _, q := range t.Quality {
		c.Send(s.qual, &qualityCheck{check: q, sender: t.In.SenderID})
	}
	t.Quality = t.Quality[:0]
	if err != nil {
		s.failTurn(c, err)
		return
	}
	if req == nil {
		s.finish(c)
		return
	}
	switch r := req.(type) {
	case *pipeline.ConsumeNonce:
		ttl := time.Duration(s.d.Config.NonceStore.TTLMinutes) * time.Minute
		s.io(c, t.ID, "consume nonce", func(ctx context.Context) pipeline.Result {
			fresh, err := s.d.DB.Nonces().Consume(ctx, "msg", r.Nonce, ttl)
			return pipeline.Result{Value: fresh, Err: err}
		})
	case *pipeline.ModelCall:
		if !s.llmLimit.Allow(s.d.now()) {
			c.Send(c.Self(), &stepDone{turnID: t.ID, result: pipeline.Result{Err: fmt.Errorf(
				"this conversation reached its limit of %d model calls a minute (limits.llm_calls_per_minute_per_scope); wait a minute and try again",
				s.d.Config.Limits.LLMCallsPerMinutePerScope)}})
			return
		}
		if r.PromptQuoted != nil { // a render of the window (stage_route)
			s.d.metrics.PromptBytes.Add(uint64(r.PromptBytes))
			s.d.metrics.PromptStable.Add(uint64(r.PromptStable))
		}
		loop := s.proxy
		switch r.Role {
		case pipeline.AgentPlanner:
			loop = s.planner
		case pipeline.AgentScorer:
			loop = s.scorer
		}
		c.Send(loop, &agentCall{turnID: t.ID, call: r, stream: streamAllowed(t, r)})
	case *pipeline.QueryMemory:
		if s.noKeywordMemory && keywordOnly(r.Queries) {
			// Nothing is indexed, so the search is known to be empty.
			s.resumeNow(c, t.ID, pipeline.Result{Value: []messages.MemoryItem(nil)})
			return
		}
		scope, now := s.id, t.Now
		s.io(c, t.ID, "memory query", func(ctx context.Context) pipeline.Result {
			items, err := queryMemory(ctx, s.d, scope, now, r.Queries)
			return pipeline.Result{Value: items, Err: err}
		})
	case *pipeline.ApplyMemoryOps:
		ops := r.Ops
		if n := s.memBudget(len(ops)); n < len(ops) {
			t.Audit = append(t.Audit, pipeline.AuditRecord{Event: "memory_ops_rate_limited", Data: map[string]any{"requested": len(ops), "allowed": n}})
			ops = ops[:n]
		}
		s.noKeywordMemory = false // a store or update may index an item
		scope, now := s.id, t.Now
		s.io(c, t.ID, "memory ops", func(ctx context.Context) pipeline.Result {
			n, err := applyMemoryOps(ctx, s.d.DB, scope, ops, r.Taint, now)
			if n > 0 {
				s.d.vectorsChanged() // a stored or updated memory waits for its embedding
			}
			return pipeline.Result{Value: n, Err: err}
		})
	case *pipeline.SavePersona:
		store, scope := s.d.PersonaStore, s.d.Persona.ScopeID(s.id)
		s.io(c, t.ID, "persona save", func(ctx context.Context) pipeline.Result {
			var err error
			for i := range r.Events {
				if err = savePersona(ctx, store, scope, r.State, &r.Events[i]); err != nil {
					break
				}
			}
			return pipeline.Result{Err: err}
		})
	case *pipeline.WebSearch:
		s.onWebSearch(c, t.ID, r)
	case *pipeline.TellUser:
		s.onTellUser(c, t.ID, r)
	case *pipeline.StartResearch:
		s.startResearch(c, t.ID, r)
	case *pipeline.AwaitResearch:
		s.awaitResearch(c, t.ID)
	case *pipeline.LoadAccess:
		s.onLoadAccess(c, t.ID)
	case *pipeline.UpdateAccess:
		s.onUpdateAccess(c, t.ID, r)
	case *pipeline.RunPolicyGates:
		c.Send(s.policy, &policyCheck{turnID: t.ID, check: r.Check})
	case *pipeline.ApprovalRequest:
		s.requestApproval(c, t.ID, r.Work)
	case *pipeline.GateApprovalRequest:
		s.requestGateApproval(c, t.ID, r)
	case *pipeline.Commit:
		if !s.current.journaled && !s.current.lost {
			s.current.commitWaiting = true
			return
		}
		s.commit(c)
	default:
		s.failTurn(c, fmt.Errorf("turn %s awaits unknown request %T", t.ID, req))
	}
}

// commit writes the turn's one atomic commit, once its message's journal
// write has settled.
func (s *Scope) commit(c actor.Context) {
	r := s.current
	if r.lost {
		// The message never became durable, or was already answered
		// before: the turn's work is dropped unseen.
		s.endTurn(c)
		return
	}
	tc := s.turnCommit(r)
	if s.noKeywordMemory {
		for i := range tc.Memories {
			if persistence.KeywordIndexed(&tc.Memories[i]) { // an evicted episode
				s.noKeywordMemory = false
				break
			}
		}
	}
	embeddable := hasEmbeddable(tc.Memories)
	s.io(c, r.turn.ID, "commit turn", func(ctx context.Context) pipeline.Result {
		err := s.d.DB.CommitTurn(ctx, tc)
		if err == nil && embeddable {
			s.d.vectorsChanged() // evicted episodes wait for their embeddings
		}
		return pipeline.Result{Err: err}
	})
}

func (s *Scope) memBudget(n int) int {
	now := s.d.now()
	for i := 0; i < n; i++ {
		if !s.memLimit.Allow(now) {
			return i
		}
	}
	return n
}

// resumeNow hands the turn a result the scope has at hand, without a trip
// through the mailbox: Resume may be called as soon as Advance or Resume
// has returned the request it answers.
func (s *Scope) resumeNow(c actor.Context, turnID string, r pipeline.Result) {
	s.onStepDone(c, &stepDone{turnID: turnID, result: r})
}

// io runs fn in a tracked goroutine and sends its result back to the scope.
func (s *Scope) io(c actor.Context, turnID, name string, fn func(ctx context.Context) pipeline.Result) {
	self, root := c.Self(), s.d.sys.Root
	reply := func(r pipeline.Result) { root.Send(self, &stepDone{turnID: turnID, result: r}) }
	if !s.d.tasks.Go(name, func(ctx context.Context) { reply(fn(ctx)) }, func(err error) { reply(pipeline.Result{Err: err}) }) {
		reply(pipeline.Result{Err: errShuttingDown})
	}
}

// turnCommit builds the turn's one atomic write and keeps its outbox
// record on the run, so the answer is encoded once for the store and the
// sockets alike.
func (s *Scope) turnCommit(r *run) persistence.TurnCommit {
	t := r.turn
	payload, _ := json.Marshal(t.Answer) // an Answer always encodes
	snap, _ := json.Marshal(snapshot{Turn: t.Number, Access: s.accessState()})
	r.answer = persistence.OutboxRecord{ID: t.ID, Scope: s.id, ReplyTo: t.In.MessageID, Payload: payload, CreatedAt: t.Now}
	tc := persistence.TurnCommit{
		Scope: s.id, MessageID: t.In.MessageID, Consumer: consumerTurns,
		Chronicle: t.Chronicle, Memories: t.Memories, Snapshot: snap,
		Outbox: []persistence.OutboxRecord{r.answer},
	}
	if t.Usage.Calls > 0 {
		tc.Usage = &persistence.UsageRecord{Calls: t.Usage.Calls, PromptTokens: t.Usage.PromptTokens, CompletionTokens: t.Usage.CompletionTokens, CostUSD: t.Usage.CostUSD}
	}
	return tc
}

// afterCommit queues the durable answer for delivery; it goes out at once
// to every attached connection.
func (s *Scope) afterCommit(c actor.Context, r *run) {
	t := r.turn
	if !r.acked {
		// The commit is durable, so the message is too: acknowledge it
		// before the answer goes out.
		r.acked = true
		send(r.msg.Sink, &messages.AckEvent{Type: "ack", MessageID: r.msg.MessageID})
	}
	s.answered.add(r.msg.MessageID)
	s.outbox = append(s.outbox, r.answer)
	if len(s.sinks) == 0 && r.msg.Sink != nil {
		// The sender is connected but not attached (a customer's first
		// message): answer it directly.
		if r.msg.Sink.Send(json.RawMessage(r.answer.Payload)) {
			s.outbox = s.outbox[:len(s.outbox)-1]
			s.delivered = append(s.delivered, t.ID)
		}
	}
	s.flushOutbox(c)
}

// finish closes a turn whose stages all ran.
func (s *Scope) finish(c actor.Context) {
	r := s.current
	t := r.turn
	s.turnNo = t.Number
	s.auditTurn(t)
	s.d.metrics.Turns.Inc()
	s.d.metrics.TurnSeconds.Observe(time.Since(r.started).Seconds())
	s.endTurn(c)
}

func (s *Scope) endTurn(c actor.Context) {
	s.d.admit.release(s.current.slot)
	s.current.research.stop() // research the turn no longer waits for
	s.current = nil
	if s.draining && s.drainReply != nil {
		c.Send(s.drainReply, &messages.Drained{})
		s.drainReply = nil
	}
	s.setState(c)
	s.maybeStart(c)
}

func (s *Scope) auditTurn(t *pipeline.Turn) {
	for _, a := range t.Audit {
		if a.Event == "model_error" {
			// A customer was answered a generic text: the provider's
			// error (its URL, its body) is for the operator, here and in
			// the audit entry.
			s.d.Log.Warn().Str("scope", s.id).Str("turn", t.ID).Interface("agent", a.Data["agent"]).
				Interface("error", a.Data["error"]).Msg("model call failed")
		}
		s.emitAudit(a.Event, a.Data)
	}
	route := ""
	if t.Route != nil {
		route = t.Route.Route
	}
	// One entry per turn carries the routing decision of step 7 too.
	s.emitAudit("turn_completed", map[string]any{
		"message_id": t.In.MessageID, "turn": t.Number, "agent": t.Agent, "taint": t.Taint,
		"route": route, "interaction_register": t.Register, "interaction_mode": t.Mode, "context_profile": t.Profile,
		"blocked": t.Blocked, "model_calls": t.Usage.Calls, "prompt_tokens": t.Usage.PromptTokens, "completion_tokens": t.Usage.CompletionTokens,
		"models": t.Usage.Models, "cost_usd": t.Usage.CostUSD,
	})
}

func (s *Scope) emitAudit(event string, data map[string]any) {
	s.d.sys.Root.Send(s.d.audit, &messages.AuditEvent{Time: s.d.now(), Event: event, Scope: s.id, Data: data})
}

// failTurn answers a turn that crashed (a panic in a stage) and records it
// as processed, so that a message that crashes the pipeline cannot crash it
// again after every restart.
func (s *Scope) failTurn(c actor.Context, err error) {
	r := s.current
	t := r.turn
	ev := s.d.Log.Error().Err(err).Str("scope", s.id).Str("turn", t.ID).Str("stage", t.Stage())
	var pe *pipeline.PanicError
	if errors.As(err, &pe) {
		ev = ev.Bytes("stack", pe.Stack)
	}
	ev.Msg("turn failed")
	s.d.metrics.Errors.With(string(messages.CodeInternal)).Inc()
	s.emitAudit("turn_failed", map[string]any{"message_id": t.In.MessageID, "stage": t.Stage(), "error": err.Error()})
	r.failed = true
	t.Answer = &messages.AnswerEvent{Type: messages.EventMessage, Text: FailedTurnText, Sender: "silas", Timestamp: t.Now, ReplyTo: t.In.MessageID,
		Error: &messages.TurnError{Kind: messages.TurnErrorInternal, Retryable: true}}
	tc := s.turnCommit(s.current)
	tc.Chronicle, tc.Memories, tc.Snapshot = nil, nil, nil
	s.io(c, t.ID, "commit failed turn", func(ctx context.Context) pipeline.Result {
		return pipeline.Result{Err: s.d.DB.CommitTurn(ctx, tc)}
	})
}

func (s *Scope) onFailureCommitted(c actor.Context, err error) {
	if err != nil {
		s.onCommitFailed(c, err)
		return
	}
	s.afterCommit(c, s.current)
	s.endTurn(c)
}

// onCommitFailed gives up on a turn whose writes could not be made durable.
// Its message stays journaled and runs again after the next start; nothing
// was sent, so nothing is said twice.
func (s *Scope) onCommitFailed(c actor.Context, err error) {
	r := s.current
	s.d.Log.Error().Err(err).Str("scope", s.id).Str("turn", r.turn.ID).Msg("commit turn; the message stays queued")
	s.d.metrics.Errors.With(string(messages.CodeInternal)).Inc()
	send(r.msg.Sink, webError(messages.CodeInternal, "your message was accepted but its answer could not be saved; it will be answered after Silas restarts", "message"))
	s.endTurn(c)
}
