package actors

import (
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
)

// The gates are compiled once, before the first attempt: gates that do not
// compile block the work item instead of failing every attempt.
func TestWorkItemWithInvalidGatesIsBlockedBeforeAnAttempt(t *testing.T) {
	h := newExecHarness(t, func(d *Deps) {
		d.SystemGates = []messages.Gate{{Name: "dup", On: messages.TriggerOnToolCall}, {Name: "dup", On: messages.TriggerOnToolCall}}
	})
	evs := h.run(t, h.approved(t))
	if got := statuses(evs); got != "blocked" || !strings.Contains(evs[0].Detail, "gates are invalid") {
		t.Fatalf("statuses %s (%+v), want blocked by the invalid gates", got, evs)
	}
	if n := h.execCalls.Load(); n != 0 {
		t.Fatalf("%d executor calls, want none", n)
	}
	if n := len(h.audited(t, "execution_started")); n != 0 {
		t.Fatalf("%d attempts started, want none", n)
	}
}
