package sandboxtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
)

// baselineTests are the promises every backend keeps.
func baselineTests() []test {
	return []test{
		{"Network", false, testNetwork},
		{"TimeoutKillsChildren", false, testTimeoutKillsChildren},
		{"EnvironmentScrubbed", false, testEnvironmentScrubbed},
		{"ValuesAreNeverCode", false, testValuesAreNeverCode},
		{"OutputCaps", false, testOutputCaps},
		{"MemoryLimit", false, testMemoryLimit},
		{"ExitStatusAndStdin", false, testExitStatusAndStdin},
		{"StreamedInputOutput", false, testStreamedInputOutput},
		{"WorkDirLifecycle", false, testWorkDirLifecycle},
	}
}

func testNetwork(t *testing.T, e *env) {
	m := e.m
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	script := "import socket; socket.create_connection(('127.0.0.1', " + port + "), timeout=5).close()"
	cases := []struct {
		name    string
		network bool
		wantOK  bool
	}{
		{"without network_access the host's loopback is unreachable", false, false},
		{"with network_access it is reachable", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := messages.DefaultSandboxConfig()
			cfg.NetworkAccess = tc.network
			res := run(t, create(t, m, cfg), sandbox.Command{Args: []string{"python3", "-c", script}})
			if res.Success() != tc.wantOK {
				t.Fatalf("connect to 127.0.0.1:%s: exit %d signal %q, want success=%v; stderr: %s",
					port, res.ExitCode, res.Signal, tc.wantOK, res.Stderr)
			}
		})
	}
}

func testTimeoutKillsChildren(t *testing.T, e *env) {
	m := e.m
	in := create(t, m, messages.DefaultSandboxConfig())
	// A unique duration marks the grandchild in /proc, whichever PID
	// namespace it runs in.
	marker := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1_000_000_000)
	res := run(t, in, sandbox.Command{
		Args:    []string{"sh", "-c", `sleep "$1" & echo $! > child.pid; wait`, "sh", marker},
		Timeout: 2 * time.Second,
	})
	if !res.TimedOut || res.Signal != "SIGKILL" {
		t.Fatalf("want a timed-out, SIGKILLed run, got %+v", res)
	}
	pidText, err := os.ReadFile(filepath.Join(in.WorkDir(), "child.pid"))
	if err != nil || len(bytes.TrimSpace(pidText)) == 0 {
		t.Fatalf("the child never started (child.pid: %q, %v)", pidText, err)
	}
	checkFor(t, 10*time.Second, func() error {
		if pids := findCmdline(t, "sleep\x00"+marker+"\x00"); len(pids) > 0 {
			return fmt.Errorf("child sleep %s still alive as pids %v", marker, pids)
		}
		return nil
	})
}

func testEnvironmentScrubbed(t *testing.T, e *env) {
	m := e.m
	secret := fmt.Sprintf("SILAS_TEST_SECRET_%d", time.Now().UnixNano())
	t.Setenv(secret, "server-only")
	t.Setenv("OPENROUTER_API_KEY", "sk-server-only")
	cfg := messages.DefaultSandboxConfig()
	cfg.Env = map[string]string{"ALLOWED": "yes"}
	in := create(t, m, cfg)
	res := run(t, in, sandbox.Command{Args: []string{"env"}, Env: map[string]string{"PER_RUN": "1"}})
	if !res.Success() {
		t.Fatalf("env failed: %+v", res)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	var names []string
	for k := range got {
		names = append(names, k)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "ALLOWED,HOME,PATH,PER_RUN" {
		t.Fatalf("sandbox environment has %v, want exactly ALLOWED, HOME, PATH, PER_RUN:\n%s", names, res.Stdout)
	}
	if got["HOME"] != in.WorkDir() || got["PATH"] != sandbox.DefaultPath || got["ALLOWED"] != "yes" {
		t.Fatalf("wrong values: %v", got)
	}
}

func testValuesAreNeverCode(t *testing.T, e *env) {
	m := e.m
	payloads := []string{
		`'; rm -rf "$HOME/canary" #`,
		`$(rm -rf "$HOME/canary")`,
		"`rm -rf \"$HOME/canary\"`",
		`"; rm -rf "$HOME/canary"; echo "`,
		"line1\nrm -rf \"$HOME/canary\"",
	}
	for i, p := range payloads {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			cfg := messages.DefaultSandboxConfig()
			cfg.Env = map[string]string{"PAYLOAD": p}
			in := create(t, m, cfg)
			canary := filepath.Join(in.WorkDir(), "canary")
			if err := os.WriteFile(canary, []byte("alive"), 0o600); err != nil {
				t.Fatal(err)
			}
			cmds := [][]string{
				{"printenv", "PAYLOAD"},
				{"sh", "-c", `printf '%s\n' "$PAYLOAD"`},
				{"echo", p},
			}
			for _, args := range cmds {
				res := run(t, in, sandbox.Command{Args: args})
				if got := strings.TrimSuffix(string(res.Stdout), "\n"); got != p || !res.Success() {
					t.Errorf("%q printed %q (exit %d), want the value intact %q", args, got, res.ExitCode, p)
				}
			}
			if _, err := os.Stat(canary); err != nil {
				t.Fatalf("a value was executed: canary gone: %v", err)
			}
		})
	}
}

