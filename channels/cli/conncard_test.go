package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
)

// t0 is the clock the rendering tests show countdowns against.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func connectCardEvent() messages.ConnectionApprovalEvent {
	return messages.ConnectionApprovalEvent{
		Type: "approval_request", RequestID: "cc-approve", Scope: messages.ApprovalConnectionManage,
		Title: "Connect to GitHub?", Body: "Connect Silas to GitHub through the oauth-device skill (device_code).",
		RiskLevel: "medium", ExpiresAt: t0.Add(10 * time.Minute),
		Connection: messages.ConnectionSummary{ConnectionID: "cn-gh", Name: "GitHub", SkillName: "oauth-device", Provider: "GitHub",
			AuthStrategy: messages.AuthDeviceCode, Status: messages.ConnectionProposed,
			Permissions: []messages.ConnectionPermission{messages.PermissionObserve}, RequestedScopes: []string{"read:user"}},
	}
}

func deviceCardEvent() messages.ConnectionSetupStepEvent {
	exp := t0.Add(15 * time.Minute)
	return messages.ConnectionSetupStepEvent{
		Type: "connection_setup_step", RequestID: "cc-device", ConnectionID: "cn-gh", Service: "GitHub", StepType: messages.StepDeviceCode,
		SetupStep: messages.SetupStep{Type: messages.StepDeviceCode, VerificationURL: "https://github.com/login/device",
			UserCode: "WDJB-MJHT", ExpiresIn: 900, PollInterval: 5},
		ExpiresAt: &exp, RiskLevel: "low",
	}
}

func secretCardEvent(ref string) messages.SecureInputRequestEvent {
	hint, help := "starts with sk-", "https://example.com/keys"
	return messages.SecureInputRequestEvent{Type: "secure_input_request", RefID: ref, ConnectionID: "cn-key",
		Request: messages.SecureInputRequest{RefID: ref, Label: "Example API key", InputHint: &hint,
			Guidance: messages.SecureInputGuidance{Instructions: "Create a key on the settings page.", HelpURL: &help}}}
}

func failureCardEvent() messages.ConnectionFailureEvent {
	return messages.ConnectionFailureEvent{Type: "connection_failure", RequestID: "cc-fail", ConnectionID: "cn-gh", RiskLevel: "medium",
		ConnectionFailure: messages.ConnectionFailure{FailureType: messages.FailureTokenRevoked, Service: "GitHub", Message: "The access was revoked.",
			RecoveryOptions: []messages.RecoveryOption{
				{Action: "reconnect", Label: "Reconnect", Description: "Run the setup again", RiskLevel: "low"},
				{Action: "skip", Label: "Skip", RiskLevel: "low"},
				{Action: "draft_it_request", Label: "Draft IT request", Description: "Ask your admin", RiskLevel: "medium"},
			}}}
}

func permissionCardEvent() messages.PermissionEscalationEvent {
	return messages.PermissionEscalationEvent{Type: "permission_escalation", RequestID: "cc-perm", ConnectionID: "cn-gh", ConnectionName: "GitHub",
		CurrentPermissions: []string{"observe", "read:user"}, RequestedPermissions: []string{"act", "repo"},
		Reason: "scripts/api_request.py --method=POST needs act", RiskLevel: "high", ExpiresAt: t0.Add(5 * time.Minute)}
}

// mustCard parses ev as the daemon would send it.
func mustCard(t *testing.T, ev any) *connCard {
	t.Helper()
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		t.Fatal(err)
	}
	c, err := parseConnCard(head.Type, raw)
	if err != nil || c == nil {
		t.Fatalf("parseConnCard(%s) = %v, %v; want a card", raw, c, err)
	}
	return c
}

