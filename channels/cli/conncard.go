package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
)

// connKind is what a queued connection card asks the owner.
type connKind int

// The connection cards the CLI answers (spec 5.10, 8.1).
const (
	// kindConnect is the approval_request of scope connection_manage,
	// answered y/N like a plan card.
	kindConnect connKind = iota + 1
	// kindSetup is a device_code or browser_redirect setup step: done,
	// trouble or cancel.
	kindSetup
	// kindSecret is a secure_input_request: the secret is typed here
	// with echo off and posted to the daemon's secure endpoint when
	// standard input is a terminal (connCard.typed), else it goes through
	// `silas connections secret` or the app's form and the card only
	// offers cancel. It never goes through the chat.
	kindSecret
	// kindFailure is a connection_failure: one of its recovery options,
	// or skip.
	kindFailure
	// kindPermission is a permission_escalation: approve, just this once
	// or deny.
	kindPermission
)

// connCard is a connection card waiting in the session's queue. Exactly
// one of the event pointers is set, as kind says.
type connCard struct {
	kind      connKind
	requestID string
	connID    string

	connect *messages.ConnectionApprovalEvent
	setup   *messages.ConnectionSetupStepEvent
	secret  *messages.SecureInputRequestEvent
	failure *messages.ConnectionFailureEvent
	perm    *messages.PermissionEscalationEvent

	// troubled is set after the owner answered "trouble": the card stays,
	// and is asked again once the server's status line has come.
	troubled bool
	// typed is set on a secure-input card whose secret the owner types
	// into this session, with echo off (session.answerSecret); without
	// it the card shows the `silas connections secret` command.
	typed bool
}

// parseConnCard decodes a connection event that asks for an answer. It
// returns nil, nil for an informational event (a progress or completion
// step, or a step without a request_id) and an error for a card the CLI
// cannot read.
func parseConnCard(typ string, raw []byte) (*connCard, error) {
	switch typ {
	case messages.EventApprovalRequest:
		var ev messages.ConnectionApprovalEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("connection card: %w", err)
		}
		return &connCard{kind: kindConnect, requestID: ev.RequestID, connID: ev.Connection.ConnectionID, connect: &ev}, nil
	case messages.EventConnectionSetupStep:
		var ev messages.ConnectionSetupStepEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("setup step card: %w", err)
		}
		switch {
		case ev.StepType == messages.StepSecureInput && ev.Request != nil:
			// A secure input sent as a setup step: the same card as
			// secure_input_request.
			return &connCard{kind: kindSecret, requestID: ev.Request.RefID, connID: ev.ConnectionID,
				secret: &messages.SecureInputRequestEvent{Type: messages.EventSecureInputRequest, RefID: ev.Request.RefID,
					ConnectionID: ev.ConnectionID, Request: *ev.Request}}, nil
		case ev.RequestID == "" || ev.StepType != messages.StepDeviceCode && ev.StepType != messages.StepBrowserRedirect:
			return nil, nil
		}
		return &connCard{kind: kindSetup, requestID: ev.RequestID, connID: ev.ConnectionID, setup: &ev}, nil
	case messages.EventSecureInputRequest:
		var ev messages.SecureInputRequestEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("secure input card: %w", err)
		}
		if ev.RefID == "" {
			ev.RefID = ev.Request.RefID
		}
		if ev.RefID == "" {
			return nil, fmt.Errorf("secure input card without a ref_id")
		}
		return &connCard{kind: kindSecret, requestID: ev.RefID, connID: ev.ConnectionID, secret: &ev}, nil
	case messages.EventConnectionFailure:
		var ev messages.ConnectionFailureEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("failure card: %w", err)
		}
		if ev.RequestID == "" {
			return nil, nil
		}
		return &connCard{kind: kindFailure, requestID: ev.RequestID, connID: ev.ConnectionID, failure: &ev}, nil
	case messages.EventPermissionEscalation:
		var ev messages.PermissionEscalationEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("permission card: %w", err)
		}
		if ev.RequestID == "" {
			return nil, fmt.Errorf("permission card without a request_id")
		}
		return &connCard{kind: kindPermission, requestID: ev.RequestID, connID: ev.ConnectionID, perm: &ev}, nil
	}
	return nil, fmt.Errorf("%s is not a connection card", typ)
}

