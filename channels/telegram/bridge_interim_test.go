package telegram_test

import (
	"testing"
	"time"

	"github.com/silas-ai/silas/channels/telegram"
	"github.com/silas-ai/silas/messages"
)

// TestBridgeShowsInterimMessage: what the proxy tells the user while it
// works (tell_user) reaches the chat as it comes, before the answer.
func TestBridgeShowsInterimMessage(t *testing.T) {
	e := startBridge(t, func(c *telegram.BridgeConfig) { c.OwnerChatID = ownerChat })
	e.bot.KnownChat(ownerChat)
	owner := e.rt.conn(t, 0)
	e.rt.waitFrames(t, "the owner's auth", func(fs []recordedFrame) bool { return len(fs) > 0 })
	owner.out.Send(&messages.InterimEvent{Type: messages.EventInterim, ID: "i1", Text: "Checking the weather now.", Sender: "silas", Timestamp: time.Now(), ReplyTo: "m1"})
	e.waitSent(t, ownerChat, "Checking the weather now.", 1)
}
