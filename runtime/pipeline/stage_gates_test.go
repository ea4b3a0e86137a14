package pipeline

import (
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/runtime/gates/predicate"
)

func ptr[T any](v T) *T { return &v }

// calmGate blocks text with an exclamation mark on trigger, escalating
// through onBlock.
func calmGate(name string, trigger messages.GateTrigger, onBlock string) messages.Gate {
	return messages.Gate{Name: name, On: trigger, Provider: messages.ProviderPredicate, Type: messages.GateRegex,
		Config: map[string]any{"pattern": "^[^!]*$"}, OnBlock: onBlock}
}

func predicateRunner(t *testing.T) *gates.Runner {
	t.Helper()
	p, err := predicate.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := gates.NewRegistry(map[messages.GateProvider]gates.Provider{messages.ProviderPredicate: p})
	if err != nil {
		t.Fatal(err)
	}
	return gates.NewRunner(reg)
}

// gateRun is what a driven turn asked for.
type gateRun struct {
	turn      *Turn
	checks    int
	models    int
	approvals []*GateApprovalRequest
}

// driveGates runs a turn whose proxy answers with answers in order (the
// last one repeats) through the real runner; approve answers approvals.
func driveGates(t *testing.T, text string, gs []messages.Gate, esc map[string]messages.EscalationAction,
	answers []string, approve func(*GateApprovalRequest) GateApprovalOutcome) *gateRun {
	t.Helper()
	env := testEnv()
	env.SystemGates, env.GoalEscalations, env.MaxGateEvals = gs, esc, 64
	runner := predicateRunner(t)
	run := &gateRun{turn: newTurn(text)}
	drive(t, run.turn, env, func(req any) Result {
		switch r := req.(type) {
		case *RunPolicyGates:
			run.checks++
			return Result{Value: runner.Policy(t.Context(), r.Check)}
		case *GateApprovalRequest:
			run.approvals = append(run.approvals, r)
			return Result{Value: approve(r)}
		case *ModelCall:
			a := answers[min(run.models, len(answers)-1)]
			run.models++
			v, err := r.Decode(strings.Replace(directRoute, "hello there", a, 1))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			return Result{Value: ModelResult{Value: v}}
		}
		return Result{}
	})
	return run
}

func TestOutputEscalationActions(t *testing.T) {
	out := messages.TriggerEveryAgentResponse
	tests := []struct {
		name       string
		esc        messages.EscalationAction
		extra      map[string]messages.EscalationAction
		answers    []string
		want       string
		wantModels int
		wantAudit  string
	}{
		{"respond sends the message", messages.EscalationAction{Action: messages.EscalationRespond, Message: ptr("Not like that.")},
			nil, []string{"wow!"}, "Not like that.", 1, gates.EventEscalation},
		{"report suppresses", messages.EscalationAction{Action: messages.EscalationReport},
			nil, []string{"wow!"}, BlockedText, 1, gates.EventGateBlock},
		{"transfer_to_queue sends the message and records the queue", messages.EscalationAction{Action: messages.EscalationTransferToQueue, Message: ptr("A person will help."), Queue: ptr("support")},
			nil, []string{"wow!"}, "A person will help.", 1, "gate_transfer_requested"},
		{"escalate_human without handoff falls back to its queue", messages.EscalationAction{Action: messages.EscalationEscalateHuman, Message: ptr("Handing over."), Queue: ptr("support")},
			nil, []string{"wow!"}, "Handing over.", 1, "gate_transfer_requested"},
		{"escalate_human without handoff or queue reports", messages.EscalationAction{Action: messages.EscalationEscalateHuman, Message: ptr("Handing over.")},
			nil, []string{"wow!"}, BlockedText, 1, gates.EventGateBlock},
		{"suppress_and_escalate sends its message, then the fallback's", messages.EscalationAction{Action: messages.EscalationSuppressAndEscalate, Message: ptr("Sorry."), Fallback: ptr("later")},
			map[string]messages.EscalationAction{"later": {Action: messages.EscalationRespond, Message: ptr("Ask again later.")}},
			[]string{"wow!"}, "Sorry.\n\nAsk again later.", 1, gates.EventEscalation},
		{"suppress_and_rephrase passes with the rephrased answer", messages.EscalationAction{Action: messages.EscalationSuppressAndRephrase, Instruction: ptr("Be calm."), MaxRetries: 3, Fallback: ptr("report")},
			nil, []string{"wow!", "still wow!", "fine."}, "fine.", 3, "gate_retry"},
		{"suppress_and_rephrase falls back when retries are spent", messages.EscalationAction{Action: messages.EscalationSuppressAndRephrase, Instruction: ptr("Be calm."), MaxRetries: 1, Fallback: ptr("polite_redirect")},
			nil, []string{"wow!"}, gates.PoliteRedirectMessage, 2, "gate_retries_exhausted"},
		{"retry re-checks, then falls back", messages.EscalationAction{Action: messages.EscalationRetry, MaxRetries: 2},
			nil, []string{"wow!"}, BlockedText, 1, "gate_retries_exhausted"},
		{"spawn_task suppresses and records the request", messages.EscalationAction{Action: messages.EscalationSpawnTask},
			nil, []string{"wow!"}, BlockedText, 1, "gate_fix_task_requested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			esc := map[string]messages.EscalationAction{"esc": tt.esc}
			for k, v := range tt.extra {
				esc[k] = v
			}
			run := driveGates(t, "hi", []messages.Gate{calmGate("calm", out, "esc")}, esc, tt.answers, nil)
			if got := run.turn.Answer.Text; got != tt.want {
				t.Fatalf("answer %q, want %q", got, tt.want)
			}
			if run.models != tt.wantModels {
				t.Errorf("%d model calls, want %d", run.models, tt.wantModels)
			}
			if !hasAudit(run.turn, tt.wantAudit) {
				t.Errorf("no %s audit event in %+v", tt.wantAudit, run.turn.Audit)
			}
		})
	}
}

