package bwrap_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/bwrap"
	"github.com/silas-ai/silas/sandbox/internal/sandboxtest"
)

// testMaxProcesses keeps the fork bomb test small.
const testMaxProcesses = 64

func requireBwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not on PATH: install the Debian package bubblewrap to test this backend (CI does)")
	}
}

func newBackend(t *testing.T, root string) *bwrap.Backend {
	t.Helper()
	requireBwrap(t)
	b, err := bwrap.New(bwrap.Options{Root: root, MaxProcesses: testMaxProcesses})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConformance(t *testing.T) {
	requireBwrap(t)
	if err := bwrap.Probe(t.Context()); err != nil {
		if errors.Is(err, sandbox.ErrBackendUnavailable) {
			sandboxtest.SkipUnavailable(t, err)
		}
		t.Fatal(err)
	}
	sandboxtest.Run(t, func(t *testing.T, root string) sandbox.Manager { return newBackend(t, root) },
		sandboxtest.Capabilities{Isolated: true})
}

// TestConformanceUnprivileged runs the suite again with Silas as an
// ordinary user (when the tests run as root).
func TestConformanceUnprivileged(t *testing.T) {
	requireBwrap(t)
	sandboxtest.RunUnprivileged(t, "^TestConformance$")
}

func TestNewWithoutBwrap(t *testing.T) {
	_, err := bwrap.New(bwrap.Options{Root: t.TempDir(), Bwrap: "/nonexistent/bwrap"})
	if !errors.Is(err, sandbox.ErrBackendUnavailable) || !strings.Contains(err.Error(), "bubblewrap") {
		t.Fatalf("want ErrBackendUnavailable naming the package, got %v", err)
	}
}

func TestCreateRefusesMissingPaths(t *testing.T) {
	b := newBackend(t, t.TempDir())
	cfg := messages.DefaultSandboxConfig()
	cfg.FilesystemRead = []string{filepath.Join(t.TempDir(), "missing")}
	if _, err := b.Create(t.Context(), cfg); !errors.Is(err, sandbox.ErrInvalidConfig) {
		t.Fatalf("want ErrInvalidConfig, got %v", err)
	}
}

// BenchmarkStart measures starting `true` under bwrap (with the helper, the
// seccomp filter and, as root, the drop to the instance's host id) and
// waiting for it; it reports the median and the 99th percentile in
// milliseconds.
func BenchmarkStart(b *testing.B) {
	requireBwrap(b)
	if err := bwrap.Probe(b.Context()); err != nil {
		b.Skipf("the bwrap backend refuses to run on this host: %v", err)
	}
	bk, err := bwrap.New(bwrap.Options{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	in, err := bk.Create(b.Context(), messages.DefaultSandboxConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = in.Destroy(b.Context()) }()
	sandboxtest.BenchmarkStart(b, in)
}
