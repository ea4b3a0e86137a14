package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/sandbox/backends"
)

// The attacks an approved plan's shell_exec tries against the daemon that
// runs it. Each prints "LEAK:<name>" if it worked and "HELD:<name>" if it
// did not; {{...}} are filled in per run. Writes outside the work dir are
// judged on the host: inside, the paths may exist on a private tmpfs. The
// fork bomb comes last, and only shell builtins follow it: until its
// processes are reaped, the process limit refuses every fork.
const attackScript = `
DATA='{{data}}'; PID='{{pid}}'; PORT='{{port}}'; MARK='{{mark}}'
for f in owner.key web_token session_secret; do
  if cat "$DATA/keys/$f" >/dev/null 2>&1; then echo "LEAK:abs-$f"; else echo "HELD:abs-$f"; fi
  if cat "{{rel}}/keys/$f" >/dev/null 2>&1; then echo "LEAK:rel-$f"; else echo "HELD:rel-$f"; fi
done
if tr '\0' '\n' < /proc/$PID/environ 2>/dev/null | grep -q CANARY_API_KEY; then echo LEAK:environ; else echo HELD:environ; fi
if tr '\0' '\n' < /proc/1/environ 2>/dev/null | grep -q CANARY_API_KEY; then echo LEAK:environ-1; else echo HELD:environ-1; fi
if nsenter -t "$PID" -n true 2>/dev/null; then echo LEAK:nsenter-net; else echo HELD:nsenter-net; fi
if nsenter -t "$PID" -m -u -i -p true 2>/dev/null; then echo LEAK:nsenter-all; else echo HELD:nsenter-all; fi
if python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), timeout=3).close()" 2>/dev/null; then echo LEAK:connect; else echo HELD:connect; fi
touch "$DATA/pwned" ../escaped 2>/dev/null
if touch /usr/pwned 2>/dev/null; then echo LEAK:write-usr; else echo HELD:write-usr; fi
if python3 -c "b = bytearray(3 << 30)" 2>/dev/null; then echo LEAK:memory; else echo HELD:memory; fi
(setsid sh -c "sleep $MARK & exit" &)
timeout -s KILL 5 sh -c 'b() { b | b & }; b' 2>/dev/null
echo HELD:forkbomb-returned
echo DONE
`

// attackNames are the attacks attackScript reports on.
var attackNames = []string{
	"abs-owner.key", "rel-owner.key", "abs-web_token", "rel-web_token", "abs-session_secret", "rel-session_secret",
	"environ", "environ-1", "nsenter-net", "nsenter-all", "connect", "write-usr",
	"forkbomb-returned", "memory",
}

// TestAttackerInsideTheSandbox runs the real daemon (as root, and as an
// unprivileged user) under each isolating backend, approves a plan whose
// executor runs attackScript, and checks that every attack failed, that no
// secret byte reached a tool result, a model request, the audit log, a log
// line or a WebSocket frame, and that no process of the attempt outlived it.
func TestAttackerInsideTheSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs the real daemon")
	}
	for _, backend := range []string{backends.Namespaces, backends.Bwrap} {
		for _, user := range []string{"root", "unprivileged"} {
			t.Run(backend+"/"+user, func(t *testing.T) {
				if backend == backends.Bwrap {
					if _, err := exec.LookPath("bwrap"); err != nil {
						t.Skip("bwrap is not on PATH: install the Debian package bubblewrap to test this backend (.ci/run does)")
					}
				}
				switch {
				case user == "root" && os.Geteuid() != 0:
					t.Skip("the test process is not root, so the daemon cannot run as root here (CI runs as root)")
				case user == "unprivileged" && os.Geteuid() != 0:
					user = "self" // already unprivileged: the daemon runs as this user
				}
				attack(t, backend, user)
			})
		}
	}
}

// nobody is the uid and gid the unprivileged daemon runs as.
const nobody = 65534

