package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/silas-ai/silas/messages"
)

// card is a question queued for the owner; the head of the session's queue
// is the one being asked. Exactly one of its fields is set.
type card struct {
	// approval is a plan's approval_request, answered y/N. Its Plan is
	// empty from a server that sends only the summary fields of spec 8.1,
	// and for a connection card the CLI could not read (its title and
	// body are then all there is to show).
	approval *messages.ApprovalRequestEvent
	// skill is a skill_install approval_request, answered y/N.
	skill *messages.SkillInstallRequestEvent
	// gate is a gate_approval, answered approve or block.
	gate *messages.GateApprovalEvent
	// conn is a connection card (conncard.go).
	conn *connCard
}

// yesNo reports whether c is answered y/N with an approval_response.
func (c *card) yesNo() bool {
	return c.approval != nil || c.skill != nil || c.conn != nil && c.conn.kind == kindConnect
}

// requestID is the id the card's answer names.
func (c *card) requestID() string {
	switch {
	case c.approval != nil:
		return c.approval.RequestID
	case c.skill != nil:
		return c.skill.RequestID
	case c.gate != nil:
		return c.gate.RequestID
	}
	return c.conn.requestID
}

// risk is the risk_level the server gave a y/N card.
func (c *card) risk() string {
	switch {
	case c.approval != nil:
		return c.approval.RiskLevel
	case c.skill != nil:
		return c.skill.RiskLevel
	case c.conn != nil && c.conn.connect != nil:
		return c.conn.connect.RiskLevel
	}
	return ""
}

// title names the card in a notice.
func (c *card) title() string {
	switch {
	case c.approval != nil:
		return c.approval.Title
	case c.skill != nil:
		return c.skill.Title
	case c.gate != nil:
		return "gate " + c.gate.GateName
	case c.conn.kind == kindConnect:
		return c.conn.connect.Title
	}
	return c.conn.name()
}

// question is what the card asks, printed under it and again when another
// line interrupted it.
func (c *card) question() string {
	switch {
	case c.conn != nil:
		return c.conn.question()
	case c.skill != nil:
		return "install this skill? [y/N] "
	case c.gate != nil:
		return gateQuestion
	}
	return "approve? [y/N] "
}

// write prints the card and its question. Every string from the server
// goes through printable, so that text a model or a script wrote cannot
// hide or fake a line of the card with terminal controls.
func (c *card) write(out io.Writer, now time.Time) {
	switch {
	case c.conn != nil:
		c.conn.write(out, now)
		return
	case c.gate != nil:
		writeGateCard(out, c.gate)
	case c.skill != nil:
		fmt.Fprintf(out, "approval requested: %s\n", printable(c.skill.Title))
		writeSkillCard(out, &c.skill.Skill)
	default:
		writeApproval(out, c.approval)
	}
	fmt.Fprint(out, c.question())
}

// writeApproval prints a plan's approval request: with a plan card, every
// field the approval token signs, not only the summary fields of spec 8.1.
func writeApproval(out io.Writer, a *messages.ApprovalRequestEvent) {
	fmt.Fprintf(out, "approval requested: %s\n", printable(a.Title))
	if a.Plan.ID != "" || a.Plan.PlanHash != "" {
		writePlanCard(out, &a.Plan, "  ")
		return
	}
	if a.Body != "" {
		for _, l := range strings.Split(a.Body, "\n") {
			fmt.Fprintf(out, "%s\n", printable(l))
		}
	}
	if a.Budget != (messages.Budget{}) {
		fmt.Fprintf(out, "budget: %s\n", budgetText(a.Budget))
	}
	for _, v := range a.Verify {
		fmt.Fprintf(out, "verify: %s\n", printable(checkText(v)))
	}
}

// approvalCard reads an approval_request of a plan or a skill into its
// card.
func approvalCard(ev event) (*card, error) {
	if ev.Scope == messages.ApprovalSkillInstall {
		var s messages.SkillInstallRequestEvent
		if err := ev.decode(&s); err != nil {
			return nil, err
		}
		return &card{skill: &s}, nil
	}
	var a messages.ApprovalRequestEvent
	if err := ev.decode(&a); err != nil {
		return nil, err
	}
	return &card{approval: &a}, nil
}

// summaryCard is the y/N card of an approval_request the CLI could not
// read in full: its request_id, title and body, as much of them as decode.
func summaryCard(ev event) *card {
	var f struct {
		RequestID string `json:"request_id"`
		Title     string `json:"title"`
		Body      string `json:"body"`
	}
	_ = json.Unmarshal(ev.raw, &f) // what does not decode stays empty
	return &card{approval: &messages.ApprovalRequestEvent{Type: messages.EventApprovalRequest,
		RequestID: f.RequestID, Title: f.Title, Body: f.Body}}
}

// typedSecret reports whether c is a secure-input card whose secret the
// owner types here, with echo off.
func (c *card) typedSecret() bool {
	return c.conn != nil && c.conn.kind == kindSecret && c.conn.typed
}