func TestConnCardRendering(t *testing.T) {
	expired := deviceCardEvent()
	past := t0.Add(-time.Second)
	expired.ExpiresAt = &past
	hostile := deviceCardEvent()
	hostile.Service = "Git\u202eHub"
	hostile.UserCode = "AB\x1b[2K\rCD"
	hostile.VerificationURL = "http://evil.example/login"
	browser := deviceCardEvent()
	browser.StepType, browser.ExpiresAt = messages.StepBrowserRedirect, nil
	browser.SetupStep = messages.SetupStep{Type: messages.StepBrowserRedirect,
		AuthURL: "https://auth.example.com/authorize?state=s1", ListeningOn: "127.0.0.1:43117"}
	onlySkip := failureCardEvent()
	onlySkip.RecoveryOptions = onlySkip.RecoveryOptions[1:2]

	tests := []struct {
		name     string
		ev       any
		want     []string
		not      []string
		question string
	}{
		{"connect", connectCardEvent(), []string{
			"approval requested: Connect to GitHub?\n",
			"  Connect Silas to GitHub through the oauth-device skill (device_code).\n",
			"  connection: GitHub (cn-gh), skill oauth-device, service GitHub\n",
			"  sign-in: device code (you enter a code on the service's own page)\n",
			"  Silas may: observe\n", "  asks the service for: read:user\n", "  risk: medium\n", "  answer within: 10m0s",
		}, []string{"already granted", "account:"}, "connect? [y/N] "},
		{"device code", deviceCardEvent(), []string{
			"connection GitHub (cn-gh): sign in with a code\n", "  1. open https://github.com/login/device\n",
			"  2. enter the code WDJB-MJHT\n", "  the code expires: in 15m0s (at ", "never sees your password",
		}, []string{"not an https link"}, "done, trouble or cancel? [D/t/c] "},
		{"device code expired", expired, []string{"the code expires: in no time: it has expired"}, nil, "done, trouble or cancel? [D/t/c] "},
		{"device code from a hostile script", hostile, []string{
			`connection Git\u202eHub (cn-gh)`, `enter the code AB\u001b[2K\u000dCD`,
			"open http://evil.example/login (not an https link: do not open it)",
		}, []string{"\x1b", "\r", "\u202e"}, "done, trouble or cancel? [D/t/c] "},
		{"browser redirect", browser, []string{
			"connection GitHub (cn-gh): sign in in your browser\n", "  open https://auth.example.com/authorize?state=s1\n",
			"returns to 127.0.0.1:43117 on this machine",
		}, []string{"enter the code"}, "done, trouble or cancel? [D/t/c] "},
		{"secure input", secretCardEvent("cn-key-cred"), []string{
			"connection cn-key: a secret is needed: Example API key\n", "  it looks like: starts with sk-\n",
			"  Create a key on the settings page.\n", "  help: https://example.com/keys\n",
			"Do not type it here", "    silas connections secret cn-key-cred\n", "without echo",
		}, nil, "press Enter once it is stored, or type cancel: "},
		{"secure input with a ref_id that is not a plain word", secretCardEvent("x'; rm -rf ~"), []string{
			`    silas connections secret 'x'\''; rm -rf ~'` + "\n",
		}, nil, "press Enter once it is stored, or type cancel: "},
		{"failure", failureCardEvent(), []string{
			"connection problem: GitHub (cn-gh): token_revoked\n", "  The access was revoked.\n",
			"  1. Reconnect: Run the setup again (risk low)\n", "  2. Draft IT request: Ask your admin (risk medium)\n", "  s. Skip\n",
		}, []string{"3."}, "choose 1-2, or s to skip [S] "},
		{"failure with nothing but skip", onlySkip, []string{"  s. Skip\n"}, []string{"1."}, "press Enter to skip: "},
		{"permission", permissionCardEvent(), []string{
			"permission requested: give GitHub (cn-gh) more access\n", "  reason: scripts/api_request.py --method=POST needs act\n",
			"  it has: observe, read:user\n", "  it asks for: act, repo\n", "  risk: high\n", "  answer within: 5m0s",
			"just this once: allow this one call",
		}, nil, "approve, just this once, or deny? [a/o/D] "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			mustCard(t, tt.ev).write(&out, t0)
			got := out.String()
			if !strings.HasSuffix(got, "\n"+tt.question) {
				t.Errorf("card does not end with its question %q:\n%s", tt.question, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("card lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("card shows %q:\n%s", n, got)
				}
			}
		})
	}
}