func attack(t *testing.T, backend, user string) {
	mock := newMock(t)
	// A directory every user can enter holds the data dir, the config and
	// the binary, so the daemon can run as nobody.
	root, err := os.MkdirTemp("", "silas-attack")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(root, "data")
	ov := overrides(t, mock, dataDir)
	delete(ov, "silas.channels.web.auth_token") // the generated token is a secret to protect
	ov["silas.sandbox.backend"] = backend
	ov["silas.approval.request_timeout_seconds"] = 120
	ov["silas.log.level"] = "debug"
	cfgPath := filepath.Join(root, "silas.yaml")
	if err := os.Rename(writeConfig(t, ov), cfgPath); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "silas")
	copyFile(t, silasBinary(t), bin, 0o755)
	var cred *syscall.Credential
	if user == "unprivileged" {
		cred = &syscall.Credential{Uid: nobody, Gid: nobody}
		if err := os.Mkdir(dataDir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dataDir, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(cfgPath, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	canary := fmt.Sprintf("canary-%d", time.Now().UnixNano())
	if out, err := runAs(bin, cred, "init", "--config", cfgPath); err != nil {
		t.Fatalf("silas init: %v\n%s", err, out)
	}
	token, err := runAs(bin, cred, "token", "--config", cfgPath)
	if err != nil {
		t.Fatalf("silas token: %v\n%s", err, token)
	}
	token = strings.TrimSpace(token)
	secrets := readSecrets(t, dataDir, canary)

	var logs lockedBuffer
	p := startAs(t, bin, cfgPath, cred, []string{"CANARY_API_KEY=" + canary}, &logs)
	port := p.addr[strings.LastIndexByte(p.addr, ':')+1:]
	mark := fmt.Sprintf("987.%d", time.Now().UnixNano()%1_000_000)
	script := strings.NewReplacer("{{data}}", dataDir, "{{pid}}", strconv.Itoa(p.cmd.Process.Pid),
		"{{port}}", port, "{{mark}}", mark, "{{rel}}", "../../..").Replace(attackScript)
	mock.HandleReply(attackerPlan(script))

	c := ownerWithToken(t, p.addr, token)
	var frames []event
	id := c.say("run the maintenance task")
	req := c.next("approval_request")
	frames = append(frames, req)
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	status := ""
	for status != "done" && status != "failed" && status != "blocked" && status != "stuck" {
		ev := c.nextAny()
		frames = append(frames, ev)
		if ev.str("type") == "work_item_status" {
			status = ev.str("status")
		}
	}
	_ = id

	out := attackOutput(t, mock)
	if !strings.Contains(out, "DONE") {
		t.Fatalf("the attack script did not finish (status %s); its output:\n%s", status, out)
	}
	for _, name := range attackNames {
		if strings.Contains(out, "LEAK:"+name) || !strings.Contains(out, "HELD:"+name) {
			t.Errorf("attack %s was not stopped; the script printed:\n%s", name, out)
		}
	}
	for _, f := range []string{filepath.Join(dataDir, "pwned"), filepath.Join(dataDir, "sandbox", "work", "escaped")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("the sandbox wrote %s on the host", f)
		}
	}
	checkFor(t, 30*time.Second, func() bool { return len(findProcesses(mark)) == 0 },
		"no process of the attempt (the setsid double-fork) outlives it")

	p.stop(t)
	var haystacks []string
	haystacks = append(haystacks, logs.String())
	for _, r := range mock.Requests() {
		b, _ := json.Marshal(r)
		haystacks = append(haystacks, string(b))
	}
	for _, f := range frames {
		b, _ := json.Marshal(f)
		haystacks = append(haystacks, string(b))
	}
	haystacks = append(haystacks, auditDump(t, filepath.Join(dataDir, "db")))
	for name, forms := range secrets {
		for _, h := range haystacks {
			for _, form := range forms {
				if strings.Contains(h, form) {
					t.Fatalf("the %s (as %q) appears in the daemon's output, a model request, a frame or the audit log", name, form)
				}
			}
		}
	}
}

// ownerWithToken connects to /ws as the owner with token.
func ownerWithToken(t *testing.T, addr, token string) *client {
	t.Helper()
	c := mustDial(t, addr, "/ws")
	c.send(map[string]any{"type": "auth", "token": token})
	if ev := c.next("session"); ev.str("role") != "owner" {
		t.Fatalf("session event %v", ev)
	}
	return c
}

// attackerPlan routes to the planner, proposes a task, and has the executor
// run script in one shell_exec call.
func attackerPlan(script string) mockllm.ReplyFunc {
	plan := `---
id: task-maintenance
type: task
title: Maintenance
verify:
  - name: ran
    run: "true"
    expect: { exit_code: 0 }
---
Run the maintenance script.
`
	return func(r *mockllm.RecordedRequest) (mockllm.Reply, bool) {
		switch r.Schema {
		case "RouteDecision":
			return mockllm.Reply{Content: routeDecision("planner", "")}, true
		case "AgentResponse":
			return mockllm.Reply{Content: planReply(plan)}, true
		case "ExecutorAgentOutput":
			if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "tool" {
				return mockllm.Reply{Content: `{"summary":"done","artifact_refs":[],"next_steps":[]}`}, true
			}
			args, _ := json.Marshal(map[string]string{"command": script})
			return mockllm.Reply{ToolCalls: []mockllm.ToolCall{{ID: "call-attack", Name: "shell_exec", Arguments: string(args)}}}, true
		}
		return mockllm.Reply{}, false
	}
}

// attackOutput is the tool result the executor model got for the attack.
func attackOutput(t *testing.T, mock *mockllm.Server) string {
	t.Helper()
	for _, r := range mock.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && m.ToolCallID == "call-attack" {
				var res struct {
					Stdout string `json:"stdout"`
				}
				if err := json.Unmarshal([]byte(m.Content), &res); err == nil && res.Stdout != "" {
					return res.Stdout
				}
				return m.Content
			}
		}
	}
	t.Fatal("the executor model never got the attack's tool result")
	return ""
}

