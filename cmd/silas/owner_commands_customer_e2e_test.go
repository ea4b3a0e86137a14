package main

import (
	"strings"
	"testing"
)

// TestCustomerCannotUseOwnerCommands: the goal commands and the away
// summary are the owner's. A customer who types them gets an ordinary
// turn: the text reaches the model as the customer's message, and the
// answer carries neither the owner's audit summary nor a goal listing.
func TestCustomerCannotUseOwnerCommands(t *testing.T) {
	mock := newMock(t)
	d := startTest(t, loadConfig(t, overrides(t, mock, t.TempDir())))
	addr := d.Addr()

	o := owner(t, addr)
	o.answerTo(o.say("hello, remember my cat Miso")) // gives the audit log something to tell

	c := mustDial(t, addr, "/chat")
	c.next("session")
	for _, text := range []string{"What did you do while I was away?", "/goals", "/goal remove some-goal"} {
		ans := c.answerTo(c.say(text)).str("text")
		for _, leak := range []string{"Since your last visit", "audit log", "Goal commands", "scheduled goal", "no such goal"} {
			if strings.Contains(ans, leak) {
				t.Errorf("customer's %q answered %q, which contains the owner's %q", text, ans, leak)
			}
		}
		seen := false
		for _, r := range mock.Requests() {
			if strings.Contains(r.LastUser(), text) {
				seen = true
			}
		}
		if !seen {
			t.Errorf("customer's %q never reached the model as a turn", text)
		}
	}
}
