package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

const telegramUsage = `Usage: silas telegram <pair|unpair|status> [flags]

The Telegram channel (docs/telegram.md) talks to Silas through a bot you
create with @BotFather. Without silas.channels.telegram.owner_chat_id, the
owner's chat is paired with a one-time code. The commands talk to the
running daemon: start it with "silas serve" first.

  silas telegram pair      print a one-time code (10 minutes); send "/start <code>" to the bot
  silas telegram unpair    forget the owner's chat
  silas telegram status    the channel's mode, bot, owner chat and sessions
`

func runTelegram(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, telegramUsage)
		if len(args) == 0 {
			return &exitError{code: 2, err: errors.New("telegram: no subcommand given")}
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	fs := newFlagSet("telegram "+sub, "Manage the Telegram channel through the running daemon.", stderr)
	var c common
	c.register(fs)
	daemonURL := fs.String("url", "", "daemon URL (default http://<silas.channels.web.host>:<port>)")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	switch {
	case sub != "pair" && sub != "unpair" && sub != "status":
		fmt.Fprint(stderr, telegramUsage)
		return &exitError{code: 2, err: fmt.Errorf("unknown telegram subcommand %q", sub)}
	case len(pos) != 0:
		return &exitError{code: 2, err: fmt.Errorf("telegram %s takes no arguments", sub)}
	}
	_, tok, base, err := daemonAddress(&c, *daemonURL)
	if err != nil {
		return err
	}
	cl := &daemonClient{base: base, token: tok, http: &http.Client{Timeout: 30 * time.Second}}
	out := &skillsOut{w: stdout, json: *asJSON}
	switch sub {
	case "pair":
		var p telegramPairing
		if err := cl.call(ctx, "POST", "/telegram/pair", nil, &p, out); err != nil {
			return err
		}
		if out.json {
			return nil
		}
		bot := "your bot"
		if p.BotUsername != "" {
			bot = "@" + p.BotUsername + " (https://t.me/" + p.BotUsername + ")"
		}
		fmt.Fprintf(stdout, "In Telegram, send this message to %s before %s:\n\n    /start %s\n\n"+
			"The chat that sends it becomes your Silas chat. The code works once.\n",
			bot, p.ExpiresAt.Local().Format(time.TimeOnly), p.Code)
		return nil
	case "unpair":
		var u telegramUnpaired
		if err := cl.call(ctx, "DELETE", "/telegram/pair", nil, &u, out); err != nil {
			return err
		}
		if !u.Unpaired {
			return out.line("no chat was paired")
		}
		return out.line(fmt.Sprintf("unpaired chat %d; run `silas telegram pair` to pair a chat again", u.ChatID))
	}
	var st telegramStatus
	if err := cl.call(ctx, "GET", "/telegram", nil, &st, out); err != nil {
		return err
	}
	if out.json {
		return nil
	}
	return printTelegramStatus(stdout, st)
}

func printTelegramStatus(w io.Writer, st telegramStatus) error {
	if !st.Enabled {
		_, err := fmt.Fprintln(w, "Telegram: off (set silas.channels.telegram.enabled: true and SILAS_TELEGRAM_TOKEN, then restart silas)")
		return err
	}
	fmt.Fprintf(w, "Telegram: on, %s, bot @%s\n", st.Mode, st.BotUsername)
	switch {
	case st.OwnerChatID == 0 && st.PairingExpires != nil:
		fmt.Fprintf(w, "owner chat: none yet; a pairing code waits until %s\n", st.PairingExpires.Local().Format(time.TimeOnly))
	case st.OwnerChatID == 0:
		fmt.Fprintln(w, "owner chat: none; run `silas telegram pair`")
	default:
		how := "paired"
		if st.OwnerConfigured {
			how = "from silas.channels.telegram.owner_chat_id"
		}
		state := "connected"
		if !st.OwnerConnected {
			state = "not connected yet"
		}
		fmt.Fprintf(w, "owner chat: %d (%s), %s\n", st.OwnerChatID, how, state)
	}
	customers := "off (others get a polite refusal)"
	if st.Chatbot {
		customers = fmt.Sprintf("on, %d open sessions", st.Customers)
	}
	_, err := fmt.Fprintf(w, "customers: %s\nqueued messages: %d\n", customers, st.Queued)
	return err
}
