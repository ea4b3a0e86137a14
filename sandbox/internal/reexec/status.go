package reexec

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// StatusFD is the descriptor on which the init reports how the program ended,
// or why the sandbox could not be built: one line, "exit <wait status>" or
// "fail <kind> <message>". The init marks it close-on-exec at once, so the
// program never holds it.
const StatusFD = 3

// FailureKind says which part of a sandbox's setup failed.
type FailureKind string

// Failure kinds the init reports.
const (
	// FailSetup: the sandbox could not be built (mounts, ids, capabilities).
	FailSetup FailureKind = "setup"
	// FailNetwork: network isolation could not be set up.
	FailNetwork FailureKind = "network"
)

// Report is one decoded status line.
type Report struct {
	// Exited is set when the program ran; WaitStatus says how it ended.
	Exited     bool
	WaitStatus syscall.WaitStatus
	// Failure and Message are set when the sandbox could not be built.
	Failure FailureKind
	Message string
}

// ParseReport decodes a status line.
func ParseReport(line string) (Report, error) {
	kind, rest, _ := strings.Cut(line, " ")
	switch kind {
	case "exit":
		n, err := strconv.ParseUint(rest, 10, 32)
		if err != nil {
			return Report{}, fmt.Errorf("bad status report %q", line)
		}
		return Report{Exited: true, WaitStatus: syscall.WaitStatus(n)}, nil
	case "fail":
		what, msg, _ := strings.Cut(rest, " ")
		if FailureKind(what) != FailSetup && FailureKind(what) != FailNetwork {
			return Report{}, fmt.Errorf("bad status report %q", line)
		}
		return Report{Failure: FailureKind(what), Message: msg}, nil
	}
	return Report{}, fmt.Errorf("bad status report %q", line)
}

// status is the init's side of the status pipe.
type status struct{ f *os.File }

// openStatus marks StatusFD close-on-exec and returns it.
func openStatus() (*status, error) {
	if _, err := unix.FcntlInt(StatusFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("status descriptor %d: %w", StatusFD, err)
	}
	return &status{f: os.NewFile(StatusFD, "silas-status")}, nil
}

// reportExit reports the program's wait status.
func (s *status) reportExit(ws syscall.WaitStatus) error {
	_, err := fmt.Fprintf(s.f, "exit %d\n", uint32(ws))
	return err
}

// reportFailure reports that the sandbox could not be built.
func (s *status) reportFailure(kind FailureKind, err error) error {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	_, werr := fmt.Fprintf(s.f, "fail %s %s\n", kind, msg)
	return werr
}

// parentGone reports whether the reading end of the status pipe was closed,
// which means Silas exited.
func (s *status) parentGone() bool {
	fds := []unix.PollFd{{Fd: StatusFD, Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}
