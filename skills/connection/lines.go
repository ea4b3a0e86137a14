package connection

import (
	"bytes"
	"sync"
)

// MaxLineBytes bounds one protocol line (docs/connections.md).
const MaxLineBytes = 64 << 10

// lineSplitter is the Output of a script run: it cuts standard output into
// lines, refuses lines past MaxLineBytes, drops any line holding a known
// secret, and hands the others to emit. It stops the run (stop) on the
// first bad line: a script that breaks the protocol gets no second chance.
type lineSplitter struct {
	mu      sync.Mutex
	partial []byte
	secrets func() [][]byte // the values no line may contain, read per line
	emit    func(line []byte) bool
	stop    func()
	// problem says why the run was stopped ("" while it was not).
	problem string
}

// Write implements io.Writer for sandbox.Command.Output.
func (s *lineSplitter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.problem != "" {
		return len(p), nil // drained and dropped
	}
	s.partial = append(s.partial, p...)
	// The secrets are read once per write, not per line: reading them
	// may read the credential file.
	var secrets [][]byte
	if s.secrets != nil && bytes.IndexByte(s.partial, '\n') >= 0 {
		secrets = s.secrets()
	}
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			if len(s.partial) > MaxLineBytes {
				s.fail("a line of its output is longer than 64 KiB")
			}
			return len(p), nil
		}
		line := bytes.TrimSpace(s.partial[:i])
		s.partial = s.partial[i+1:]
		if len(line) > MaxLineBytes {
			s.fail("a line of its output is longer than 64 KiB")
			return len(p), nil
		}
		if len(line) == 0 {
			continue
		}
		if leaks(line, secrets) {
			s.fail("it printed a credential")
			return len(p), nil
		}
		if !s.emit(bytes.Clone(line)) {
			s.fail("its output is not being read")
			return len(p), nil
		}
	}
}

// flush handles a last line without a newline when the process ended.
func (s *lineSplitter) flush() {
	s.mu.Lock()
	rest := bytes.TrimSpace(s.partial)
	s.partial = nil
	s.mu.Unlock()
	if len(rest) > 0 {
		_, _ = s.Write(append(rest, '\n'))
	}
}

func (s *lineSplitter) fail(why string) {
	s.problem = why
	s.partial = nil
	s.stop()
}

// leaks reports whether line holds one of the secrets.
func leaks(line []byte, secrets [][]byte) bool {
	for _, v := range secrets {
		if len(v) > 0 && bytes.Contains(line, v) {
			return true
		}
	}
	return false
}

// why returns the reason the run was stopped, or "".
func (s *lineSplitter) why() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.problem
}