func TestRetryRechecksTheStep(t *testing.T) {
	esc := map[string]messages.EscalationAction{"esc": {Action: messages.EscalationRetry, MaxRetries: 2}}
	run := driveGates(t, "bad!", []messages.Gate{calmGate("calm", messages.TriggerEveryUserMessage, "esc")}, esc, []string{"x"}, nil)
	if run.checks != 3 || run.models != 0 {
		t.Fatalf("%d checks and %d model calls, want the check and 2 retries, no model call", run.checks, run.models)
	}
	if run.turn.Answer.Text != BlockedText {
		t.Fatalf("answer %q", run.turn.Answer.Text)
	}
}

func TestRephraseOnInputFallsBackAtOnce(t *testing.T) {
	esc := map[string]messages.EscalationAction{"esc": {Action: messages.EscalationSuppressAndRephrase, Instruction: ptr("x"), MaxRetries: 3, Fallback: ptr("polite_redirect")}}
	run := driveGates(t, "bad!", []messages.Gate{calmGate("calm", messages.TriggerEveryUserMessage, "esc")}, esc, []string{"x"}, nil)
	if run.models != 0 || run.turn.Answer.Text != gates.PoliteRedirectMessage {
		t.Fatalf("%d model calls, answer %q: there is no answer to rephrase before step 8", run.models, run.turn.Answer.Text)
	}
}

func TestUnknownEscalationReports(t *testing.T) {
	run := driveGates(t, "hi", []messages.Gate{calmGate("calm", messages.TriggerEveryAgentResponse, "nope")}, nil, []string{"wow!"}, nil)
	if run.turn.Answer.Text != BlockedText || !hasAudit(run.turn, gates.EventEscalationWarning) {
		t.Fatalf("answer %q, audit %+v", run.turn.Answer.Text, run.turn.Audit)
	}
}

func approvalGate(name string, trigger messages.GateTrigger, onBlock string) messages.Gate {
	return messages.Gate{Name: name, On: trigger, Provider: messages.ProviderPredicate, Type: messages.GateApprovalAlways, OnBlock: onBlock}
}

