package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/silas-ai/silas/messages"
)

// session is one chat connection. Only loop and the methods it calls touch
// its fields; readEvents and readLines talk to it through channels.
type session struct {
	conn *websocket.Conn
	opts Options

	events  chan event
	readErr chan error
	want    chan struct{} // asks readLines for one line
	lines   chan inputLine
	done    chan struct{}

	outstanding string  // message_id awaiting its answer
	approvals   []event // approval requests and connection cards; the head is being asked
	reading     bool    // a line has been asked for
	eof         bool    // input has ended
	// waitConn is the connection whose next card or status the session
	// waits for before it reads a chat line (connsession.go).
	waitConn string
	open     bool // a question ends the last line printed
}

// loop is the session's state machine; see the package doc for the rules.
func (s *session) loop(ctx context.Context) error {
	for {
		if s.eof && !s.waiting() {
			s.closeNormally()
			return nil
		}
		if !s.reading && !s.eof && (!s.waiting() || len(s.approvals) > 0) {
			s.want <- struct{}{}
			s.reading = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case l := <-s.lines:
			s.reading = false
			if err := s.onLine(l); err != nil {
				return err
			}
		case ev := <-s.events:
			if err := s.onEvent(ev); err != nil {
				return err
			}
		case err := <-s.readErr:
			return s.readFailed(err)
		}
	}
}

func (s *session) onLine(l inputLine) error {
	s.open = false
	if l.eof {
		s.eof = true
		if l.err != nil {
			return fmt.Errorf("read input: %w", l.err)
		}
		for len(s.approvals) > 0 {
			if err := s.answerAtEOF(); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.approvals) > 0 {
		if isChoice(s.approvals[0]) {
			return s.answerConn(l.text)
		}
		answer := strings.ToLower(strings.TrimSpace(l.text))
		return s.answerApproval(answer == "y" || answer == "yes", "")
	}
	text := strings.TrimSpace(l.text)
	if text == "" {
		return nil
	}
	id := newMessageID()
	if err := s.write(messageFrame{Type: "message", Text: text, MessageID: id}); err != nil {
		return s.writeFailed(err)
	}
	s.outstanding = id
	if isConnectLine(text) {
		s.waitConn = waitConnect
	}
	return nil
}

func (s *session) onEvent(ev event) error {
	switch ev.Type {
	case "message":
		fmt.Fprintf(s.opts.Out, "silas> %s\n", ev.Text)
		s.settle(ev.ReplyTo)
	case "error":
		fmt.Fprintf(s.opts.Err, "error: %s (%s)\n", ev.Message, ev.Code)
		s.settle(ev.ReplyTo)
		if ev.ReplyTo == "" {
			s.waitConn = "" // a refused card answer: its outcome will not come
		}
	case "approval_request":
		if ev.Scope == string(messages.ApprovalConnectionManage) {
			return s.onConnEvent(ev)
		}
		return s.enqueue(ev)
	case messages.EventConnectionSetupStep, messages.EventConnectionFailure, messages.EventSecureInputRequest,
		messages.EventConnectionStatus, messages.EventPermissionEscalation:
		return s.onConnEvent(ev)
	case "skill_install_result":
		fmt.Fprintf(s.opts.Out, "skill %s: %s", printable(ev.Name), printable(ev.Status))
		if ev.Detail != "" {
			fmt.Fprintf(s.opts.Out, " (%s)", printable(ev.Detail))
		}
		fmt.Fprintln(s.opts.Out)
	case "ack":
		// Receipt of a message; the answer follows.
	default:
		if isCard(ev.Type) {
			fmt.Fprintf(s.opts.Err, "silas sent a %s card, which the CLI cannot answer; use the web UI\n", ev.Type)
		}
		// Other events (progress and future types) are not shown.
	}
	return nil
}

// settle ends the wait for the outstanding message when replyTo names it or
// names nothing (a server that does not echo ids).
func (s *session) settle(replyTo string) {
	if replyTo == "" || replyTo == s.outstanding {
		s.outstanding = ""
		s.settleConnect()
	}
}

// prompt shows an approval request and asks for the verdict. With a plan
// card it shows every field the approval token signs, not only the
// summary fields of spec 8.1.
func (s *session) prompt(ev event) {
	out := s.opts.Out
	s.open = true
	if ev.card != nil {
		ev.card.write(out, time.Now())
		return
	}
	fmt.Fprintf(out, "approval requested: %s\n", printable(ev.Title))
	if ev.Skill != nil {
		writeSkillCard(out, ev.Skill)
		fmt.Fprint(out, question(ev))
		return
	}
	if ev.Plan != nil {
		writePlanCard(out, ev.Plan, "  ")
		fmt.Fprint(out, question(ev))
		return
	}
	if ev.Body != "" {
		for _, l := range strings.Split(ev.Body, "\n") {
			fmt.Fprintf(out, "%s\n", printable(l))
		}
	}
	if len(ev.Budget) > 0 && string(ev.Budget) != "null" {
		fmt.Fprintf(out, "budget: %s\n", printable(string(ev.Budget)))
	}
	if len(ev.Verify) > 0 && string(ev.Verify) != "null" {
		fmt.Fprintf(out, "verify: %s\n", printable(string(ev.Verify)))
	}
	fmt.Fprint(out, question(ev))
}

// answerApproval answers the head approval request and prompts for the next.
func (s *session) answerApproval(approve bool, why string) error {
	req := s.approvals[0]
	s.approvals = s.approvals[1:]
	verdict := verdictDeclined
	if approve {
		verdict = verdictApproved
	}
	if why != "" {
		fmt.Fprintf(s.opts.Err, "approval %q %s: %s\n", req.Title, verdict, why)
	} else {
		fmt.Fprintf(s.opts.Out, "%s\n", verdict)
	}
	err := s.write(approvalResponseFrame{Type: "approval_response", RequestID: req.RequestID, Verdict: verdict})
	if err != nil {
		return s.writeFailed(err)
	}
	if approve && req.card != nil && req.card.connID != "" {
		s.waitConn = req.card.connID // its setup's first step comes next
	}
	if len(s.approvals) > 0 && !s.eof {
		s.prompt(s.approvals[0])
	}
	return nil
}

func (s *session) write(v any) error {
	if err := s.conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return err
	}
	return s.conn.WriteJSON(v)
}

