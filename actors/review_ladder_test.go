package actors

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/review"
)

func TestDeclinesNeedNoRung(t *testing.T) {
	tests := []struct {
		f    messages.Frame
		want bool
	}{
		{messages.Frame{Type: messages.TypeApprovalResponse, Verdict: "declined"}, true},
		{messages.Frame{Type: messages.TypeApprovalResponse, Verdict: "approved"}, false},
		{messages.Frame{Type: messages.TypePermissionEscalationResponse, Verdict: permissionDeny}, true},
		{messages.Frame{Type: messages.TypePermissionEscalationResponse, Verdict: permissionJustOnce}, false},
		{messages.Frame{Type: messages.TypePermissionEscalationResponse, Verdict: permissionApprove}, false},
		{messages.Frame{Type: messages.TypeConnectionFailureResponse, SelectedAction: "skip"}, true},
		{messages.Frame{Type: messages.TypeConnectionFailureResponse, SelectedAction: "reconnect"}, false},
		{messages.Frame{Type: messages.TypeConnectionSetupResponse, Action: "done"}, true},
	}
	for _, tt := range tests {
		if got := declines(&tt.f); got != tt.want {
			t.Errorf("declines(%s %s%s) = %v", tt.f.Type, tt.f.Verdict, tt.f.SelectedAction, got)
		}
	}
}

func TestConnectionCardRisks(t *testing.T) {
	p := func(ps ...messages.ConnectionPermission) []messages.ConnectionPermission { return ps }
	for _, tt := range []struct {
		perms []messages.ConnectionPermission
		want  review.Risk
	}{
		{p(messages.PermissionObserve), review.Medium},
		{p(messages.PermissionObserve, messages.PermissionDraft), review.High},
		{p(messages.PermissionObserve, messages.PermissionAct), review.High},
		{p(messages.PermissionManage), review.High},
	} {
		if got := connectRisk(tt.perms); got != tt.want {
			t.Errorf("connectRisk(%v) = %s, want %s", tt.perms, got, tt.want)
		}
	}
	for _, tt := range []struct {
		tier   messages.ConnectionPermission
		scopes []string
		want   review.Risk
	}{
		{messages.PermissionDraft, nil, review.Medium},
		{messages.PermissionAct, nil, review.High},
		{"", []string{"repo"}, review.High},
	} {
		if got := permissionRisk(tt.tier, tt.scopes); got != tt.want {
			t.Errorf("permissionRisk(%s, %v) = %s, want %s", tt.tier, tt.scopes, got, tt.want)
		}
	}
	f := &messages.ConnectionFailure{RecoveryOptions: []messages.RecoveryOption{
		{Action: "retry", Label: "Try again", RiskLevel: "low"}, {Action: "escalate", Label: "Ask IT", RiskLevel: "high"},
		{Action: "odd", Label: "Odd", RiskLevel: "bogus"},
	}}
	if failureRisk(f) != review.High || optionRisk(f, "retry") != review.Low || optionRisk(f, "odd") != review.Low || optionRisk(f, "missing") != review.High {
		t.Errorf("failure risks: card %s, retry %s, odd %s, missing %s", failureRisk(f), optionRisk(f, "retry"), optionRisk(f, "odd"), optionRisk(f, "missing"))
	}
}

// Every card the actors send carries a complete contract: CTAs in order,
// the decline last, and a skip on every failure card.
func TestCardContracts(t *testing.T) {
	log := zerolog.Nop()
	plan := &messages.ApprovalRequestEvent{Title: "Post to the service", Body: "Posts the note. Then checks it.",
		Plan: messages.PlanCard{Verify: []messages.VerificationCheck{{Name: "ran"}}, Skills: []string{"oauth-device"}}}
	c := planContract(log, plan, review.Irreversible, false, review.IrreversibleEffects)
	if c == nil || c.RiskLevel != "irreversible" || c.Confirmation != review.RungWebAuthn || c.Details[0].Label != "Irreversible" ||
		c.CTAs[0].ConsequenceLabel != "Approve + run plan" || c.CTAs[1].Role != messages.CTADecline {
		t.Fatalf("plan card %+v", c)
	}
	fail := &messages.ConnectionFailureEvent{ConnectionID: "cn-1", ConnectionFailure: messages.ConnectionFailure{
		FailureType: "consent_denied", Service: "Mail", Message: "Your admin blocked it.",
		RecoveryOptions: []messages.RecoveryOption{{Action: "skip", Label: "Skip"}, {Action: "ask", Label: "Ask IT"}, {Action: "retry", Label: "Retry"}}}}
	fc := failureContract(log, fail, review.Low)
	var order []string
	for _, cta := range fc.CTAs {
		order = append(order, cta.Answer)
	}
	if strings.Join(order, ",") != "ask,retry,skip" || fc.CTAs[0].Role != messages.CTARecommended {
		t.Errorf("failure CTAs %+v: want the first way out recommended, the skip last", fc.CTAs)
	}
	fail.RecoveryOptions = fail.RecoveryOptions[1:2]
	if fc := failureContract(log, fail, review.Low); fc.CTAs[len(fc.CTAs)-1].Answer != "skip" {
		t.Errorf("a failure card without a skip option got none: %+v", fc.CTAs)
	}
	if c := planContract(log, &messages.ApprovalRequestEvent{}, review.Medium, false, review.Reversible); c != nil {
		t.Errorf("a plan card without an intent was built: %+v", c)
	}
}
