package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/channels/telegram/fakebot"
)

// silasCrashBinary is the silas binary with the Telegram crash hook
// (build tag telegram_crashtest, see telegram_crashhook.go).
func silasCrashBinary(t *testing.T) string { return silasBinaryTagged(t, "telegram_crashtest") }

// startTGProcess runs that binary's silas serve with extra environment
// variables (the hook's).
func startTGProcess(t *testing.T, configPath string, env ...string) *process {
	t.Helper()
	return startBinary(t, silasCrashBinary(t), configPath, env...)
}

func (p *process) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
}

// countingProxy counts the proxy's calls for one message.
type countingProxy struct {
	mu    sync.Mutex
	calls int
}

func (c *countingProxy) n() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// tgWait waits for pred on the fake Bot API.
func tgWait(t *testing.T, bot *fakebot.Server, what string, pred func(fakebot.Snapshot) bool) fakebot.Snapshot {
	t.Helper()
	e := &tgEnv{t: t, bot: bot}
	return e.wait(what, pred)
}

// TestTelegramKillNineBeforeJournal: the process dies after getUpdates
// returned a message and before it was journaled. The update was not
// confirmed, so after a restart it comes again and is handled exactly
// once.
func TestTelegramKillNineBeforeJournal(t *testing.T) {
	mock := newMock(t)
	var proxy countingProxy
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if r.Schema != "RouteDecision" {
			return "", 0, false
		}
		cur := currentMessage(r)
		if strings.Contains(cur, "journal test") {
			proxy.mu.Lock()
			proxy.calls++
			proxy.mu.Unlock()
			return routeDecision("direct", "answered once"), 0, true
		}
		return routeDecision("direct", "pong"), 0, true
	})
	bot := fakebot.Start(t, fakebot.Options{})
	ov := tgOverrides(t, mock, bot, t.TempDir())
	ov["silas.channels.telegram.owner_chat_id"] = fmt.Sprint(tgOwner)
	cfgPath := writeConfig(t, ov)
	hold := filepath.Join(t.TempDir(), "held")

	p1 := startTGProcess(t, cfgPath, "TELEGRAM_CRASHTEST_HOLD="+hold)
	bot.PushMessage(tgOwner, tgOwner, "journal test")
	checkFor(t, waitLimit, func() bool {
		_, err := os.Stat(hold)
		return !errors.Is(err, fs.ErrNotExist)
	}, "getUpdates to hand over the message")
	p1.kill9(t)
	if n := proxy.n(); n != 0 {
		t.Fatalf("the held message reached the model %d times", n)
	}
	if sn := bot.Snapshot(); sn.Pending != 1 {
		t.Fatalf("%d updates pending after the crash, want the held one", sn.Pending)
	}

	startTGProcess(t, cfgPath)
	tgWait(t, bot, "the answer after the restart", func(sn fakebot.Snapshot) bool {
		return len(sentTo(sn, tgOwner, "answered once")) == 1
	})
	// A later message's answer comes after any repeat of the first would.
	bot.PushMessage(tgOwner, tgOwner, "ping")
	sn := tgWait(t, bot, "the answer to ping", func(sn fakebot.Snapshot) bool {
		return len(sentTo(sn, tgOwner, "pong")) == 1 && sn.Pending == 0
	})
	if n := len(sentTo(sn, tgOwner, "answered once")); n != 1 {
		t.Fatalf("the message was answered %d times", n)
	}
	if n := proxy.n(); n != 1 {
		t.Fatalf("the message ran %d turns, want 1", n)
	}
}

// TestTelegramKillNineBeforeAnswer: the process dies after the message
// was journaled (acknowledged: "typing…" shows) and before its answer.
// After a restart the journaled turn runs again and the chat gets the
// answer once, even though the update itself comes again.
func TestTelegramKillNineBeforeAnswer(t *testing.T) {
	mock := newMock(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var mu sync.Mutex
	crashed, calls := false, 0
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if r.Schema != "RouteDecision" {
			return "", 0, false
		}
		if !strings.Contains(currentMessage(r), "survive telegram") {
			return routeDecision("direct", "pong"), 0, true
		}
		mu.Lock()
		calls++
		first := !crashed
		mu.Unlock()
		if first {
			<-release // the first process dies while waiting here
			return "", 500, true
		}
		return routeDecision("direct", "answered after the crash"), 0, true
	})
	bot := fakebot.Start(t, fakebot.Options{})
	ov := tgOverrides(t, mock, bot, t.TempDir())
	ov["silas.channels.telegram.owner_chat_id"] = fmt.Sprint(tgOwner)
	cfgPath := writeConfig(t, ov)

	p1 := startTGProcess(t, cfgPath)
	bot.PushMessage(tgOwner, tgOwner, "survive telegram")
	tgWait(t, bot, "the typing indicator (the message is journaled)", func(sn fakebot.Snapshot) bool {
		return len(sn.Actions) > 0
	})
	checkFor(t, waitLimit, func() bool { mu.Lock(); defer mu.Unlock(); return calls == 1 }, "the turn's model call")
	p1.kill9(t)
	mu.Lock()
	crashed = true
	mu.Unlock()

	startTGProcess(t, cfgPath)
	tgWait(t, bot, "the answer after the restart", func(sn fakebot.Snapshot) bool {
		return len(sentTo(sn, tgOwner, "answered after the crash")) == 1
	})
	bot.PushMessage(tgOwner, tgOwner, "ping")
	sn := tgWait(t, bot, "the answer to ping", func(sn fakebot.Snapshot) bool {
		return len(sentTo(sn, tgOwner, "pong")) == 1 && sn.Pending == 0
	})
	if n := len(sentTo(sn, tgOwner, "answered after the crash")); n != 1 {
		t.Fatalf("the message was answered %d times", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Fatalf("model calls for the message = %d, want 1 before and 1 after the crash", calls)
	}
}
