package cli

import (
	"bufio"
	"io"
)

// maxLineSize bounds one input line.
const maxLineSize = 1 << 20

// inputLine is one line of input, or the end of it. data is the line's
// own copy, which the session clears once handled: it may be a secret.
type inputLine struct {
	data []byte
	eof  bool
	err  error // set with eof when reading failed
}

// readLines reads one line from in each time want receives, and delivers it
// on out. It stops after the end of input or when done closes. It may stay
// blocked inside in.Read after done closes, until in returns.
func readLines(in io.Reader, want <-chan struct{}, out chan<- inputLine, done <-chan struct{}) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineSize)
	for {
		select {
		case <-want:
		case <-done:
			return
		}
		var l inputLine
		if sc.Scan() {
			l.data = append([]byte(nil), sc.Bytes()...)
		} else {
			l.eof, l.err = true, sc.Err()
		}
		select {
		case out <- l:
		case <-done:
			return
		}
		if l.eof {
			return
		}
	}
}
