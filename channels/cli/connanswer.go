package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// Values of the connection cards' answer frames (spec 8.1): the action of
// a connection_setup_response (done, trouble or cancel), the
// selected_action of a connection_failure_response, the verdict of a
// permission_escalation_response. A connection_manage card is an
// approval_request and is answered with an approval_response.
const (
	actionDone    = messages.ConnectionSetupActionDone
	actionCancel  = messages.ConnectionSetupActionCancel
	actionTrouble = "trouble"
	actionSkip    = "skip"

	verdictApprove  = "approve"
	verdictJustOnce = "just_this_once"
	verdictDeny     = "deny"
)

// connReply is what one typed line does to a connection card.
type connReply struct {
	// frame is sent to the server; nil sends nothing.
	frame *messages.Frame
	// said is the answer as the CLI prints it after the question.
	said string
	// keep leaves the card at the head of the queue.
	keep bool
	// wait holds back the next chat line until the connection's next card
	// or status: the answer's outcome comes first, as a reply to a chat
	// message does.
	wait bool
	// note is printed on stderr. It never quotes the typed line, which
	// may be a secret pasted in the wrong place.
	note string
}

// answer maps a line the owner typed to the card's reply. A line that is
// none of the choices keeps the card with a note and sends nothing.
// connection_manage cards are answered y/N by the session, not here.
func (c *connCard) answer(line string) connReply {
	a := strings.ToLower(strings.TrimSpace(line))
	switch c.kind {
	case kindSetup:
		switch a {
		case "", "d", "done":
			return connReply{frame: c.setupFrame(actionDone), said: actionDone, wait: true}
		case "t", "trouble":
			return connReply{frame: c.setupFrame(actionTrouble), said: actionTrouble, keep: true}
		case "c", "cancel":
			return connReply{frame: c.setupFrame(actionCancel), said: actionCancel, wait: true}
		}
		return connReply{keep: true, note: "answer d (done), t (trouble) or c (cancel)"}
	case kindSecret:
		switch a {
		case "c", "cancel":
			return connReply{frame: c.setupFrame(actionCancel), said: actionCancel, wait: true}
		case "":
			return connReply{keep: true, note: "Silas is still waiting for the secret: run `silas connections secret " +
				shellWord(c.requestID) + "` in another terminal, or use the app's secure form"}
		}
		return connReply{keep: true, note: "that line was not sent: a secret never goes through the chat. Run `silas connections secret " +
			shellWord(c.requestID) + "` in another terminal (it does not echo) or use the app's secure form; " +
			"type cancel to stop the setup. If you typed the secret, clear it from your terminal's scrollback"}
	case kindFailure:
		choices := recoveryChoices(c.failure)
		if a == "" || a == "s" || a == actionSkip {
			return connReply{frame: c.failureFrame(actionSkip), said: actionSkip}
		}
		if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(choices) {
			return connReply{frame: c.failureFrame(choices[n-1].Action), said: printable(choices[n-1].Label)}
		}
		for _, o := range choices {
			if a == strings.ToLower(o.Action) || a == strings.ToLower(o.Label) {
				return connReply{frame: c.failureFrame(o.Action), said: printable(o.Label)}
			}
		}
		if len(choices) == 0 {
			return connReply{keep: true, note: "answer s (skip)"}
		}
		return connReply{keep: true, note: fmt.Sprintf("answer with a number from 1 to %d, or s (skip)", len(choices))}
	case kindPermission:
		switch a {
		case "a", "approve", "y", "yes":
			return connReply{frame: c.permissionFrame(verdictApprove), said: verdictApprove}
		case "o", "once", "just this once", verdictJustOnce:
			return connReply{frame: c.permissionFrame(verdictJustOnce), said: "just this once"}
		case "", "d", "deny", "n", "no":
			return connReply{frame: c.permissionFrame(verdictDeny), said: verdictDeny}
		}
		return connReply{keep: true, note: "answer a (approve), o (just this once) or d (deny)"}
	}
	return connReply{keep: true, note: "this card is answered y or n"}
}

// safe is the card's answer when the input has ended: nothing is widened,
// retried or left half set up.
func (c *connCard) safe() connReply {
	switch c.kind {
	case kindSetup, kindSecret:
		return connReply{frame: c.setupFrame(actionCancel), said: actionCancel}
	case kindFailure:
		return connReply{frame: c.failureFrame(actionSkip), said: actionSkip}
	case kindPermission:
		return connReply{frame: c.permissionFrame(verdictDeny), said: verdictDeny}
	}
	return connReply{}
}

func (c *connCard) setupFrame(action string) *messages.Frame {
	step := messages.StepSecureInput
	if c.kind == kindSetup {
		step = c.setup.StepType
	}
	return &messages.Frame{Type: messages.TypeConnectionSetupResponse, RequestID: c.requestID, StepType: step, Action: action}
}

func (c *connCard) failureFrame(action string) *messages.Frame {
	return &messages.Frame{Type: messages.TypeConnectionFailureResponse, RequestID: c.requestID, SelectedAction: action}
}

func (c *connCard) permissionFrame(verdict string) *messages.Frame {
	f := &messages.Frame{Type: messages.TypePermissionEscalationResponse, RequestID: c.requestID, Verdict: verdict}
	if verdict != verdictDeny && c.perm != nil {
		f.Confirmation = typedConfirmation(c.perm.RiskLevel)
	}
	return f
}

// connUpdate is what the session needs to know of an incoming connection
// event to close the cards it makes stale.
type connUpdate struct {
	connID string
	typ    string                    // the event's type
	step   string                    // step_type of a connection_setup_step
	status messages.ConnectionStatus // of a connection_status
}

// closedBy reports whether u ends the card: the server has moved past it
// (the daemon closes these cards without telling the owner), so asking
// for an answer would only draw "no card is pending".
func (c *connCard) closedBy(u connUpdate) bool {
	if u.connID == "" || u.connID != c.connID {
		return false
	}
	switch c.kind {
	case kindConnect:
		// The card is answered, expired or replaced as soon as anything
		// else happens to a proposed connection.
		return u.typ != messages.EventPermissionEscalation
	case kindSetup, kindSecret:
		// A progress line or the status answering "trouble" leave the
		// step open; anything else ends it.
		switch {
		case u.typ == messages.EventPermissionEscalation,
			u.typ == messages.EventConnectionStatus && u.status == messages.ConnectionConnecting,
			u.typ == messages.EventConnectionSetupStep && u.step == messages.StepProgress:
			return false
		}
		return true
	case kindFailure:
		// The status that follows a failure leaves its card open; a new
		// card, a new setup or success replaces it.
		switch {
		case u.typ == messages.EventPermissionEscalation,
			u.typ == messages.EventConnectionStatus && u.status != messages.ConnectionConnecting && u.status != messages.ConnectionActive:
			return false
		}
		return true
	}
	return false
}

// ends reports whether u is the next step of a connection the session is
// waiting for: a card to answer, or a status other than "connecting".
func (u connUpdate) ends(card bool) bool {
	if card {
		return true
	}
	return u.typ == messages.EventConnectionStatus && u.status != messages.ConnectionConnecting
}
