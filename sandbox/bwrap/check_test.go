package bwrap

import (
	"errors"
	"testing"

	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/internal/proc"
)

// TestCheckClassifiesBwrapFailures: what bwrap says when it cannot build
// the sandbox decides whether the work may go on. EAGAIN is for now (the
// instance builds the sandbox again); a host without user namespaces is
// not (the backend is unavailable); the program's own output is a result.
func TestCheckClassifiesBwrapFailures(t *testing.T) {
	tests := []struct {
		name    string
		res     sandbox.Result
		want    error
		notWant error
	}{
		{"namespace for now", sandbox.Result{ExitCode: 1, Stderr: []byte("bwrap: Creating new namespace failed: Resource temporarily unavailable\n")},
			proc.ErrTransient, sandbox.ErrBackendUnavailable},
		{"no user namespaces", sandbox.Result{ExitCode: 1, Stderr: []byte("bwrap: No permissions to create new namespace\n")},
			sandbox.ErrBackendUnavailable, proc.ErrTransient},
		{"no network namespace", sandbox.Result{ExitCode: 1, Stderr: []byte("bwrap: loopback: Failed RTM_NEWADDR\n")},
			sandbox.ErrNetworkIsolationUnavailable, proc.ErrTransient},
		{"the program's output", sandbox.Result{ExitCode: 1, Stderr: []byte("grep: Resource temporarily unavailable\n")}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := (&spec{}).Check(tc.res)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) || tc.notWant != nil && errors.Is(err, tc.notWant) {
				t.Fatalf("Check = %v, want %v and not %v", err, tc.want, tc.notWant)
			}
		})
	}
}
