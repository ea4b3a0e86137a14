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
	approvals   []*card // approvals, gate approvals and connection cards; the head is being asked
	reading     bool    // a line has been asked for
	eof         bool    // input has ended
	// waitConn is the connection whose next card or status the session
	// waits for before it reads a chat line (connsession.go).
	waitConn string
	open     bool // a question ends the last line printed

	// secrets posts a secret typed at a secure-input card; nil when this
	// session takes none, for the reason noSecret.
	secrets  *secretClient
	noSecret string
	// echoOn turns the terminal's echo back on; nil while it is on.
	echoOn func()
	// secretLine is set while the line being read was asked for at a
	// secret prompt: it is typed with echo off, and never sent as chat.
	secretLine bool

	work workLog
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
			if err := s.onLine(ctx, l); err != nil {
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

func (s *session) onLine(ctx context.Context, l inputLine) error {
	defer clear(l.data) // it may be a secret
	if l.eof || s.secretLine {
		s.breakLine() // no echoed Enter ended the question's line
	}
	s.open = false
	if s.secretLine {
		s.secretLine = false
		s.restoreEcho()
		if !l.eof {
			if len(s.approvals) > 0 && s.approvals[0].typedSecret() {
				return s.answerSecret(ctx, l.data)
			}
			fmt.Fprintln(s.opts.Err, "the line typed at the closed secret prompt was not sent")
			if len(s.approvals) > 0 {
				s.ask(s.approvals[0])
			}
			return nil
		}
	}
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
		head := s.approvals[0]
		switch {
		case head.gate != nil:
			return s.answerGate(string(l.data))
		case head.yesNo():
			answer := strings.ToLower(strings.TrimSpace(string(l.data)))
			return s.answerApproval(answer == "y" || answer == "yes", "")
		}
		return s.answerConn(string(l.data))
	}
	text := strings.TrimSpace(string(l.data))
	if text == "" {
		return nil
	}
	id := newMessageID()
	if err := s.write(messageFrame(text, id)); err != nil {
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
	case messages.TypeMessage:
		var m messages.AnswerEvent
		if err := ev.decode(&m); err != nil {
			s.unreadable(ev, err)
		} else {
			fmt.Fprintf(s.opts.Out, "silas> %s\n", m.Text)
			if m.Error != nil {
				fmt.Fprintf(s.opts.Err, "turn error %s %s\n", printable(m.Error.Kind), retryHint(m.Error))
			}
		}
		s.settle(ev.ReplyTo)
	case "error":
		var e messages.ErrorEvent
		if err := ev.decode(&e); err != nil {
			s.unreadable(ev, err)
		} else {
			fmt.Fprintf(s.opts.Err, "error: %s (%s)\n", printable(e.Message), printable(string(e.Code)))
		}
		s.settle(ev.ReplyTo)
		if ev.ReplyTo == "" {
			s.waitConn = "" // a refused card answer: its outcome will not come
		}
	case messages.EventApprovalRequest:
		if ev.Scope == messages.ApprovalConnectionManage {
			return s.onConnEvent(ev)
		}
		c, err := approvalCard(ev)
		if err != nil {
			s.unreadable(ev, err)
			return nil
		}
		if c.approval != nil {
			s.work.named(c.approval.WorkItemID, c.approval.Title)
		}
		return s.enqueue(c)
	case messages.EventGateApproval:
		var g messages.GateApprovalEvent
		err := ev.decode(&g)
		if err == nil && g.RequestID == "" {
			err = fmt.Errorf("no request_id")
		}
		if err != nil {
			s.unreadable(ev, err)
			return nil
		}
		return s.enqueue(&card{gate: &g})
	case messages.EventWorkItemStatus:
		var w messages.WorkItemStatusEvent
		if err := ev.decode(&w); err != nil {
			s.unreadable(ev, err)
			return nil
		}
		if l := s.work.line(&w); l != "" {
			s.notice(l)
		}
	case messages.EventConnectionSetupStep, messages.EventConnectionFailure, messages.EventSecureInputRequest,
		messages.EventConnectionStatus, messages.EventPermissionEscalation:
		return s.onConnEvent(ev)
	case messages.EventSkillInstallResult:
		var r messages.SkillInstallResultEvent
		if err := ev.decode(&r); err != nil {
			s.unreadable(ev, err)
			return nil
		}
		fmt.Fprintf(s.opts.Out, "skill %s: %s", printable(r.Name), printable(r.Status))
		if r.Detail != "" {
			fmt.Fprintf(s.opts.Out, " (%s)", printable(r.Detail))
		}
		fmt.Fprintln(s.opts.Out)
	case "ack":
		// Receipt of a message; the answer follows.
	default:
		if isCard(ev.Type) {
			fmt.Fprintf(s.opts.Err, "silas sent a %s card, which the CLI cannot answer; use the web UI\n", printable(ev.Type))
		}
		// Other events (progress and future types) are not shown.
	}
	return nil
}

