package actors

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// TestPassivatableOnlyWhenNothingWaits: anything that lives only in the
// scope's memory, or that someone waits on, keeps an idle scope in memory.
func TestPassivatableOnlyWhenNothingWaits(t *testing.T) {
	pid := actor.NewPID("local", "x")
	cases := []struct {
		name string
		set  func(s *Scope)
	}{
		{"still loading", func(s *Scope) { s.loaded = false }},
		{"turn running", func(s *Scope) { s.current = &run{} }},
		{"message queued", func(s *Scope) { s.queue = []*queued{{}} }},
		{"connection attached", func(s *Scope) { s.sinks["c1"] = nil }},
		{"answer not delivered", func(s *Scope) { s.outbox = []persistence.OutboxRecord{{}} }},
		{"delivery not written", func(s *Scope) { s.delivered = []string{"o1"} }},
		{"delivery being written", func(s *Scope) { s.deliveredWriting = true }},
		{"work item running", func(s *Scope) { s.workers["w1"] = pid }},
		{"approval waited on", func(s *Scope) { s.approval = &pendingApproval{} }},
		{"gate approval waited on", func(s *Scope) { s.gateApproval = &pendingGateApproval{} }},
		{"approval to relay to the owner", func(s *Scope) { s.toOwner = []*relayGateApproval{{}} }},
		{"relayed approval unanswered", func(s *Scope) { s.relayed = map[string]*actor.PID{"r1": pid} }},
		{"persona request waiting", func(s *Scope) { s.waitingPersona = []waitingPersona{{}} }},
	}
	idle := func() *Scope {
		s := newScope(&shared{}, "c", messages.ScopeCustomer)
		s.loaded = true
		return s
	}
	if !idle().passivatable() {
		t.Fatal("a loaded scope holding nothing is not passivatable")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := idle()
			tc.set(s)
			if s.passivatable() {
				t.Errorf("passivatable with %s: its state would be lost or someone left waiting", tc.name)
			}
		})
	}
}
