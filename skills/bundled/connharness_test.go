package bundled_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/bwrap"
	"github.com/silas-ai/silas/sandbox/namespaces"
	"github.com/silas-ai/silas/skills"
)

// The runtime's side of docs/connections.md, written out by hand so the
// bundled connection skills are tested against the contract itself: each
// script runs in a fresh instance of a real isolating sandbox with network
// access, the skill directory read-only, the four SILAS_ variables and the
// credential file, and speaks NDJSON over stdin and stdout.

// scriptWait bounds every wait for a script's line or exit. Nothing here
// takes more than a few seconds; the bound only keeps a broken script from
// hanging the test.
const scriptWait = 60 * time.Second

// secretsDirName is the directory of the work dir that holds the
// credential file, as the runtime lays it out.
const secretsDirName = ".silas-secrets"

// realSandbox returns the namespaces backend, or bwrap when the host
// cannot run it; it skips (saying why) when neither can run here, since
// both refuse rather than run with less isolation.
func realSandbox(t *testing.T) sandbox.Manager {
	t.Helper()
	requirePython(t)
	root := filepath.Join(t.TempDir(), "work")
	ns, err := namespaces.New(namespaces.Options{Root: root})
	if err == nil {
		if err = ns.Probe(t.Context()); err == nil {
			return ns
		}
	}
	nsErr := err
	bw, err := bwrap.New(bwrap.Options{Root: root})
	if err == nil {
		if err = bw.Probe(t.Context()); err == nil {
			return bw
		}
	}
	if errors.Is(nsErr, sandbox.ErrBackendUnavailable) && errors.Is(err, sandbox.ErrBackendUnavailable) {
		t.Skipf("no isolating sandbox backend runs on this host (both refuse, fail closed): namespaces: %v; bwrap: %v", nsErr, err)
	}
	t.Fatalf("sandbox backends: namespaces: %v; bwrap: %v", nsErr, err)
	return nil
}

// conn is one connection of a bundled connection skill, as the runtime
// holds it: its settings and ref_id, and the credential the keystore
// would hold (Cred), staged into each run and updated from runs that
// succeed.
type conn struct {
	t        *testing.T
	m        sandbox.Manager
	skill    *skills.Skill
	dir      string
	ref      string
	settings map[string]any
	Cred     []byte

	mu       sync.Mutex
	output   []string // every stdout and stderr line of every run
	problems []string // protocol breaks seen by the output goroutines
}

// newConn loads the bundled skill name and checks, when the test ends,
// that no line any of its scripts printed holds one of secrets().
func newConn(t *testing.T, m sandbox.Manager, name string, settings map[string]any, secrets func() []string) *conn {
	t.Helper()
	s, dir := load(t, name)
	c := &conn{t: t, m: m, skill: s, dir: dir, ref: "ref-" + strings.ReplaceAll(name, "-", ""), settings: settings}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, p := range c.problems {
			t.Error(p)
		}
		for _, line := range c.output {
			for _, s := range secrets() {
				if s != "" && strings.Contains(line, s) {
					t.Errorf("a script printed a credential: %q", strings.ReplaceAll(line, s, "<the credential>"))
				}
			}
		}
	})
	return c
}

func (c *conn) record(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.output = append(c.output, line)
}

// problem notes a protocol break; the test fails when it ends (the
// goroutines that see output may outlive a failed test).
func (c *conn) problem(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// scriptRun is one running script.
type scriptRun struct {
	c     *conn
	work  string
	input chan []byte
	lines chan map[string]any
	done  chan sandbox.Result
	res   *sandbox.Result
}

// lineWriter splits the script's stdout into lines, records each and
// passes the decoded objects on; a line that is not a JSON object fails
// the test.
type lineWriter struct {
	c     *conn
	buf   []byte
	lines chan map[string]any
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		w.c.record(line)
		if len(line) > 64<<10 {
			w.c.problem("a stdout line is %d bytes, more than 64 KiB", len(line))
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			w.c.problem("a stdout line is not one JSON object: %q", line)
			continue
		}
		select {
		case w.lines <- obj:
		default:
			w.c.problem("more than %d unread lines", cap(w.lines))
		}
	}
}

// start runs script with args in a fresh sandbox instance. stdin, when
// not nil, is all of its standard input; otherwise send() streams it.
func (c *conn) start(script string, args map[string]any, stdin []byte) *scriptRun {
	t := c.t
	t.Helper()
	in, err := c.skill.CheckArgs(script, args)
	if err != nil {
		t.Fatalf("check args: %v", err)
	}
	cfg := messages.DefaultSandboxConfig()
	cfg.NetworkAccess = true
	cfg.FilesystemRead = []string{c.dir}
	inst, err := c.m.Create(t.Context(), cfg)
	if err != nil {
		t.Fatalf("create sandbox: %v", err)
	}
	t.Cleanup(func() { _ = inst.Destroy(t.Context()) })
	r := &scriptRun{c: c, work: inst.WorkDir(), lines: make(chan map[string]any, 256), done: make(chan sandbox.Result, 1)}
	r.stage(c.Cred)
	settings, _ := json.Marshal(c.settings)
	cmd := sandbox.Command{
		Args: in.Argv(c.dir),
		Env: map[string]string{
			"SILAS_CONNECTION_ID":       "cn-test1",
			"SILAS_CREDENTIAL_REF":      c.ref,
			"SILAS_SECRETS_DIR":         filepath.Join(r.work, secretsDirName),
			"SILAS_CONNECTION_SETTINGS": string(settings),
		},
		Stdin:          stdin,
		Output:         &lineWriter{c: c, lines: r.lines},
		Timeout:        2 * scriptWait,
		MaxOutputBytes: 1 << 20,
	}
	if stdin == nil {
		r.input = make(chan []byte, 16)
		cmd.Input = r.input
	}
	go func() {
		res, err := inst.Run(t.Context(), cmd)
		if err != nil && t.Context().Err() == nil {
			c.problem("run %s: %v", script, err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(res.Stderr)), "\n") {
			c.record(l)
		}
		r.done <- res
	}()
	return r
}