// name is how the card names its connection: the service, or the id.
func (c *connCard) name() string {
	var n string
	switch c.kind {
	case kindConnect:
		n = c.connect.Connection.Name
	case kindSetup:
		n = c.setup.Service
	case kindFailure:
		n = c.failure.Service
	case kindPermission:
		n = c.perm.ConnectionName
	}
	if n == "" {
		n = c.connID
	}
	return n
}

// write prints the card and its question. Every string from the server
// goes through printable: a connection script writes much of it, and must
// not hide or fake a line of the card with terminal controls.
func (c *connCard) write(out io.Writer, now time.Time) {
	switch c.kind {
	case kindConnect:
		writeConnectCard(out, c.connect, now)
	case kindSetup:
		writeSetupCard(out, c.setup, now)
	case kindSecret:
		writeSecretCard(out, c.secret, c.typed)
	case kindFailure:
		writeFailureCard(out, c.failure)
	case kindPermission:
		writePermissionCard(out, c.perm, now)
	}
	fmt.Fprint(out, c.question())
}

// question is the prompt under the card; the capital letter is what an
// empty line answers.
func (c *connCard) question() string {
	switch c.kind {
	case kindConnect:
		return "connect? [y/N] "
	case kindSetup:
		return "done, trouble or cancel? [D/t/c] "
	case kindSecret:
		if c.typed {
			return "secret (not shown; an empty line cancels the setup): "
		}
		return "press Enter once it is stored, or type cancel: "
	case kindFailure:
		if n := len(recoveryChoices(c.failure)); n > 0 {
			return fmt.Sprintf("choose 1-%d, or s to skip [S] ", n)
		}
		return "press Enter to skip: "
	case kindPermission:
		return "approve, just this once, or deny? [a/o/D] "
	}
	return "? "
}

// recoveryChoices are a failure card's recovery options, skip left out:
// the CLI always offers it last, as the app does.
func recoveryChoices(ev *messages.ConnectionFailureEvent) []messages.RecoveryOption {
	var out []messages.RecoveryOption
	for _, o := range ev.RecoveryOptions {
		if o.Action != actionSkip {
			out = append(out, o)
		}
	}
	return out
}

func writeConnectCard(out io.Writer, ev *messages.ConnectionApprovalEvent, now time.Time) {
	fmt.Fprintf(out, "approval requested: %s\n", printable(ev.Title))
	for _, l := range strings.Split(strings.TrimSpace(ev.Body), "\n") {
		if l != "" {
			fmt.Fprintf(out, "  %s\n", printable(l))
		}
	}
	cn := ev.Connection
	fmt.Fprintf(out, "  connection: %s (%s), skill %s", printable(cn.Name), printable(cn.ConnectionID), printable(cn.SkillName))
	if cn.Provider != "" {
		fmt.Fprintf(out, ", service %s", printable(cn.Provider))
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "  sign-in: %s\n", strategyText(cn.AuthStrategy))
	tiers := make([]string, 0, len(cn.Permissions))
	for _, p := range cn.Permissions {
		tiers = append(tiers, string(p))
	}
	field(out, "Silas may", strings.Join(tiers, ", "))
	field(out, "asks the service for", strings.Join(cn.RequestedScopes, ", "))
	field(out, "already granted", strings.Join(cn.PermissionsGranted, ", "))
	field(out, "account", cn.Account)
	field(out, "risk", ev.RiskLevel)
	if !ev.ExpiresAt.IsZero() {
		field(out, "answer within", until(ev.ExpiresAt, now))
	}
}