func testOutputCaps(t *testing.T, e *env) {
	m := e.m
	in := create(t, m, messages.DefaultSandboxConfig())
	cases := []struct {
		name                    string
		script                  string
		capBytes                int
		wantOut, wantErr        int
		wantOutTrunc, wantETrun bool
	}{
		{"stdout past the cap", `head -c 300000 /dev/zero; printf abc >&2`, 1000, 1000, 3, true, false},
		{"stderr past the cap", `printf ok; head -c 300000 /dev/zero >&2`, 1000, 2, 1000, false, true},
		{"exactly at the cap", `head -c 1000 /dev/zero`, 1000, 1000, 0, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, in, sandbox.Command{Args: []string{"sh", "-c", tc.script}, MaxOutputBytes: tc.capBytes})
			if len(res.Stdout) != tc.wantOut || len(res.Stderr) != tc.wantErr ||
				res.StdoutTruncated != tc.wantOutTrunc || res.StderrTruncated != tc.wantETrun {
				t.Fatalf("stdout %d (truncated %v), stderr %d (truncated %v); want %d (%v), %d (%v)",
					len(res.Stdout), res.StdoutTruncated, len(res.Stderr), res.StderrTruncated,
					tc.wantOut, tc.wantOutTrunc, tc.wantErr, tc.wantETrun)
			}
			if !res.Success() {
				t.Fatalf("the writer must not be blocked or killed by the cap: %+v", res)
			}
		})
	}
}

func testMemoryLimit(t *testing.T, e *env) {
	m := e.m
	alloc := "b = bytearray(300 * 1024 * 1024); b[-1] = 1; print('allocated')"
	cases := []struct {
		name   string
		mb     int
		wantOK bool
	}{
		{"300 MB under a 128 MB limit fails", 128, false},
		{"300 MB under a 2048 MB limit works", 2048, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := messages.DefaultSandboxConfig()
			cfg.MaxMemoryMB = tc.mb
			res := run(t, create(t, m, cfg), sandbox.Command{Args: []string{"python3", "-c", alloc}})
			if res.Success() != tc.wantOK {
				t.Fatalf("exit %d, want success=%v; stdout %q stderr %q", res.ExitCode, tc.wantOK, res.Stdout, res.Stderr)
			}
			if !tc.wantOK && !bytes.Contains(res.Stderr, []byte("MemoryError")) {
				t.Fatalf("want a MemoryError, got stderr %q", res.Stderr)
			}
		})
	}
}

func testExitStatusAndStdin(t *testing.T, e *env) {
	m := e.m
	in := create(t, m, messages.DefaultSandboxConfig())
	cases := []struct {
		name     string
		cmd      sandbox.Command
		wantCode int
		wantOut  string
	}{
		{"exit status", sandbox.Command{Args: []string{"sh", "-c", "exit 3"}}, 3, ""},
		{"stdin", sandbox.Command{Args: []string{"cat"}, Stdin: []byte("hello\n")}, 0, "hello\n"},
		{"not found", sandbox.Command{Args: []string{"no-such-program-silas"}}, 127, ""},
		{"work dir", sandbox.Command{Args: []string{"sh", "-c", `[ "$(pwd)" = "$HOME" ] && echo same`}}, 0, "same\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, in, tc.cmd)
			if res.ExitCode != tc.wantCode || string(res.Stdout) != tc.wantOut {
				t.Fatalf("exit %d stdout %q, want %d %q (stderr %q)", res.ExitCode, res.Stdout, tc.wantCode, tc.wantOut, res.Stderr)
			}
		})
	}
	if _, err := in.Run(t.Context(), sandbox.Command{}); !errors.Is(err, sandbox.ErrInvalidCommand) {
		t.Fatalf("empty argv: want ErrInvalidCommand, got %v", err)
	}
}

// testStreamedInputOutput: a process that answers line by line gets each
// line of Input only after the caller read its previous answer on Output,
// and an unclosed Input does not outlive the process.
func testStreamedInputOutput(t *testing.T, e *env) {
	in := create(t, e.m, messages.DefaultSandboxConfig())
	input := make(chan []byte)
	lines := make(chan string, 8)
	out := lineWriter{fn: func(l string) { lines <- l }}
	script := `read a; echo "got $a"; read b; echo "got $b"`
	done := make(chan sandbox.Result, 1)
	go func() {
		res, err := in.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", script}, Stdin: []byte("one\n"), Input: input, Output: &out})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	if l := <-lines; l != "got one" {
		t.Fatalf("first answer %q", l)
	}
	input <- []byte("two\n")
	if l := <-lines; l != "got two" {
		t.Fatalf("second answer %q", l)
	}
	// Input is never closed: the run ends with the process.
	if res := <-done; res.ExitCode != 0 || string(res.Stdout) != "got one\ngot two\n" {
		t.Fatalf("exit %d stdout %q", res.ExitCode, res.Stdout)
	}
}

// lineWriter calls fn with each complete line written to it.
type lineWriter struct {
	fn      func(string)
	partial []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.fn(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
}

func testWorkDirLifecycle(t *testing.T, e *env) {
	m := e.m
	a := create(t, m, messages.DefaultSandboxConfig())
	b := create(t, m, messages.DefaultSandboxConfig())
	if a.WorkDir() == b.WorkDir() {
		t.Fatalf("two instances share %s", a.WorkDir())
	}
	fi, err := os.Stat(a.WorkDir())
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("work dir %s: mode %v, %v; want 0700", a.WorkDir(), fi.Mode().Perm(), err)
	}
	if err := a.Destroy(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.WorkDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("work dir survives Destroy: %v", err)
	}
	if _, err := a.Run(t.Context(), sandbox.Command{Args: []string{"true"}}); !errors.Is(err, sandbox.ErrDestroyed) {
		t.Fatalf("run after destroy: want ErrDestroyed, got %v", err)
	}
}