// readSecrets returns each secret the sandbox must not leak, in the forms
// it could appear in: raw, base64 and hex.
func readSecrets(t *testing.T, dataDir, canary string) map[string][]string {
	t.Helper()
	out := map[string][]string{"canary environment variable": {canary}}
	for _, name := range []string{"owner.key", "web_token", "session_secret"} {
		b, err := os.ReadFile(filepath.Join(dataDir, "keys", name))
		if err != nil {
			t.Fatal(err)
		}
		forms := []string{base64.StdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b), hex.EncodeToString(b)}
		if name == "owner.key" {
			var k struct {
				Seed string `json:"seed"`
			}
			if err := json.Unmarshal(b, &k); err != nil || k.Seed == "" {
				t.Fatalf("owner.key is not the documented JSON: %v", err)
			}
			forms = append(forms, k.Seed)
		} else {
			forms = append(forms, string(b))
		}
		out[name] = forms
	}
	return out
}

func auditDump(t *testing.T, dbDir string) string {
	t.Helper()
	db, err := persistence.Open(context.Background(), persistence.Options{Dir: dbDir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, err := db.Audit().Range(context.Background(), 0, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.Event)
		b.Write(e.Data)
		b.WriteByte('\n')
	}
	return b.String()
}

// findProcesses returns the pids whose command line contains marker.
func findProcesses(marker string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

// runAs runs the silas binary to completion as cred (nil: this user).
func runAs(bin string, cred *syscall.Credential, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "TEST_MODEL_KEY=test-key"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// startAs starts `silas serve` as cred with extra environment, sends its
// log lines to logs, and waits until it is ready.
func startAs(t *testing.T, bin, cfgPath string, cred *syscall.Credential, env []string, logs io.Writer) *process {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--config", cfgPath, "--log-format", "json")
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "TEST_MODEL_KEY=test-key"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			_, _ = logs.Write(append(sc.Bytes(), '\n'))
			if m := readyLine.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
	}()
	select {
	case p.addr = <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("silas did not become ready within 30s; its output:\n%s", logs)
	}
	return p
}

// stop ends the daemon with SIGTERM and waits for it, so its database can
// be read.
func (p *process) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatal("silas did not stop within 30s of SIGTERM")
	}
}

// lockedBuffer is a bytes.Buffer safe for the two writers of a process's
// output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestNoIsolationBlocksWorkItems: on a host where no isolating backend
// works (both probes fail) and allow_unisolated is off, the daemon still
// chats, but an approved work item ends blocked at once, with a message
// that says what to enable, and the executor model is never called.
func TestNoIsolationBlocksWorkItems(t *testing.T) {
	mock := newMock(t)
	scriptPlanner(mock)
	dir := t.TempDir()
	ov := overrides(t, mock, dir)
	ov["silas.approval.request_timeout_seconds"] = 120
	cfg := loadConfig(t, ov)
	refuse := func(what string) backends.Prober {
		return func(context.Context) error {
			return errors.New(what)
		}
	}
	d, err := startDaemonWith(context.Background(), cfg, zerolog.New(io.Discard), daemonOptions{sandboxProbes: map[string]backends.Prober{
		backends.Namespaces: refuse("user namespaces are disabled"),
		backends.Bwrap:      refuse("bwrap is not installed"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	td := &testDaemon{daemon: d, t: t}
	t.Cleanup(td.stop)
	c := owner(t, d.Addr())
	c.say("please write hello.txt")
	req := c.next("approval_request")
	c.send(map[string]any{"type": "approval_response", "request_id": req.str("request_id"), "verdict": "approved"})
	var final event
	for {
		ev := c.next("work_item_status")
		if s := ev.str("status"); s != "running" {
			final = ev
			break
		}
	}
	if final.str("status") != "blocked" {
		t.Fatalf("work item ended %q (%v), want blocked", final.str("status"), final)
	}
	for _, want := range []string{"no isolating sandbox", "user namespaces", "bubblewrap", "silas doctor", "allow_unisolated"} {
		if !strings.Contains(final.str("detail"), want) {
			t.Errorf("the blocked status does not say %q: %s", want, final.str("detail"))
		}
	}
	if n := len(executorCalls(mock)); n != 0 {
		t.Fatalf("the executor model was called %d times on a host without a sandbox", n)
	}
}