func writeSetupCard(out io.Writer, ev *messages.ConnectionSetupStepEvent, now time.Time) {
	switch ev.StepType {
	case messages.StepDeviceCode:
		fmt.Fprintf(out, "connection %s (%s): sign in with a code\n", printable(ev.Service), printable(ev.ConnectionID))
		fmt.Fprintf(out, "  1. open %s\n", link(ev.VerificationURL))
		fmt.Fprintf(out, "  2. enter the code %s\n", printable(ev.UserCode))
		switch {
		case ev.ExpiresAt != nil:
			field(out, "the code expires", "in "+until(*ev.ExpiresAt, now))
		case ev.ExpiresIn > 0:
			field(out, "the code expires", fmt.Sprintf("%d s after it was issued", ev.ExpiresIn))
		}
		fmt.Fprintln(out, "  Silas sees when you are done; it never sees your password.")
	case messages.StepBrowserRedirect:
		fmt.Fprintf(out, "connection %s (%s): sign in in your browser\n", printable(ev.Service), printable(ev.ConnectionID))
		fmt.Fprintf(out, "  open %s\n", link(ev.AuthURL))
		fmt.Fprintf(out, "  the sign-in returns to %s on this machine; it never shows Silas your password.\n", printable(ev.ListeningOn))
	}
}

func writeSecretCard(out io.Writer, ev *messages.SecureInputRequestEvent, typed bool) {
	r := ev.Request
	fmt.Fprintf(out, "connection %s: a secret is needed: %s\n", printable(ev.ConnectionID), printable(r.Label))
	if r.InputHint != nil {
		field(out, "it looks like", *r.InputHint)
	}
	for _, l := range strings.Split(strings.TrimSpace(r.Guidance.Instructions), "\n") {
		if l != "" {
			fmt.Fprintf(out, "  %s\n", printable(l))
		}
	}
	if r.Guidance.HelpURL != nil && *r.Guidance.HelpURL != "" {
		fmt.Fprintf(out, "  help: %s\n", link(*r.Guidance.HelpURL))
	}
	if typed {
		fmt.Fprintln(out, "  Type it below: it is not shown, and goes straight to the daemon's secure store, never into the chat.")
		return
	}
	fmt.Fprintln(out, "  Do not type it here: the chat is stored. In another terminal, run")
	fmt.Fprintf(out, "    silas connections secret %s\n", shellWord(ev.RefID))
	fmt.Fprintln(out, "  which asks for it without echo, or use the secure form in the app.")
}

func writeFailureCard(out io.Writer, ev *messages.ConnectionFailureEvent) {
	fmt.Fprintf(out, "connection problem: %s (%s): %s\n", printable(ev.Service), printable(ev.ConnectionID), printable(ev.FailureType))
	for _, l := range strings.Split(strings.TrimSpace(ev.Message), "\n") {
		if l != "" {
			fmt.Fprintf(out, "  %s\n", printable(l))
		}
	}
	for i, o := range recoveryChoices(ev) {
		fmt.Fprintf(out, "  %d. %s", i+1, printable(o.Label))
		if o.Description != "" {
			fmt.Fprintf(out, ": %s", printable(o.Description))
		}
		if o.RiskLevel != "" {
			fmt.Fprintf(out, " (risk %s)", printable(o.RiskLevel))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out, "  s. Skip")
}

func writePermissionCard(out io.Writer, ev *messages.PermissionEscalationEvent, now time.Time) {
	fmt.Fprintf(out, "permission requested: give %s (%s) more access\n", printable(ev.ConnectionName), printable(ev.ConnectionID))
	field(out, "reason", ev.Reason)
	field(out, "it has", strings.Join(ev.CurrentPermissions, ", "))
	field(out, "it asks for", strings.Join(ev.RequestedPermissions, ", "))
	field(out, "risk", ev.RiskLevel)
	if !ev.ExpiresAt.IsZero() {
		field(out, "answer within", until(ev.ExpiresAt, now))
	}
	fmt.Fprintln(out, "  approve: keep the new access; just this once: allow this one call; deny: the call fails")
}

// writeConnInfo prints an event that needs no answer: a status change or
// a progress, completion or failure step.
func writeConnInfo(out io.Writer, typ string, raw []byte) error {
	switch typ {
	case messages.EventConnectionStatus:
		var ev messages.ConnectionStatusEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("connection status: %w", err)
		}
		name := ev.Name
		if name == "" {
			name = ev.ConnectionID
		}
		fmt.Fprintf(out, "connection %s: %s", printable(name), printable(string(ev.Status)))
		if ev.Detail != "" {
			fmt.Fprintf(out, " (%s)", printable(ev.Detail))
		}
		fmt.Fprintln(out)
	case messages.EventConnectionSetupStep:
		var ev messages.ConnectionSetupStepEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("setup step: %w", err)
		}
		name := ev.Service
		if name == "" {
			name = ev.ConnectionID
		}
		fmt.Fprintf(out, "connection %s: %s\n", printable(name), stepText(&ev))
	default:
		return fmt.Errorf("%s is not a connection event", typ)
	}
	return nil
}

