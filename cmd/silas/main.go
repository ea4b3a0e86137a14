// Command silas is the Silas assistant daemon and its command-line tools.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `silas: a secure, always-on assistant runtime.

Usage:
  silas <command> [flags]

Commands:
  init          create the data dir, owner key and database (safe to run twice)
  serve         run the daemon (alias: start)
  chat          talk to a running daemon from the terminal
  token         print the owner's web token
  audit verify  check the audit log's hash chain
  backup        copy the running daemon's database to a new file
  restore       create a data dir from a backup file
  memory        export or import memories as a jsonl-v1 bundle, rebuild their index (export, import, reindex)
  devices       add, list or revoke owner devices (talks to the running daemon)
  skills        list, show, install, import or remove skills (talks to the running daemon)
  connections   add, list, check or remove service connections (talks to the running daemon)
  goals         list, pause, resume or remove scheduled goals (talks to the running daemon)
  telegram      pair or unpair the owner's Telegram chat, show the channel's status (talks to the running daemon)
  doctor        check this host's sandbox isolation and which backend Silas uses
  version       print the version

Run "silas <command> --help" for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "silas:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitError carries a specific exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 1
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &exitError{code: 2, err: errors.New("no command given")}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "init":
		return runInit(ctx, rest, stdout, stderr)
	case "serve", "start":
		return runServe(ctx, rest, stdout, stderr)
	case "chat":
		return runChat(ctx, rest, stdin, stdout, stderr)
	case "token":
		return runToken(rest, stdout, stderr)
	case "audit":
		return runAudit(ctx, rest, stdout, stderr)
	case "backup":
		return runBackup(ctx, rest, stdout, stderr)
	case "restore":
		return runRestore(ctx, rest, stdout, stderr)
	case "memory":
		return runMemory(ctx, rest, stdin, stdout, stderr)
	case "devices":
		return runDevices(ctx, rest, stdout, stderr)
	case "skills":
		return runSkills(ctx, rest, stdout, stderr)
	case "connections":
		return runConnections(ctx, rest, stdin, stdout, stderr)
	case "goals":
		return runGoals(ctx, rest, stdout, stderr)
	case "telegram":
		return runTelegram(ctx, rest, stdout, stderr)
	case "doctor":
		return runDoctor(ctx, rest, stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "silas", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return &exitError{code: 2, err: fmt.Errorf("unknown command %q", cmd)}
}