// readEvents decodes server frames until the connection fails.
func (s *session) readEvents() {
	for {
		_, data, err := s.conn.ReadMessage()
		if err != nil {
			s.readErr <- err
			return
		}
		var ev event
		if err := json.Unmarshal(data, &ev); err != nil {
			s.readErr <- fmt.Errorf("%w: malformed frame from server: %v", ErrClosed, err)
			return
		}
		ev.raw = data
		select {
		case s.events <- ev:
		case <-s.done:
			return
		}
	}
}

// readFailed turns the reader's error into Run's result.
func (s *session) readFailed(err error) error {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Code == CloseUnauthorized {
			return fmt.Errorf("%w: check the auth token (silas.channels.web.auth_token)", ErrUnauthorized)
		}
		return fmt.Errorf("%w by the server: code %d %s", ErrClosed, ce.Code, ce.Text)
	}
	if errors.Is(err, ErrClosed) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrClosed, err)
}

// writeFailed reports a failed write. The connection is broken, so the
// reader ends soon, usually with the close frame that explains why (such as
// 4001); that reason is preferred over the bare write error.
func (s *session) writeFailed(werr error) error {
	t := time.NewTimer(closeWait)
	defer t.Stop()
	for {
		select {
		case err := <-s.readErr:
			return s.readFailed(err)
		case <-s.events:
			// The connection is dead; unblock the reader.
		case <-t.C:
			return fmt.Errorf("%w: send: %v", ErrClosed, werr)
		}
	}
}

// closeNormally tells the server the conversation is over.
func (s *session) closeNormally() {
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	_ = s.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeWait))
}
