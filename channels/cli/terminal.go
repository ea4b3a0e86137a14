package cli

import (
	"errors"
	"os"
)

// errNotTerminal is why a pipe cannot take a secret.
var errNotTerminal = errors.New("standard input is not a terminal")

// Terminal is the terminal behind Options.In, if any. The CLI reads a
// secret only from a terminal, with echo off, so that it never shows on the
// screen; from a pipe it reads none.
type Terminal interface {
	// IsTerminal reports whether In is an interactive terminal.
	IsTerminal() bool
	// NoEcho turns echo off until restore is called.
	NoEcho() (restore func(), err error)
}

// pipe is the Terminal of an input that is not a terminal.
type pipe struct{}

func (pipe) IsTerminal() bool { return false }

func (pipe) NoEcho() (func(), error) { return nil, errNotTerminal }

// terminalOf returns the Terminal of in: its terminal when in is a file
// that is one, else pipe.
func terminalOf(in any) Terminal {
	if f, ok := in.(*os.File); ok {
		if t := fileTerminal(int(f.Fd())); t.IsTerminal() {
			return t
		}
	}
	return pipe{}
}
