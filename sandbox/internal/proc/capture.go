package proc

import (
	"errors"
	"io"
)

// capture reads a stream to its end, keeping at most max bytes; the rest is
// drained and dropped so the writer never blocks on a full pipe.
type capture struct {
	tee       io.Writer // also gets every chunk read, when set
	max       int
	buf       []byte
	truncated bool
}

func newCapture(max int) *capture {
	return &capture{max: max, buf: make([]byte, 0, min(max, 64<<10))}
}

// readFrom reads r until EOF or an error (a closed reader ends it too).
func (c *capture) readFrom(r io.Reader) {
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		if n > 0 {
			c.keep(chunk[:n])
			if c.tee != nil {
				_, _ = c.tee.Write(chunk[:n])
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.truncated = true // cut off (reader closed after the drain grace)
			}
			return
		}
	}
}

func (c *capture) keep(p []byte) {
	room := c.max - len(c.buf)
	if room <= 0 {
		c.truncated = true
		return
	}
	if len(p) > room {
		p = p[:room]
		c.truncated = true
	}
	c.buf = append(c.buf, p...)
}
