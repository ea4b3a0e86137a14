package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/silas-ai/silas/messages"
)

// The session's side of the connection cards (spec 5.10, 8.1): they wait
// in the same queue as approvals, the head is asked, and a line typed
// while one is pending is its answer, as for plan cards.

// waitConnect is waitConn while a /connect command waits for the daemon's
// first answer, before the connection's id is known.
const waitConnect = "/connect"

// isConnectLine reports whether an owner line is the /connect command,
// which the daemon answers with a connection_status and cards, never with
// a chat message.
func isConnectLine(text string) bool {
	return text == waitConnect || strings.HasPrefix(text, waitConnect+" ")
}

// waiting reports whether the session waits for the server before it
// reads the next chat line: a reply to a message, or a connection's next
// step.
func (s *session) waiting() bool { return s.outstanding != "" || s.waitConn != "" }

// enqueue queues a card: it is asked at once when it is the only one, and
// given its safe answer when the input has already ended.
func (s *session) enqueue(c *card) error {
	s.approvals = append(s.approvals, c)
	if s.eof {
		return s.answerAtEOF()
	}
	if len(s.approvals) == 1 {
		s.prompt(c)
	}
	return nil
}

// answerAtEOF gives the head card its safe answer: decline, block, deny,
// skip or cancel.
func (s *session) answerAtEOF() error {
	head := s.approvals[0]
	switch {
	case head.gate != nil:
		return s.sendGate(verdictDeclined, "block", "end of input")
	case head.yesNo():
		return s.answerApproval(false, "end of input")
	}
	return s.reply(head.conn.safe(), "end of input")
}

// answerConn answers the head connection card with a typed line.
func (s *session) answerConn(line string) error {
	return s.reply(s.approvals[0].conn.answer(line), "")
}

// answerSecret stores the secret typed at the head secure-input card
// through the daemon's secure endpoint, then tells the server the outcome
// with secure_input_completed, which never carries the value. An empty
// line cancels the setup; a failure that may pass asks again.
func (s *session) answerSecret(ctx context.Context, value []byte) error {
	c := s.approvals[0].conn
	if len(value) == 0 {
		return s.reply(connReply{frame: c.setupFrame(actionCancel), said: actionCancel, wait: true}, "")
	}
	err := s.secrets.store(ctx, c.requestID, value)
	switch {
	case err == nil:
		return s.reply(connReply{frame: secureInputCompletedFrame(c.requestID, true),
			said: "stored in the daemon's secure store (the chat never carried it)", wait: true}, "")
	case errors.Is(err, errSecretGone):
		return s.reply(connReply{frame: secureInputCompletedFrame(c.requestID, false),
			note: "the secret was not stored: " + err.Error()}, "")
	}
	return s.reply(connReply{keep: true,
		note: "the secret was not stored: " + err.Error() + "; type it again, or an empty line to cancel"}, "")
}

// reply carries out r for the head card; why, when set, says why the CLI
// answered by itself.
func (s *session) reply(r connReply, why string) error {
	head := s.approvals[0]
	c := head.conn
	c.troubled = false
	if r.note != "" {
		fmt.Fprintf(s.opts.Err, "%s\n", r.note)
	}
	switch {
	case r.said == "":
	case why != "":
		fmt.Fprintf(s.opts.Err, "connection card for %s answered %s: %s\n", printable(c.name()), r.said, why)
	default:
		fmt.Fprintf(s.opts.Out, "%s\n", r.said)
	}
	if r.frame != nil {
		if err := s.write(r.frame); err != nil {
			return s.writeFailed(err)
		}
	}
	if r.keep {
		if r.said == actionTrouble {
			c.troubled = true // asked again under the server's answer
			return nil
		}
		s.ask(head)
		return nil
	}
	s.approvals = s.approvals[1:]
	if r.wait && c.connID != "" {
		s.waitConn = c.connID
		fmt.Fprintf(s.opts.Out, "waiting for %s ...\n", printable(c.name()))
	}
	if len(s.approvals) > 0 && !s.eof {
		s.prompt(s.approvals[0])
	}
	return nil
}