func TestConnInfoLines(t *testing.T) {
	pct := 40.0
	progress := messages.ConnectionSetupStepEvent{Type: "connection_setup_step", ConnectionID: "cn-gh", Service: "GitHub", StepType: messages.StepProgress,
		SetupStep: messages.SetupStep{Type: messages.StepProgress, Message: "Waiting for you to approve", ProgressPct: &pct}}
	done := messages.ConnectionSetupStepEvent{Type: "connection_setup_step", ConnectionID: "cn-gh", Service: "GitHub", StepType: messages.StepCompletion,
		SetupStep: messages.SetupStep{Type: messages.StepCompletion, Success: true, Summary: "Connected as octocat", PermissionsGranted: []string{"read:user"}}}
	failed := messages.ConnectionSetupStepEvent{Type: "connection_setup_step", ConnectionID: "cn-gh", StepType: messages.StepFailure,
		SetupStep: messages.SetupStep{Type: messages.StepFailure, Failure: &messages.ConnectionFailure{FailureType: "consent_denied", Message: "Wrong state"}}}
	orphan := deviceCardEvent()
	orphan.RequestID = ""
	tests := []struct {
		name string
		ev   any
		want string
	}{
		{"status", messages.ConnectionStatusEvent{Type: "connection_status", ConnectionID: "cn-gh", Name: "GitHub", Status: "active", Detail: "Connected as octocat"},
			"connection GitHub: active (Connected as octocat)\n"},
		{"status without a name or detail", messages.ConnectionStatusEvent{Type: "connection_status", ConnectionID: "cn-gh", Status: "proposed"},
			"connection cn-gh: proposed\n"},
		{"status with a forged line", messages.ConnectionStatusEvent{Type: "connection_status", ConnectionID: "cn-gh", Name: "GitHub", Status: "failed", Detail: "x\nconnection GitHub: active"},
			`connection GitHub: failed (x\u000aconnection GitHub: active)` + "\n"},
		{"progress", progress, "connection GitHub: Waiting for you to approve (40%)\n"},
		{"completion", done, "connection GitHub: signed in: Connected as octocat; granted read:user\n"},
		{"failure step", failed, "connection cn-gh: the sign-in failed: consent_denied: Wrong state\n"},
		{"device code without a request_id", orphan, "connection GitHub: device_code step without a request_id; answer it in the app\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			var head struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(raw, &head)
			if head.Type != messages.EventConnectionStatus {
				if c, err := parseConnCard(head.Type, raw); c != nil || err != nil {
					t.Fatalf("parseConnCard = %v, %v; want no card for an informational step", c, err)
				}
			}
			var out bytes.Buffer
			if err := writeConnInfo(&out, head.Type, raw); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Fatalf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}

func TestParseConnCardRefusesUnreadableCards(t *testing.T) {
	tests := []struct{ typ, raw string }{
		{"permission_escalation", `{"type":"permission_escalation","connection_id":"cn-gh"}`},
		{"secure_input_request", `{"type":"secure_input_request","connection_id":"cn-gh","request":{"label":"key"}}`},
		{"connection_failure", `{"type":"connection_failure","request_id":7}`},
		{"message", `{"type":"message"}`},
	}
	for _, tt := range tests {
		if c, err := parseConnCard(tt.typ, []byte(tt.raw)); err == nil {
			t.Errorf("parseConnCard(%s) = %+v, want an error", tt.raw, c)
		}
	}
}

func TestConnCardAnswers(t *testing.T) {
	device := func(t *testing.T) *connCard { return mustCard(t, deviceCardEvent()) }
	secret := func(t *testing.T) *connCard { return mustCard(t, secretCardEvent("cn-key-cred")) }
	failure := func(t *testing.T) *connCard { return mustCard(t, failureCardEvent()) }
	perm := func(t *testing.T) *connCard { return mustCard(t, permissionCardEvent()) }
	setup := func(action string) string {
		return `{"type":"connection_setup_response","request_id":"cc-device","step_type":"device_code","action":"` + action + `"}`
	}
	recovery := func(action string) string {
		return `{"type":"connection_failure_response","request_id":"cc-fail","selected_action":"` + action + `"}`
	}
	// The card is high risk: an approving answer carries the slide the
	// server requires (the typed answer is the terminal's slide).
	verdict := func(v string) string {
		if v == verdictDeny {
			return `{"type":"permission_escalation_response","request_id":"cc-perm","verdict":"` + v + `"}`
		}
		return `{"type":"permission_escalation_response","request_id":"cc-perm","verdict":"` + v + `","confirmation":{"method":"slide"}}`
	}
	tests := []struct {
		name  string
		card  func(*testing.T) *connCard
		line  string
		frame string // "" sends nothing
		said  string
		keep  bool
		wait  bool
		note  string
	}{
		{"device: Enter is done", device, "", setup("done"), "done", false, true, ""},
		{"device: d", device, " D ", setup("done"), "done", false, true, ""},
		{"device: trouble keeps the card", device, "trouble", setup("trouble"), "trouble", true, false, ""},
		{"device: t", device, "t", setup("trouble"), "trouble", true, false, ""},
		{"device: cancel", device, "c", setup("cancel"), "cancel", false, true, ""},
		{"device: anything else is asked again", device, "yes please", "", "", true, false, "answer d (done), t (trouble) or c (cancel)"},
		{"secret: cancel", secret, "cancel", `{"type":"connection_setup_response","request_id":"cn-key-cred","step_type":"secure_input","action":"cancel"}`, "cancel", false, true, ""},
		{"secret: Enter reminds", secret, "", "", "", true, false, "silas connections secret cn-key-cred"},
		{"secret: a pasted secret is not sent", secret, "sk-live-0123456789abcdef", "", "", true, false, "that line was not sent"},
		{"secret: done is not sent either", secret, "done", "", "", true, false, "that line was not sent"},
		{"failure: Enter skips", failure, "", recovery("skip"), "skip", false, false, ""},
		{"failure: s", failure, "s", recovery("skip"), "skip", false, false, ""},
		{"failure: 1", failure, "1", recovery("reconnect"), "Reconnect", false, false, ""},
		{"failure: 2 skips skip", failure, "2", recovery("draft_it_request"), "Draft IT request", false, false, ""},
		{"failure: by action", failure, "reconnect", recovery("reconnect"), "Reconnect", false, false, ""},
		{"failure: by label", failure, "draft it request", recovery("draft_it_request"), "Draft IT request", false, false, ""},
		{"failure: out of range", failure, "3", "", "", true, false, "answer with a number from 1 to 2, or s (skip)"},
		{"failure: zero", failure, "0", "", "", true, false, "answer with a number from 1 to 2"},
		{"permission: a", perm, "a", verdict("approve"), "approve", false, false, ""},
		{"permission: y", perm, "Yes", verdict("approve"), "approve", false, false, ""},
		{"permission: o", perm, "o", verdict("just_this_once"), "just this once", false, false, ""},
		{"permission: just this once", perm, "just this once", verdict("just_this_once"), "just this once", false, false, ""},
		{"permission: Enter denies", perm, "", verdict("deny"), "deny", false, false, ""},
		{"permission: n", perm, "n", verdict("deny"), "deny", false, false, ""},
		{"permission: anything else is asked again", perm, "maybe", "", "", true, false, "answer a (approve), o (just this once) or d (deny)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.card(t).answer(tt.line)
			frame := ""
			if r.frame != nil {
				b, err := json.Marshal(r.frame)
				if err != nil {
					t.Fatal(err)
				}
				frame = string(b)
			}
			if frame != tt.frame {
				t.Errorf("frame %s, want %s", frame, tt.frame)
			}
			if r.said != tt.said || r.keep != tt.keep || r.wait != tt.wait {
				t.Errorf("said %q keep %v wait %v, want %q %v %v", r.said, r.keep, r.wait, tt.said, tt.keep, tt.wait)
			}
			if tt.note == "" && r.note != "" || !strings.Contains(r.note, tt.note) {
				t.Errorf("note %q, want one containing %q", r.note, tt.note)
			}
			if tt.line != "" && strings.Contains(r.note, strings.TrimSpace(tt.line)) {
				t.Errorf("note %q repeats the typed line", r.note)
			}
		})
	}
}

// At end of input every card gets the answer that widens, retries and
// keeps nothing.
func TestConnCardSafeAnswers(t *testing.T) {
	tests := []struct {
		ev   any
		want string
	}{
		{deviceCardEvent(), `{"type":"connection_setup_response","request_id":"cc-device","step_type":"device_code","action":"cancel"}`},
		{secretCardEvent("cn-key-cred"), `{"type":"connection_setup_response","request_id":"cn-key-cred","step_type":"secure_input","action":"cancel"}`},
		{failureCardEvent(), `{"type":"connection_failure_response","request_id":"cc-fail","selected_action":"skip"}`},
		{permissionCardEvent(), `{"type":"permission_escalation_response","request_id":"cc-perm","verdict":"deny"}`},
	}
	for _, tt := range tests {
		r := mustCard(t, tt.ev).safe()
		b, _ := json.Marshal(r.frame)
		if string(b) != tt.want || r.keep || r.wait {
			t.Errorf("safe() = %s keep %v wait %v, want %s", b, r.keep, r.wait, tt.want)
		}
	}
}

// The daemon closes a card without telling the owner when the flow moves
// on; the CLI must stop asking for it then, and only then.
func TestConnCardClosedBy(t *testing.T) {
	status := func(id string, st messages.ConnectionStatus) connUpdate {
		return connUpdate{connID: id, typ: messages.EventConnectionStatus, status: st}
	}
	step := func(st string) connUpdate {
		return connUpdate{connID: "cn-gh", typ: messages.EventConnectionSetupStep, step: st}
	}
	failure := connUpdate{connID: "cn-gh", typ: messages.EventConnectionFailure}
	perm := connUpdate{connID: "cn-gh", typ: messages.EventPermissionEscalation}
	tests := []struct {
		name   string
		ev     any
		u      connUpdate
		closed bool
	}{
		{"device: another connection", deviceCardEvent(), status("cn-other", messages.ConnectionActive), false},
		{"device: trouble's status", deviceCardEvent(), status("cn-gh", messages.ConnectionConnecting), false},
		{"device: progress", deviceCardEvent(), step(messages.StepProgress), false},
		{"device: completion", deviceCardEvent(), step(messages.StepCompletion), true},
		{"device: active", deviceCardEvent(), status("cn-gh", messages.ConnectionActive), true},
		{"device: cancelled", deviceCardEvent(), status("cn-gh", messages.ConnectionProposed), true},
		{"device: failure card", deviceCardEvent(), failure, true},
		{"device: permission card", deviceCardEvent(), perm, false},
		{"connect: status", connectCardEvent(), status("cn-gh", messages.ConnectionConnecting), true},
		{"connect: another connection", connectCardEvent(), status("cn-x", messages.ConnectionConnecting), false},
		{"failure: its own status", failureCardEvent(), status("cn-gh", messages.ConnectionFailed), false},
		{"failure: proposed", failureCardEvent(), status("cn-gh", messages.ConnectionProposed), false},
		{"failure: a new setup", failureCardEvent(), status("cn-gh", messages.ConnectionConnecting), true},
		{"failure: a new failure", failureCardEvent(), failure, true},
		{"failure: active again", failureCardEvent(), status("cn-gh", messages.ConnectionActive), true},
		{"permission: the connection fails", permissionCardEvent(), failure, false},
		{"permission: status", permissionCardEvent(), status("cn-gh", messages.ConnectionActive), false},
		{"no connection id", deviceCardEvent(), connUpdate{typ: messages.EventConnectionStatus, status: messages.ConnectionActive}, false},
	}
	for _, tt := range tests {
		if got := mustCard(t, tt.ev).closedBy(tt.u); got != tt.closed {
			t.Errorf("%s: closedBy = %v, want %v", tt.name, got, tt.closed)
		}
	}
}
