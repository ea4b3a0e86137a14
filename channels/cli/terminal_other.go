//go:build !linux

package cli

// fileTerminal is a file descriptor. Outside Linux the CLI does not turn
// echo off, so it treats every input as a pipe and reads no secret.
type fileTerminal int

func (fileTerminal) IsTerminal() bool { return false }

func (fileTerminal) NoEcho() (func(), error) { return nil, errNotTerminal }
