//go:build telegram_crashtest

package main

import (
	"os"

	"github.com/silas-ai/silas/channels/telegram"
)

// A build for crash tests only (go build -tags telegram_crashtest): with
// TELEGRAM_CRASHTEST_HOLD set to a file path, the bridge writes that file
// and stops forever just before handing a message to the runtime, so that
// a test can kill the process after getUpdates returned and before the
// message was journaled.
func init() {
	hold := os.Getenv("TELEGRAM_CRASHTEST_HOLD")
	if hold == "" {
		return
	}
	telegramBridgeHook = func(c *telegram.BridgeConfig) {
		c.BeforeSubmit = func(telegram.Update) {
			_ = os.WriteFile(hold, []byte("held"), 0o600)
			select {}
		}
	}
}