func TestGateApprovals(t *testing.T) {
	in, out := messages.TriggerEveryUserMessage, messages.TriggerEveryAgentResponse
	yes := func(*GateApprovalRequest) GateApprovalOutcome { return GateApprovalOutcome{Approved: true} }
	no := func(*GateApprovalRequest) GateApprovalOutcome { return GateApprovalOutcome{Reason: "declined"} }

	t.Run("every gate that asks is asked, then the turn goes on", func(t *testing.T) {
		run := driveGates(t, "hi", []messages.Gate{approvalGate("a", in, ""), approvalGate("b", in, "")}, nil, []string{"done"}, yes)
		if len(run.approvals) != 2 || run.approvals[0].Gate != "a" || run.approvals[1].Gate != "b" {
			t.Fatalf("approvals %+v", run.approvals)
		}
		if run.approvals[0].Context[gates.KeyMessage] != "hi" {
			t.Fatalf("approval context %v", run.approvals[0].Context)
		}
		if run.turn.Answer.Text != "done" {
			t.Fatalf("answer %q", run.turn.Answer.Text)
		}
	})
	t.Run("a declined input stops before the model", func(t *testing.T) {
		run := driveGates(t, "hi", []messages.Gate{approvalGate("a", in, ""), approvalGate("b", in, "")}, nil, []string{"done"}, no)
		if len(run.approvals) != 1 || run.models != 0 || run.turn.Answer.Text != GateNotApprovedAnswer("declined") {
			t.Fatalf("%d approvals, %d model calls, answer %q", len(run.approvals), run.models, run.turn.Answer.Text)
		}
	})
	t.Run("a declined output runs the gate's escalation", func(t *testing.T) {
		esc := map[string]messages.EscalationAction{"esc": {Action: messages.EscalationRespond, Message: ptr("Withheld.")}}
		run := driveGates(t, "hi", []messages.Gate{approvalGate("a", out, "esc")}, esc, []string{"done"}, no)
		if run.turn.Answer.Text != "Withheld." || !hasAudit(run.turn, "gate_approval_denied") {
			t.Fatalf("answer %q", run.turn.Answer.Text)
		}
	})
}

func TestMemoryOpGates(t *testing.T) {
	tool := messages.TriggerOnToolCall
	route := `{"route":"direct","reason":"chat","response":{"message":"ok","memory_queries":[],"memory_ops":[` +
		`{"op":"store","content":"likes tea","memory_id":null,"memory_type":"fact","tags":[],"entity_refs":[],"link_to":null,"link_type":null},` +
		`{"op":"store","content":"PIN 1234","memory_id":null,"memory_type":"fact","tags":[],"entity_refs":[],"link_to":null,"link_type":null}` +
		`],"plan_action":null,"needs_approval":false},"interaction_register":"status","interaction_mode":"default_and_offer","continuation_of":null,"context_profile":"conversation"}`
	digits := messages.Gate{Name: "digits", On: tool, Provider: messages.ProviderPredicate, Type: messages.GateRegex,
		Extract: ptr("content"), Config: map[string]any{"pattern": "^[^0-9]*$"}}

	check := func(t *testing.T, gs []messages.Gate, approve func(*GateApprovalRequest) GateApprovalOutcome, want []string) *gateRun {
		t.Helper()
		var applied []messages.MemoryOp
		env := testEnv()
		env.SystemGates, env.MaxGateEvals = gs, 64
		runner := predicateRunner(t)
		run := &gateRun{turn: newTurn("remember")}
		drive(t, run.turn, env, func(req any) Result {
			switch r := req.(type) {
			case *RunPolicyGates:
				return Result{Value: runner.Policy(t.Context(), r.Check)}
			case *GateApprovalRequest:
				run.approvals = append(run.approvals, r)
				return Result{Value: approve(r)}
			case *ModelCall:
				v, err := r.Decode(route)
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				return Result{Value: ModelResult{Value: v}}
			case *ApplyMemoryOps:
				applied = r.Ops
			}
			return Result{}
		})
		var got []string
		for _, op := range applied {
			got = append(got, *op.Content)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("applied %q, want %q", got, want)
		}
		if run.turn.Answer.Text != "ok" {
			t.Fatalf("answer %q", run.turn.Answer.Text)
		}
		return run
	}

	t.Run("a blocked op is skipped", func(t *testing.T) {
		run := check(t, []messages.Gate{digits}, nil, []string{"likes tea"})
		if !hasAudit(run.turn, "memory_op_blocked") {
			t.Fatalf("audit %+v", run.turn.Audit)
		}
	})
	t.Run("an op that needs approval runs only when approved", func(t *testing.T) {
		ask := approvalGate("ask", tool, "")
		n := 0
		run := check(t, []messages.Gate{ask}, func(r *GateApprovalRequest) GateApprovalOutcome {
			n++
			return GateApprovalOutcome{Approved: n == 2, Reason: "declined"}
		}, []string{"PIN 1234"})
		if len(run.approvals) != 2 || run.approvals[0].Context[gates.KeyToolName] != "memory_op" {
			t.Fatalf("approvals %+v", run.approvals)
		}
	})
	t.Run("an allowed rewrite of the op's arguments is applied", func(t *testing.T) {
		lower := messages.Gate{Name: "lower", On: tool, Provider: messages.ProviderPredicate, Type: messages.GateRegex,
			Extract: ptr("content"), Config: map[string]any{"pattern": ".", "normalize": []any{"upper"}, "rewrite": true}}
		check(t, []messages.Gate{lower}, nil, []string{"LIKES TEA", "PIN 1234"})
	})
}