// onConnEvent shows a connection event: a card is queued, anything else
// is one line. It closes the queued cards the event makes stale and ends
// a wait for the connection's next step.
func (s *session) onConnEvent(ev event) error {
	u := updateOf(ev)
	headClosed := s.closeStale(u)
	var c *card
	if ev.Type != messages.EventConnectionStatus {
		cc, err := parseConnCard(ev.Type, ev.raw)
		switch {
		case err != nil:
			s.breakLine()
			fmt.Fprintf(s.opts.Err, "silas sent a %s card the CLI cannot read (%v); answer it in the app\n", printable(ev.Type), err)
			if ev.Type != messages.EventApprovalRequest {
				s.waitFor(u, true)
				return s.promptAfterClose(headClosed)
			}
			c = summaryCard(ev) // still answerable y/N from its title and body
		case cc != nil:
			cc.typed = cc.kind == kindSecret && s.secrets != nil
			c = &card{conn: cc}
		}
	}
	s.waitFor(u, c != nil)
	if c != nil {
		if headClosed && len(s.approvals) > 0 {
			s.approvals = append(s.approvals, c)
			return s.promptAfterClose(true)
		}
		return s.enqueue(c)
	}
	interrupted := s.open
	s.breakLine()
	if err := writeConnInfo(s.opts.Out, ev.Type, ev.raw); err != nil {
		fmt.Fprintf(s.opts.Err, "silas sent a %s event the CLI cannot read: %v\n", ev.Type, err)
	}
	if len(s.approvals) > 0 && !headClosed && !s.eof {
		head := s.approvals[0]
		troubled := head.conn != nil && head.conn.troubled && head.conn.connID == u.connID
		if interrupted || troubled {
			// Ask again under the line: after "trouble", once the
			// server has answered it.
			if head.conn != nil {
				head.conn.troubled = false
			}
			s.ask(head)
		}
	}
	return s.promptAfterClose(headClosed)
}

// promptAfterClose asks the new head card after the old one was closed.
func (s *session) promptAfterClose(headClosed bool) error {
	if headClosed && len(s.approvals) > 0 && !s.eof {
		s.prompt(s.approvals[0])
	}
	return nil
}

// closeStale drops the queued cards u ends, and reports whether the head,
// the card being asked, was one of them.
func (s *session) closeStale(u connUpdate) (headClosed bool) {
	for i := 0; i < len(s.approvals); {
		c := s.approvals[i].conn
		if c == nil || !c.closedBy(u) {
			i++
			continue
		}
		if i == 0 {
			headClosed = true
			s.breakLine()
			fmt.Fprintf(s.opts.Out, "(the card for %s is no longer pending)\n", printable(c.name()))
			if s.secretLine {
				// Echo stays off until the line ends: part of a secret
				// may be typed already.
				fmt.Fprintln(s.opts.Out, "(press Enter to go on: what you type until then is not shown and not sent)")
			}
		}
		s.approvals = slices.Delete(s.approvals, i, i+1)
	}
	return headClosed
}

// waitFor ends a wait that u answers. While a /connect waits, its status
// line names the connection whose card to wait for next.
func (s *session) waitFor(u connUpdate, card bool) {
	switch {
	case s.waitConn == "":
	case s.waitConn == waitConnect:
		switch {
		case u.typ == messages.EventConnectionStatus && u.connID != "":
			s.outstanding, s.waitConn = "", u.connID
		case card && (u.typ == messages.EventApprovalRequest || u.typ == messages.EventConnectionFailure):
			s.outstanding, s.waitConn = "", ""
		}
	case u.connID == s.waitConn && u.ends(card):
		s.waitConn = ""
	}
}

// settleConnect ends a /connect's wait when the server answered it as a
// chat message (a server that does not know the command) or refused it.
func (s *session) settleConnect() {
	if s.outstanding == "" && s.waitConn == waitConnect {
		s.waitConn = ""
	}
}

// breakLine ends the line of an open question, so that what the server
// says next starts on a line of its own.
func (s *session) breakLine() {
	if s.open {
		fmt.Fprintln(s.opts.Out)
		s.open = false
	}
}

// updateOf reads what closing and waiting need from a connection event.
func updateOf(ev event) connUpdate {
	var f struct {
		ConnectionID string                    `json:"connection_id"`
		StepType     string                    `json:"step_type"`
		Status       messages.ConnectionStatus `json:"status"`
		Connection   struct {
			ConnectionID string `json:"connection_id"`
		} `json:"connection"`
	}
	_ = json.Unmarshal(ev.raw, &f) // a frame that does not decode closes nothing
	u := connUpdate{connID: f.ConnectionID, typ: ev.Type, step: f.StepType, status: f.Status}
	if ev.Type == messages.EventApprovalRequest {
		u.connID = f.Connection.ConnectionID
	}
	return u
}
