package cli

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// fileTerminal is the terminal on a file descriptor.
type fileTerminal int

func (t fileTerminal) IsTerminal() bool {
	_, err := unix.IoctlGetTermios(int(t), unix.TCGETS)
	return err == nil
}

// NoEcho clears ECHO on the terminal. Input typed before the call and
// still unread is not echoed again; the line being read ends at Enter as
// before.
func (t fileTerminal) NoEcho() (func(), error) {
	old, err := unix.IoctlGetTermios(int(t), unix.TCGETS)
	if err != nil {
		return nil, fmt.Errorf("read the terminal's settings: %w", err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(int(t), unix.TCSETS, &quiet); err != nil {
		return nil, fmt.Errorf("turn echo off: %w", err)
	}
	return func() { _ = unix.IoctlSetTermios(int(t), unix.TCSETS, old) }, nil
}
