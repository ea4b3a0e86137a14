package namespaces_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/internal/sandboxtest"
	"github.com/silas-ai/silas/sandbox/namespaces"
)

// testMaxProcesses keeps the fork bomb test small.
const testMaxProcesses = 64

func newBackend(t *testing.T, root string) *namespaces.Backend {
	t.Helper()
	b, err := namespaces.New(namespaces.Options{Root: root, MaxProcesses: testMaxProcesses})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// requireBackend probes the host once; a host that cannot run the backend
// makes it refuse (fail closed), which skips the tests and says why.
func requireBackend(t *testing.T) {
	t.Helper()
	if err := namespaces.Probe(t.Context()); err != nil {
		if errors.Is(err, sandbox.ErrBackendUnavailable) {
			sandboxtest.SkipUnavailable(t, err)
		}
		t.Fatal(err)
	}
}

func TestConformance(t *testing.T) {
	requireBackend(t)
	sandboxtest.Run(t, func(t *testing.T, root string) sandbox.Manager { return newBackend(t, root) },
		sandboxtest.Capabilities{Isolated: true})
}

// TestConformanceUnprivileged runs the suite again with Silas as an
// ordinary user (when the tests run as root).
func TestConformanceUnprivileged(t *testing.T) {
	sandboxtest.RunUnprivileged(t, "^TestConformance$")
}

func TestNewRefuses(t *testing.T) {
	cases := []struct {
		name string
		opts namespaces.Options
	}{
		{"no root", namespaces.Options{}},
		{"negative file size", namespaces.Options{Root: "/x", MaxFileSizeMB: -1}},
		{"negative processes", namespaces.Options{Root: "/x", MaxProcesses: -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := namespaces.New(tc.opts); !errors.Is(err, sandbox.ErrInvalidConfig) {
				t.Fatalf("want ErrInvalidConfig, got %v", err)
			}
		})
	}
	if os.Geteuid() == 0 {
		if _, err := namespaces.New(namespaces.Options{Root: "/x", HostIDBase: 10}); !errors.Is(err, sandbox.ErrInvalidConfig) {
			t.Fatalf("host ids from 10: want ErrInvalidConfig, got %v", err)
		}
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

// TestSetupFailureIsAnError: a sandbox the init cannot build is an error
// naming the cause, never a run with less isolation. A filesystem_read path
// under /bin, a symlink inside the sandbox on a merged-/usr system, cannot
// get a mount point without following the symlink, which the init refuses.
func TestSetupFailureIsAnError(t *testing.T) {
	requireBackend(t)
	if fi, err := os.Lstat("/bin"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Skip("/bin is not a symlink on this host (no merged /usr), so a path under it mounts fine")
	}
	cfg := messages.DefaultSandboxConfig()
	cfg.FilesystemRead = []string{"/bin/sh"}
	in, err := newBackend(t, t.TempDir()).Create(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Destroy(t.Context()) })
	_, err = in.Run(t.Context(), sandbox.Command{Args: []string{"true"}})
	if !errors.Is(err, sandbox.ErrBackendUnavailable) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("want ErrBackendUnavailable naming the symlink, got %v", err)
	}
}

// TestInstancesGetTheirOwnHostIDs: as root, each instance's work dir belongs
// to its own unprivileged host id, handed back on Destroy.
func TestInstancesGetTheirOwnHostIDs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("as uid %d the sandbox runs as that uid; host ids are handed out only when Silas is root", os.Geteuid())
	}
	b, err := namespaces.New(namespaces.Options{Root: t.TempDir(), HostIDBase: 3_000_000, HostIDCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	owner := func(in sandbox.Instance) uint32 {
		fi, err := os.Stat(in.WorkDir())
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Uid
	}
	a, err := b.Create(t.Context(), messages.DefaultSandboxConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.Create(t.Context(), messages.DefaultSandboxConfig())
	if err != nil {
		t.Fatal(err)
	}
	if owner(a) == owner(c) || owner(a) < 3_000_000 || owner(c) < 3_000_000 {
		t.Fatalf("work dirs owned by %d and %d, want two ids from 3000000", owner(a), owner(c))
	}
	if _, err := b.Create(t.Context(), messages.DefaultSandboxConfig()); !errors.Is(err, sandbox.ErrBackendUnavailable) {
		t.Fatalf("third instance with two ids: want ErrBackendUnavailable, got %v", err)
	}
	freed := owner(a)
	if err := a.Destroy(t.Context()); err != nil {
		t.Fatal(err)
	}
	d, err := b.Create(t.Context(), messages.DefaultSandboxConfig())
	if err != nil {
		t.Fatalf("after Destroy the id must be free again: %v", err)
	}
	if owner(d) != freed {
		t.Fatalf("new instance owned by %d, want the freed id %d", owner(d), freed)
	}
	for _, in := range []sandbox.Instance{c, d} {
		if err := in.Destroy(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}
