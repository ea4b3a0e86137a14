package script

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/gates"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/bwrap"
	"github.com/silas-ai/silas/sandbox/subprocess"
)

func strp(s string) *string { return &s }

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"./check.sh --flag", []string{"./check.sh", "--flag"}, false},
		{`a 'b c' "d \"e\" $f" g\ h`, []string{"a", "b c", `d "e" $f`, "g h"}, false},
		{"echo; rm -rf / #", []string{"echo;", "rm", "-rf", "/", "#"}, false},
		{`''`, []string{""}, false},
		{"  ", nil, true},
		{"'open", nil, true},
		{`trailing\`, nil, true},
	}
	for _, tt := range tests {
		got, err := SplitCommand(tt.in)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseOutput(t *testing.T) {
	tests := []struct {
		name   string
		out    string
		values map[string]string
		mc     map[string]any
		text   string
	}{
		{"values", "score: 0.9\nlabel: ok\n", map[string]string{"score": "0.9", "label": "ok"}, nil, "score: 0.9\nlabel: ok\n"},
		{"modified_context last line", "a: 1\n{\"modified_context\": {\"message\": \"x\"}}\n\n", map[string]string{"a": "1"},
			map[string]any{"message": "x"}, "a: 1\n\n"},
		{"not last line is plain text", "{\"modified_context\": {\"message\": \"x\"}}\nend\n", map[string]string{"{\"modified_context\"": "{\"message\": \"x\"}}"}, nil,
			"{\"modified_context\": {\"message\": \"x\"}}\nend\n"},
		{"extra keys are not the reserved line", "{\"modified_context\": {}, \"other\": 1}", map[string]string{"{\"modified_context\"": "{}, \"other\": 1}"}, nil,
			"{\"modified_context\": {}, \"other\": 1}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ParseOutput([]byte(tt.out))
			if !reflect.DeepEqual(p.Values, tt.values) || !reflect.DeepEqual(p.ModifiedContext, tt.mc) || p.Text != tt.text {
				t.Errorf("ParseOutput = %+v; want values %v mc %v text %q", p, tt.values, tt.mc, tt.text)
			}
		})
	}
}

func TestEnvironment(t *testing.T) {
	ctx := map[string]any{"message": "a'b\x00c", "tool-args": map[string]any{"k": 1.0}, "sender_id": "u"}
	env, err := Environment("g", messages.TriggerEveryUserMessage, ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "SILAS_GATE_NAME=g", "SILAS_GATE_TRIGGER=every_user_message",
		"SILAS_GATE_VALUE=a'b\uFFFDc",
	}
	if !slices.Equal(env[:len(want)], want) {
		t.Errorf("env = %q, want prefix %q", env, want)
	}
	for _, kv := range []string{"SILAS_CTX_MESSAGE=a'b\uFFFDc", `SILAS_CTX_TOOL_ARGS={"k":1}`, "SILAS_CTX_SENDER_ID=u"} {
		if !slices.Contains(env, kv) {
			t.Errorf("env lacks %q: %q", kv, env)
		}
	}
	if _, err := Environment("g", messages.TriggerEveryUserMessage, map[string]any{"message": strings.Repeat("x", 100<<10)}); !errors.Is(err, ErrContextTooLarge) {
		t.Errorf("err = %v, want ErrContextTooLarge", err)
	}
}

func writeScript(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// newSubprocess is a real subprocess sandbox rooted outside any script dir.
func newSubprocess(t *testing.T) sandbox.Manager {
	t.Helper()
	b, err := subprocess.New(subprocess.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newBwrap is a real bubblewrap sandbox, or skips the test saying why.
func newBwrap(t *testing.T) sandbox.Manager {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not on PATH: install the Debian package bubblewrap to run the script gate isolation tests (CI does)")
	}
	b, err := bwrap.New(bwrap.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newProvider is a provider over dir whose scripts run in m (the subprocess
// backend when nil).
func newProvider(t *testing.T, dir string, m sandbox.Manager, o Options) *Provider {
	t.Helper()
	if m == nil {
		m = newSubprocess(t)
	}
	o.Dir, o.Sandbox = dir, m
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// scriptGate is a gate running cmd, decided by its exit status unless mod
// says otherwise.
func scriptGate(cmd string, mod func(*messages.Gate)) messages.Gate {
	g := messages.Gate{Name: "s", On: messages.TriggerEveryUserMessage, Provider: messages.ProviderScript, Type: messages.GateStringMatch, Check: strp(cmd)}
	if mod != nil {
		mod(&g)
	}
	return g
}

func evaluate(t *testing.T, p *Provider, g messages.Gate, value string) (messages.GateResult, error) {
	t.Helper()
	return p.Evaluate(t.Context(), &g, g.On, gates.InputContext(value, "u"))
}

func TestScriptDecisions(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "exit.sh", "exit \"$1\"\n")
	writeScript(t, dir, "score.sh", "echo \"score: $SILAS_GATE_VALUE\"\n")
	writeScript(t, dir, "say.sh", "printf '%s\\n' \"$1\"\n")
	p := newProvider(t, dir, nil, Options{})
	zero, one := 0, 1
	lt := 10.0
	g := scriptGate
	tests := []struct {
		name  string
		gate  messages.Gate
		value string
		want  messages.GateAction
	}{
		{"exit 0 continues", g("./exit.sh 0", nil), "", messages.GateContinue},
		{"exit 3 blocks", g("./exit.sh 3", nil), "", messages.GateBlock},
		{"expect exit code", g("./exit.sh 1", func(x *messages.Gate) { x.CheckExpect = &messages.Expectation{ExitCode: &one} }), "", messages.GateContinue},
		{"expect exit code fails", g("./exit.sh 1", func(x *messages.Gate) { x.CheckExpect = &messages.Expectation{ExitCode: &zero} }), "", messages.GateBlock},
		{"expect contains", g("./say.sh hello", func(x *messages.Gate) { x.CheckExpect = &messages.Expectation{Contains: strp("ell")} }), "", messages.GateContinue},
		{"expect output_lt", g("./say.sh 3", func(x *messages.Gate) { x.CheckExpect = &messages.Expectation{OutputLT: &lt} }), "", messages.GateContinue},
		{"expect output_lt fails", g("./say.sh 30", func(x *messages.Gate) { x.CheckExpect = &messages.Expectation{OutputLT: &lt} }), "", messages.GateBlock},
		{"expect file_exists", g("./exit.sh 0", func(x *messages.Gate) { x.CheckExpect = &messages.Expectation{FileExists: strp("say.sh")} }), "", messages.GateContinue},
		{"expect file_exists missing", g("./exit.sh 0", func(x *messages.Gate) { x.CheckExpect = &messages.Expectation{FileExists: strp("made.txt")} }), "", messages.GateBlock},
		{"extract delegates to predicate", g("./score.sh", func(x *messages.Gate) {
			x.Type, x.Extract, x.AutoApprove = messages.GateNumericRange, strp("score"), &messages.NumericRange{Min: 0, Max: 1}
		}), "0.5", messages.GateContinue},
		{"extract out of range", g("./score.sh", func(x *messages.Gate) {
			x.Type, x.Extract, x.AutoApprove = messages.GateNumericRange, strp("score"), &messages.NumericRange{Min: 0, Max: 1}
		}), "7", messages.GateBlock},
		{"extract missing", g("./exit.sh 0", func(x *messages.Gate) { x.Extract = strp("score") }), "", messages.GateBlock},
		{"argv config", g("unused", func(x *messages.Gate) { x.Config = map[string]any{"argv": []any{"./exit.sh", "0"}} }), "", messages.GateContinue},
		{"a system program by name", g("true", nil), "", messages.GateContinue},
		{"an absolute path inside the dir", g(filepath.Join(dir, "exit.sh")+" 0", nil), "", messages.GateContinue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := evaluate(t, p, tt.gate, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if r.Action != tt.want {
				t.Errorf("action = %s (%s), want %s", r.Action, r.Reason, tt.want)
			}
		})
	}
}

// TestScriptResolution: scripts come from the script directory only.
func TestScriptResolution(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "scripts")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{dir, filepath.Join(dir, "sub"), outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	marker := filepath.Join(root, "ran")
	writeScript(t, dir, "ok.sh", "echo ok\n")
	writeScript(t, outside, "evil.sh", "touch "+marker+"\n")
	for link, target := range map[string]string{
		"escape.sh":    filepath.Join(outside, "evil.sh"),
		"rel-escape":   "../outside/evil.sh",
		"sub/dirlink":  outside,
		"inner.sh":     "ok.sh",
		"sub/up-ok.sh": "../ok.sh",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	p := newProvider(t, dir, nil, Options{})
	tests := []struct {
		name    string
		cmd     string
		wantErr bool
	}{
		{"a relative script", "./ok.sh", false},
		{"a script in a subdirectory reached by a link inside", "sub/up-ok.sh", false},
		{"a symlink to a script inside", "./inner.sh", false},
		{"dot-dot", "../outside/evil.sh", true},
		{"dot-dot that comes back", "sub/../ok.sh", true},
		{"an absolute path outside", filepath.Join(outside, "evil.sh"), true},
		{"an absolute system path", "/bin/true", true},
		{"a symlink leaving the dir", "./escape.sh", true},
		{"a relative symlink leaving the dir", "./rel-escape", true},
		{"a symlinked directory leaving the dir", "sub/dirlink/evil.sh", true},
		{"a missing script", "./absent.sh", true},
		{"a directory", "./sub", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := evaluate(t, p, scriptGate(tt.cmd, nil), "")
			if tt.wantErr != (err != nil) || (tt.wantErr && !errors.Is(err, gates.ErrBadConfig)) {
				t.Fatalf("err = %v, want an ErrBadConfig: %v", err, tt.wantErr)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("a script outside the script directory ran")
			}
		})
	}
}

// TestScriptEnvironment: the script sees the gate's variables, an empty
// HOME of its own and the script directory as working directory, and
// nothing of the daemon's environment.
func TestScriptEnvironment(t *testing.T) {
	t.Setenv("SILAS_DAEMON_SECRET", "daemon-only")
	dir := t.TempDir()
	writeScript(t, dir, "env.sh", `echo "names: $(env | cut -d= -f1 | grep -vx PWD | sort | paste -sd, -)"
echo "value: $SILAS_GATE_VALUE"
echo "cwd: $(pwd -P)"
echo "home empty: $([ -z "$(ls -A "$HOME")" ] && [ "$HOME" != "$(pwd -P)" ] && echo yes)"
`)
	p := newProvider(t, dir, nil, Options{})
	g := scriptGate("./env.sh", func(x *messages.Gate) { x.CheckExpect = &messages.Expectation{NotEmpty: ptr(true)} })
	r, err := evaluate(t, p, g, "a'b $(x)")
	if err != nil {
		t.Fatal(err)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"names: HOME,LANG,PATH,SILAS_CTX_MESSAGE,SILAS_CTX_SENDER_ID,SILAS_GATE_CONTEXT_JSON,SILAS_GATE_NAME,SILAS_GATE_TRIGGER,SILAS_GATE_VALUE",
		"value: a'b $(x)", "cwd: " + realDir, "home empty: yes",
	}
	for _, w := range want {
		if !strings.Contains(valueText(r), w) {
			t.Errorf("output lacks %q:\n%s", w, valueText(r))
		}
	}
}

func ptr[T any](v T) *T { return &v }

// valueText is a result's value (the script's output) as text.
func valueText(r messages.GateResult) string {
	s, _ := r.Value.(string)
	return s
}

// TestScriptGateIsolation runs a script gate under bubblewrap (standing for
// any isolating backend): the canary standing for the keys is out of its
// reach, the script directory is read-only, and a control shows the same
// script reads what it may.
func TestScriptGateIsolation(t *testing.T) {
	m := newBwrap(t)
	keys := t.TempDir()
	canary := filepath.Join(keys, "owner.key")
	const secret = "CANARY-private-key-material"
	if err := os.WriteFile(canary, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeScript(t, dir, "read.sh", "cat \"$1\"\n")
	writeScript(t, dir, "write.sh", "echo x > \"$PWD/written\"\n")
	if err := os.WriteFile(filepath.Join(dir, "allowed.txt"), []byte("allowed content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, dir, m, Options{})
	tests := []struct {
		name    string
		cmd     string
		want    messages.GateAction
		wantOut string
	}{
		{"control: a file of the script directory", "./read.sh allowed.txt", messages.GateContinue, "allowed content"},
		{"the canary standing for the keys", "./read.sh " + canary, messages.GateBlock, ""},
		{"the canary through cat itself", "cat " + canary, messages.GateBlock, ""},
		{"a write into the script directory", "./write.sh", messages.GateBlock, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := evaluate(t, p, scriptGate(tt.cmd, nil), "")
			if err != nil {
				t.Fatal(err)
			}
			if out := valueText(r); r.Action != tt.want || !strings.Contains(out, tt.wantOut) || strings.Contains(out, "CANARY") {
				t.Fatalf("result %+v; want %s with output containing %q and no canary", r, tt.want, tt.wantOut)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "written")); err == nil {
		t.Fatal("the script wrote into the script directory")
	}
	// The canary is readable where nothing isolates the file system, so
	// the blocks above are the sandbox's doing.
	r, err := evaluate(t, newProvider(t, dir, nil, Options{}), scriptGate("./read.sh "+canary, nil), "")
	if err != nil || !strings.Contains(valueText(r), secret) {
		t.Fatalf("the unisolated subprocess backend did not read the canary (%v, %+v): the test proves nothing", err, r)
	}
}

// TestScriptGateHasNoNetwork: a script cannot connect to a listener on the
// host's loopback, under every backend.
func TestScriptGateHasNoNetwork(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH: the script of this test connects with it; install it to run the test")
	}
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
	dir := t.TempDir()
	writeScript(t, dir, "connect.sh", `echo started
exec python3 -c "import socket, sys
try:
    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5).close()