// stage writes the credential file (value nil: only the directory) owned
// like the work dir, as the runtime does: the sandboxed script runs as the
// work dir's owner.
func (r *scriptRun) stage(value []byte) {
	t := r.c.t
	t.Helper()
	st, err := os.Stat(r.work)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	dir := filepath.Join(r.work, secretsDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(dir, int(sys.Uid), int(sys.Gid)); err != nil {
		t.Fatal(err)
	}
	if value == nil {
		return
	}
	p := filepath.Join(dir, r.c.ref)
	if err := os.WriteFile(p, value, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(p, int(sys.Uid), int(sys.Gid)); err != nil {
		t.Fatal(err)
	}
}

// credential returns the credential file as the run left it, or nil.
func (r *scriptRun) credential() []byte {
	b, err := os.ReadFile(filepath.Join(r.work, secretsDirName, r.c.ref))
	if err != nil {
		return nil
	}
	return b
}

// send writes one protocol line to the script's stdin.
func (r *scriptRun) send(v any) {
	r.c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		r.c.t.Fatal(err)
	}
	select {
	case r.input <- append(b, '\n'):
	case <-time.After(scriptWait):
		r.c.t.Fatal("the script does not read its input")
	}
}

// next returns the next stdout line, failing the test when the script
// exits or stays silent first.
func (r *scriptRun) next() map[string]any {
	r.c.t.Helper()
	select {
	case l := <-r.lines:
		return l
	case <-time.After(scriptWait):
		r.c.t.Fatal("no line from the script")
	}
	return nil
}

// nextOf returns the next line of type typ, skipping log lines.
func (r *scriptRun) nextOf(typ string) map[string]any {
	r.c.t.Helper()
	for {
		l := r.next()
		if l["type"] == "log" {
			continue
		}
		if l["type"] != typ {
			r.c.t.Fatalf("want a %s line, got %v", typ, l)
		}
		return l
	}
}

// wait waits for the script to exit and checks it exited 0.
func (r *scriptRun) wait() sandbox.Result {
	r.c.t.Helper()
	if r.res != nil {
		return *r.res
	}
	select {
	case res := <-r.done:
		r.res = &res
	case <-time.After(2 * scriptWait):
		r.c.t.Fatal("the script did not exit")
	}
	if !r.res.Success() {
		r.c.t.Fatalf("exit %d signal %q timed out %v; stderr: %s", r.res.ExitCode, r.res.Signal, r.res.TimedOut, r.res.Stderr)
	}
	return *r.res
}

// rest returns the lines left after the script exited.
func (r *scriptRun) rest() []map[string]any {
	var out []map[string]any
	for {
		select {
		case l := <-r.lines:
			out = append(out, l)
		default:
			return out
		}
	}
}

// call runs a request/response script and returns its last line; when
// the script succeeds and changed the credential file, the new credential
// becomes the stored one, as the runtime moves it to the keystore.
func (c *conn) call(script string, args map[string]any, request any) map[string]any {
	c.t.Helper()
	stdin := []byte{}
	if request != nil {
		b, _ := json.Marshal(request)
		stdin = append(b, '\n')
	}
	r := c.start(script, args, stdin)
	r.wait()
	lines := r.rest()
	if len(lines) == 0 {
		c.t.Fatalf("%s printed nothing", script)
	}
	if now := r.credential(); now != nil && !bytes.Equal(now, c.Cred) {
		c.Cred = now
	}
	return lines[len(lines)-1]
}

// startSetup starts setup.py and sends the start event.
func (c *conn) startSetup(initial []string) *scriptRun {
	c.t.Helper()
	r := c.start("scripts/setup.py", nil, nil)
	r.send(map[string]any{
		"type": "start", "auth_strategy": c.skill.Connection.AuthStrategy,
		"initial_permissions": initial, "incremental_scopes": []string{},
		"identity_hint": map[string]any{}, "settings": map[string]any{},
	})
	return r
}

// step decodes a setup_step line's step and validates it with the
// runtime's model.
func step(t *testing.T, l map[string]any) messages.SetupStep {
	t.Helper()
	if l["type"] != "setup_step" || l["step_id"] == "" {
		t.Fatalf("not a setup_step: %v", l)
	}
	var s messages.SetupStep
	b, _ := json.Marshal(l["step"])
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("setup step %v: %v", l, err)
	}
	return s
}

// failureOf decodes a ConnectionFailure and validates it with the
// runtime's model.
func failureOf(t *testing.T, v any) messages.ConnectionFailure {
	t.Helper()
	var f messages.ConnectionFailure
	b, _ := json.Marshal(v)
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil || len(f.RecoveryOptions) == 0 {
		t.Fatalf("failure %s: %v", b, err)
	}
	return f
}

// health decodes a HealthCheckResult.
func health(t *testing.T, l map[string]any) messages.HealthCheckResult {
	t.Helper()
	var h messages.HealthCheckResult
	b, _ := json.Marshal(l)
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("health %s: %v", b, err)
	}
	return h
}
