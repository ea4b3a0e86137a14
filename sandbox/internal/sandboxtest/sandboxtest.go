// Package sandboxtest is the conformance suite of the sandbox backends: the
// isolation promises of spec 9.1 checked against real processes, most of
// them as an attacker inside the sandbox would try to break them.
//
// Every backend keeps the baseline (a scrubbed environment, values never run
// as code, output caps, memory and time limits that take the process group
// down, no network unless asked, a fresh work dir per instance). An
// isolating backend (Capabilities.Isolated) must also keep the daemon's
// files, processes, environment and network namespace out of reach, run
// without capabilities under the seccomp filter, contain fork bombs and
// setsid double-forks, and show an empty home, a private /tmp, and nothing
// writable but its work dir.
package sandboxtest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

// NewManager returns the backend under test with its work dirs under root.
// An isolating backend must bound a run's processes (RLIMIT_NPROC) to at
// most 256 for the fork bomb test.
type NewManager func(t *testing.T, root string) sandbox.Manager

// Capabilities describe which promises a backend makes.
type Capabilities struct {
	// Isolated: the backend isolates the filesystem, PIDs, IPC, host name and
	// capabilities from the daemon, filters system calls and contains
	// everything a run starts. The subprocess backend is not isolated.
	Isolated bool
}

// test is one conformance test; env holds the backend and a daemon-like
// data dir around its work dirs.
type test struct {
	name     string
	isolated bool
	fn       func(*testing.T, *env)
}

// Run runs the conformance tests the backend's capabilities call for.
func Run(t *testing.T, newManager NewManager, c Capabilities) {
	for _, tc := range append(baselineTests(), isolationTests()...) {
		if tc.isolated && !c.Isolated {
			continue
		}
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newEnv(t, newManager)) })
	}
}

// env is a daemon's data dir as Silas lays it out (keys, tokens, config),
// with the backend's work dirs under <data>/sandbox/work, as in production.
type env struct {
	m sandbox.Manager
	// data is the data dir; root the backend's work root inside it.
	data, root string
	// secrets are files of the data dir that no sandbox may read.
	secrets []string
	// canary is the content of every secret.
	canary string
}

func newEnv(t *testing.T, newManager NewManager) *env {
	t.Helper()
	data := t.TempDir()
	e := &env{data: data, root: filepath.Join(data, "sandbox", "work"), canary: "silas-canary-" + uniq()}
	for _, rel := range []string{"keys/owner.key", "web_token", "session_secret", "config.yaml"} {
		p := filepath.Join(data, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(e.canary+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		e.secrets = append(e.secrets, p)
	}
	e.m = newManager(t, e.root)
	return e
}

// uniq returns a string unique to this call, to mark processes and files.
func uniq() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }

// sleepMarker returns a duration for sleep(1) unique to this call, so the
// sleeping process can be found by its command line.
func sleepMarker(seconds int) string {
	return strconv.Itoa(seconds) + "." + strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 10)
}

// create makes an instance destroyed at the end of the test.
func create(t *testing.T, m sandbox.Manager, cfg messages.SandboxConfig) sandbox.Instance {
	t.Helper()
	in, err := m.Create(t.Context(), cfg)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() {
		if err := in.Destroy(context.Background()); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	return in
}

func run(t *testing.T, in sandbox.Instance, cmd sandbox.Command) sandbox.Result {
	t.Helper()
	if cmd.Timeout == 0 {
		cmd.Timeout = 60 * time.Second
	}
	res, err := in.Run(t.Context(), cmd)
	if err != nil {
		t.Fatalf("run %q: %v", cmd.Args, err)
	}
	return res
}

// sh runs a shell script with positional arguments.
func sh(t *testing.T, in sandbox.Instance, script string, args ...string) sandbox.Result {
	t.Helper()
	return run(t, in, sandbox.Command{Args: append([]string{"sh", "-c", script, "sh"}, args...)})
}

// findCmdline returns the pids whose /proc/<pid>/cmdline contains s.
func findCmdline(t *testing.T, s string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// checkFor polls fn until it returns nil or the timeout passes.
func checkFor(t *testing.T, timeout time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		<-tick.C
	}
}