except OSError as e:
    print('failed:', e); sys.exit(1)
print('connected')" "$1"
`)
	for _, b := range []struct {
		name string
		new  func(*testing.T) sandbox.Manager
	}{{"subprocess", newSubprocess}, {"bwrap", newBwrap}} {
		t.Run(b.name, func(t *testing.T) {
			p := newProvider(t, dir, b.new(t), Options{})
			r, err := evaluate(t, p, scriptGate("./connect.sh "+port, nil), "")
			if err != nil {
				t.Fatal(err)
			}
			if out := valueText(r); r.Action != messages.GateBlock || !strings.Contains(out, "started") || !strings.Contains(out, "failed:") {
				t.Fatalf("result %+v; want a block after the script started and failed to connect", r)
			}
		})
	}
}

// TestScriptSandboxRootInsideDir: a sandbox whose work dirs would lie in
// the script directory, in every run's view, is refused.
func TestScriptSandboxRootInsideDir(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "ok.sh", "true\n")
	m, err := subprocess.New(subprocess.Options{Root: filepath.Join(dir, "sandbox")})
	if err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, dir, m, Options{})
	if _, err := evaluate(t, p, scriptGate("./ok.sh", nil), ""); !errors.Is(err, gates.ErrBadConfig) {
		t.Fatalf("err = %v, want ErrBadConfig", err)
	}
}

func TestScriptTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	// The script starts a grandchild that would outlive a plain kill, then
	// waits. The subprocess backend shares the host's file system, so the
	// pid file can be left outside the read-only script directory.
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	writeScript(t, dir, "hang.sh", "sleep 300 &\necho $! > \"$1\"\nwait\n")
	p := newProvider(t, dir, nil, Options{Timeout: 500 * time.Millisecond})
	_, err := evaluate(t, p, scriptGate("./hang.sh "+pidFile, nil), "x")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("script did not start its child: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	// Killed processes are reaped by init asynchronously: poll, do not sleep.
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still alive after the timeout", pid)
		}
		runtime.Gosched()
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat))
	return len(fields) > 2 && fields[2] != "Z"
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"a relative dir", Options{Dir: "rel", Sandbox: newSubprocess(t)}},
		{"no sandbox", Options{Dir: t.TempDir()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.o); !errors.Is(err, gates.ErrBadConfig) {
				t.Errorf("err = %v, want ErrBadConfig", err)
			}
		})
	}
}
