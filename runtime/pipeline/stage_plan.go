package pipeline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/plan"
)

// Answers of the plan flow (spec 5.1.2), shown to the user.
const (
	PlanNeedsOwnerText = "I drafted a plan for this, but plans can only be approved and run by the owner of this assistant. Please ask the owner to run it."
	PlanDeclinedText   = "The plan %q was declined, so nothing was run. Tell me what to change if you want a different plan."
	PlanTimeoutText    = "No answer came to the approval request for the plan %q before it timed out (silas.approval.request_timeout_seconds), so it was treated as declined and nothing was run. Ask again when you are ready to approve it."
	PlanNoOwnerText    = "The plan %q needs your approval, but no owner connection was open to ask, so nothing was run. Reconnect and ask again."
	PlanApprovedText   = "The plan %q was approved and is running in the background; progress arrives as work item updates."
	PlanScheduledText  = "The goal %q was approved with its standing approval and runs on its schedule (%s). Say /goals to list your goals, /goal pause %s to pause this one."
	PlanShutdownText   = "Silas shut down while the plan %q waited for approval, so nothing was run. Ask again once it is back."
	PlanNotRunText     = "The plan %q was not run: %s."
	PlanFailedText     = "The plan %q was approved, but it could not be started (%s), so nothing was run. Please try again."
	PlanRefusedText    = "I refused the plan, so nothing was asked or run: %s. Ask me for a plan without such a gate, or add the check yourself."
)

// runPlanFlow handles a plan proposed by the planner (spec 5.1 step 12): it
// parses the plan, pins it in the workspace zone and asks the owner for
// approval. A plan always needs approval: needs_approval=false from the
// model is never trusted to skip it, since a parsed plan carries no token.
func runPlanFlow(t *Turn, e *Env) Effect {
	r := t.Response
	if t.Blocked || r == nil || r.PlanAction == nil || r.PlanAction.PlanMarkdown == nil ||
		strings.TrimSpace(*r.PlanAction.PlanMarkdown) == "" {
		return next
	}
	if !e.OwnerScope {
		t.audit("plan_refused", map[string]any{"reason": "customer scope"})
		r.Message = joinText(r.Message, PlanNeedsOwnerText)
		return next
	}
	w, err := plan.Parse(*r.PlanAction.PlanMarkdown)
	if errors.Is(err, plan.ErrOwnerOnlyGate) {
		// A gate that runs a host command is the owner's to configure: the
		// plan is refused, not sent back as a mistake to fix in place.
		t.audit("plan_refused", map[string]any{"reason": "owner_only_gate", "origin": plan.OriginModel.String(), "error": err.Error()})
		r.Message = joinText(r.Message, fmt.Sprintf(PlanRefusedText, err.Error()))
		return next
	}
	if err != nil {
		t.audit("plan_invalid", map[string]any{"error": err.Error()})
		r.Message = joinText(r.Message, "The plan could not be used because it is malformed: "+err.Error()+
			". Ask me to revise the plan.")
		return next
	}
	w.NeedsApproval = true
	w.ApprovalToken = nil
	if w.CreatedAt.IsZero() {
		w.CreatedAt = t.Now
	}
	t.Plan = w
	hash, _ := messages.WorkItemPlanHash(w)
	t.audit("plan_proposed", map[string]any{"work_item_id": w.ID, "title": w.Title, "plan_hash": hash,
		"model_needs_approval": r.NeedsApproval})
	if e.Window != nil {
		e.Window.Add(messages.ContextItem{
			CtxID: "plan-" + w.ID + "-" + t.ID, Zone: messages.ZoneWorkspace, Content: *r.PlanAction.PlanMarkdown,
			CreatedAt: t.Now, TurnNumber: t.Number, Source: "planner", Taint: messages.TaintOwner,
			Kind: messages.KindPlan, Relevance: 1, Pinned: true,
		})
	}
	return Effect{Await: &ApprovalRequest{Work: w}}
}

func resumePlanFlow(t *Turn, _ *Env, r Result) Effect {
	title := t.Plan.Title
	var text string
	switch out, ok := r.Value.(ApprovalOutcome); {
	case r.Err != nil:
		text = fmt.Sprintf(PlanFailedText, title, r.Err.Error())
	case !ok:
		text = fmt.Sprintf(PlanFailedText, title, "no approval outcome")
	case out.Approved && out.Scheduled != "":
		text = fmt.Sprintf(PlanScheduledText, title, out.Scheduled, t.Plan.ID)
	case out.Approved:
		text = fmt.Sprintf(PlanApprovedText, title)
	case out.Reason == "timeout":
		text = fmt.Sprintf(PlanTimeoutText, title)
	case out.Reason == "no_owner_connection":
		text = fmt.Sprintf(PlanNoOwnerText, title)
	case out.Reason == "shutdown":
		text = fmt.Sprintf(PlanShutdownText, title)
	case out.Reason == "declined":
		text = fmt.Sprintf(PlanDeclinedText, title)
	default:
		text = fmt.Sprintf(PlanNotRunText, title, out.Reason)
	}
	t.Response.Message = joinText(t.Response.Message, text)
	return next
}

func joinText(a, b string) string {
	if strings.TrimSpace(a) == "" {
		return b
	}
	return a + "\n\n" + b
}
