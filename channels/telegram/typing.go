package telegram

import (
	"context"
	"time"
)

// TypingInterval is how often StartTyping repeats the typing action:
// Telegram shows one for five seconds, or until the bot's next message.
const TypingInterval = 4 * time.Second

// StartTyping shows "typing…" in chatID while a turn runs: it sends the
// typing action at once and every TypingInterval until stop is called or
// ctx ends. stop waits for the goroutine to end, so no action is sent after
// it returns; call it before enqueuing the answer. stop may be called more
// than once. Failures are ignored: the indicator is a courtesy, and a
// failed one must not hold up the turn. clk nil is the system clock.
func StartTyping(ctx context.Context, c *Client, chatID int64, clk Clock) (stop func()) {
	clk = clockOr(clk)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_ = c.SendTyping(ctx, chatID)
			select {
			case <-ctx.Done():
				return
			case <-clk.After(TypingInterval):
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
