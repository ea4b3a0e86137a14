package cli

import (
	"encoding/json"
	"testing"

	"github.com/silas-ai/silas/messages"
)

// A typed approval carries the rung the card's risk needs (spec 0.5.2):
// the slide for a high card, nothing below; a decline never carries one.
// An irreversible card needs a security key, which the CLI does not have:
// it sends the answer as it is, and the server refuses it saying so.
func TestTypedApprovalsCarryTheirRung(t *testing.T) {
	tests := []struct {
		risk, verdict, want string
	}{
		{"low", verdictApproved, `{"type":"approval_response","request_id":"r","verdict":"approved"}`},
		{"medium", verdictApproved, `{"type":"approval_response","request_id":"r","verdict":"approved"}`},
		{"high", verdictApproved, `{"type":"approval_response","request_id":"r","verdict":"approved","confirmation":{"method":"slide"}}`},
		{"high", verdictDeclined, `{"type":"approval_response","request_id":"r","verdict":"declined"}`},
		{"irreversible", verdictApproved, `{"type":"approval_response","request_id":"r","verdict":"approved"}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(approvalFrame("r", tt.verdict, tt.risk))
		if err != nil || string(b) != tt.want {
			t.Errorf("%s %s: %s (%v), want %s", tt.risk, tt.verdict, b, err, tt.want)
		}
	}
	for _, risk := range []string{"medium", "high"} {
		c := &connCard{kind: kindPermission, requestID: "p", perm: &messages.PermissionEscalationEvent{RiskLevel: risk}}
		for _, v := range []string{verdictApprove, verdictJustOnce, verdictDeny} {
			f := c.permissionFrame(v)
			if got, want := string(f.Confirmation), map[bool]string{true: `{"method":"slide"}`, false: ""}[risk == "high" && v != verdictDeny]; got != want {
				t.Errorf("permission %s at %s: confirmation %q, want %q", v, risk, got, want)
			}
		}
	}
	card := &card{skill: &messages.SkillInstallRequestEvent{RiskLevel: "high"}}
	if card.risk() != "high" {
		t.Errorf("a skill card's risk = %q", card.risk())
	}
}
