package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/internal/reexec"
)

// status is what an init reported.
type status struct {
	reported bool
	ws       syscall.WaitStatus
	failure  error
}

// readStatus reads the init's report once it has exited. Only the init holds
// the writing end, so EOF comes at once; the deadline guards against a
// descriptor leaked to a process that outlived it.
func readStatus(r *os.File) (status, error) {
	_ = r.SetReadDeadline(time.Now().Add(drainGrace))
	b, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return status{}, fmt.Errorf("read sandbox status: %w", err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return parseStatus(string(line))
}

// parseStatus maps a report line to the run's outcome; an empty line means
// the init ended without a report (killed on timeout or cancellation).
func parseStatus(line string) (status, error) {
	if line == "" {
		return status{}, nil
	}
	r, err := reexec.ParseReport(line)
	if err != nil {
		return status{}, fmt.Errorf("%w: %w", sandbox.ErrStart, err)
	}
	if r.Exited {
		return status{reported: true, ws: r.WaitStatus}, nil
	}
	sentinel := sandbox.ErrBackendUnavailable
	if r.Failure == reexec.FailNetwork {
		sentinel = sandbox.ErrNetworkIsolationUnavailable
	}
	return status{reported: true, failure: fmt.Errorf("%w: sandbox setup failed: %s", sentinel, r.Message)}, nil
}