// stepText is one line for a setup step that needs no answer.
func stepText(ev *messages.ConnectionSetupStepEvent) string {
	switch ev.StepType {
	case messages.StepProgress:
		s := printable(ev.Message)
		if ev.ProgressPct != nil {
			s += fmt.Sprintf(" (%.0f%%)", *ev.ProgressPct)
		}
		return s
	case messages.StepCompletion:
		verdict := "signed in"
		if !ev.Success {
			verdict = "the sign-in finished without success"
		}
		s := verdict
		if ev.Summary != "" {
			s += ": " + printable(ev.Summary)
		}
		if len(ev.PermissionsGranted) > 0 {
			s += "; granted " + printable(strings.Join(ev.PermissionsGranted, ", "))
		}
		return s
	case messages.StepFailure:
		if ev.Failure != nil {
			return "the sign-in failed: " + printable(ev.Failure.FailureType) + ": " + printable(ev.Failure.Message)
		}
		return "the sign-in failed"
	case messages.StepDeviceCode, messages.StepBrowserRedirect:
		return printable(ev.StepType) + " step without a request_id; answer it in the app"
	}
	return printable(ev.StepType) + " " + printable(ev.Message)
}

// field prints "  label: value" when value is set.
func field(out io.Writer, label, value string) {
	if value != "" {
		fmt.Fprintf(out, "  %s: %s\n", label, printable(value))
	}
}

func strategyText(a messages.AuthStrategy) string {
	switch a {
	case messages.AuthDeviceCode:
		return "device code (you enter a code on the service's own page)"
	case messages.AuthBrowserRedirect:
		return "browser sign-in (the service's page in your browser)"
	case messages.AuthSecureInput:
		return "a secret you type without echo (at this card from a terminal, into `silas connections secret` or the app's secure form), never into the chat"
	}
	return printable(string(a))
}

// until is how long until t, to the second, and the local clock time.
func until(t, now time.Time) string {
	d := t.Sub(now).Round(time.Second)
	if d <= 0 {
		return "no time: it has expired"
	}
	return fmt.Sprintf("%s (at %s)", d, t.Local().Format("15:04:05"))
}

// link shows a URL from a card. The daemon only sends https links (plain
// http only to loopback); anything else is flagged rather than trusted.
func link(u string) string {
	ok := strings.HasPrefix(u, "https://") && len(u) > len("https://") ||
		strings.HasPrefix(u, "http://127.0.0.1") || strings.HasPrefix(u, "http://localhost") || strings.HasPrefix(u, "http://[::1]")
	if !ok || strings.ContainsAny(u, " \"'<>`") {
		return printable(u) + " (not an https link: do not open it)"
	}
	return printable(u)
}

// shellWord quotes s for a POSIX shell unless it is plainly safe, so that
// the command the card shows runs as shown when pasted.
func shellWord(s string) string {
	safe := s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:", r))
	})
	if safe {
		return s
	}
	return "'" + printable(strings.ReplaceAll(s, "'", `'\''`)) + "'"
}