// retryHint says whether sending the same message again may help.
func retryHint(e *messages.TurnError) string {
	if e.Retryable {
		return "(retryable)"
	}
	return "(will fail again until fixed)"
}

// unreadable says that the server sent an event the CLI cannot decode; a
// card among them is left to the web app.
func (s *session) unreadable(ev event, err error) {
	s.breakLine()
	fmt.Fprintf(s.opts.Err, "silas sent a %s event the CLI cannot read (%v); answer or see it in the web app\n", printable(ev.Type), err)
}

// notice prints a line that needs no answer. A question it interrupted is
// asked again under it.
func (s *session) notice(line string) {
	interrupted := s.open
	s.breakLine()
	fmt.Fprintln(s.opts.Out, line)
	if interrupted && len(s.approvals) > 0 && !s.eof {
		s.ask(s.approvals[0])
	}
}

// settle ends the wait for the outstanding message when replyTo names it or
// names nothing (a server that does not echo ids).
func (s *session) settle(replyTo string) {
	if replyTo == "" || replyTo == s.outstanding {
		s.outstanding = ""
		s.settleConnect()
	}
}

// prompt shows a card and asks its question.
func (s *session) prompt(c *card) {
	if c.conn != nil && c.conn.kind == kindSecret && !c.conn.typed && s.noSecret != "" {
		fmt.Fprintf(s.opts.Err, "the CLI will not read the secret here: %s\n", s.noSecret)
	}
	s.beforeAsk(c)
	c.write(s.opts.Out, time.Now())
	s.open = true
}

// ask asks the card's question again, under a line that interrupted it.
func (s *session) ask(c *card) {
	s.beforeAsk(c)
	fmt.Fprint(s.opts.Out, c.question())
	s.open = true
}

// beforeAsk turns echo off before a secret prompt shows, so that nothing
// typed after it shows on the screen, and marks the line it asks for as
// the secret. Where echo cannot be turned off, the card falls back to the
// `silas connections secret` command.
func (s *session) beforeAsk(c *card) {
	if !c.typedSecret() {
		return
	}
	if s.echoOn == nil {
		restore, err := s.opts.Terminal.NoEcho()
		if err != nil {
			c.conn.typed = false
			fmt.Fprintf(s.opts.Err, "the CLI will not read the secret here: %v\n", err)
			return
		}
		s.echoOn = restore
	}
	s.secretLine = true
}

// restoreEcho turns the terminal's echo back on if it is off.
func (s *session) restoreEcho() {
	if s.echoOn != nil {
		s.echoOn()
		s.echoOn = nil
	}
}

// answerApproval answers the head y/N card and prompts for the next.
func (s *session) answerApproval(approve bool, why string) error {
	req := s.approvals[0]
	s.approvals = s.approvals[1:]
	verdict := verdictDeclined
	if approve {
		verdict = verdictApproved
	}
	if why != "" {
		fmt.Fprintf(s.opts.Err, "approval %q %s: %s\n", printable(req.title()), verdict, why)
	} else {
		fmt.Fprintf(s.opts.Out, "%s\n", verdict)
	}
	if err := s.write(approvalFrame(req.requestID(), verdict, req.risk())); err != nil {
		return s.writeFailed(err)
	}
	if approve && req.conn != nil && req.conn.connID != "" {
		s.waitConn = req.conn.connID // its setup's first step comes next
	}
	if len(s.approvals) > 0 && !s.eof {
		s.prompt(s.approvals[0])
	}
	return nil
}

// answerGate answers the head gate approval with a typed line; a line that
// is neither answer asks again and sends nothing.
func (s *session) answerGate(line string) error {
	verdict, said, ok := gateAnswer(line)
	if !ok {
		fmt.Fprintln(s.opts.Err, "answer a (approve) or b (block)")
		s.ask(s.approvals[0])
		return nil
	}
	return s.sendGate(verdict, said, "")
}

// sendGate sends the head gate approval's verdict and prompts for the
// next card; why, when set, says why the CLI answered by itself.
func (s *session) sendGate(verdict, said, why string) error {
	g := s.approvals[0].gate
	s.approvals = s.approvals[1:]
	if why != "" {
		fmt.Fprintf(s.opts.Err, "gate approval %s answered %s: %s\n", printable(g.GateName), said, why)
	} else {
		fmt.Fprintln(s.opts.Out, said)
	}
	if err := s.write(gateFrame(g.RequestID, verdict)); err != nil {
		return s.writeFailed(err)
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
