package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/silas-ai/silas/bench/mockllm"
)

// builds holds one build of the silas binary per set of build tags.
var builds sync.Map // tags -> *binaryBuild

type binaryBuild struct {
	once sync.Once
	path string
	err  error
}

// silasBinary builds the silas binary once for the tests that need a real
// process (to kill it).
func silasBinary(t *testing.T) string { return silasBinaryTagged(t, "") }

// silasBinaryTagged builds, once per tags, the silas binary with those
// build tags (a test hook such as telegram_crashtest).
func silasBinaryTagged(t *testing.T, tags string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(tags, &binaryBuild{})
	b := v.(*binaryBuild)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "silas-bin")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "silas")
		args := []string{"build", "-o", b.path}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// process is silas running as a child process.
type process struct {
	cmd  *exec.Cmd
	addr string
}

var readyLine = regexp.MustCompile(`ready on http://(\S+)`)

func startProcess(t *testing.T, configPath string) *process {
	t.Helper()
	return startBinary(t, silasBinary(t), configPath)
}

// startBinary runs bin serve with the config at configPath and extra
// environment variables, and waits until it is ready.
func startBinary(t *testing.T, bin, configPath string, env ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--config", configPath)
	cmd.Env = append(append(os.Environ(), "TEST_MODEL_KEY=test-key"), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if !testing.Verbose() {
		cmd.Stderr = nil
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := readyLine.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
	}()
	select {
	case p.addr = <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("silas did not become ready within 30s")
	}
	return p
}

func writeConfig(t *testing.T, ov map[string]any) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("silas:\n")
	// Flat keys under silas.* become nested YAML one level at a time.
	tree := map[string]any{}
	for k, v := range ov {
		parts := strings.Split(strings.TrimPrefix(k, "silas."), ".")
		m := tree
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = v
	}
	writeYAML(&b, tree, 1)
	path := filepath.Join(t.TempDir(), "silas.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeYAML(b *strings.Builder, m map[string]any, depth int) {
	for k, v := range m {
		b.WriteString(strings.Repeat("  ", depth) + k + ":")
		if sub, ok := v.(map[string]any); ok {
			b.WriteString("\n")
			writeYAML(b, sub, depth+1)
			continue
		}
		fmt.Fprintf(b, " %q\n", fmt.Sprint(v))
	}
}

func TestKillNineBetweenAckAndAnswer(t *testing.T) {
	mock := newMock(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var mu sync.Mutex
	crashed := false
	calls := 0
	mock.Handle(func(r *mockllm.RecordedRequest) (string, int, bool) {
		if !strings.Contains(currentMessage(r), "survive this") {
			return "", 0, false
		}
		mu.Lock()
		calls++
		first := !crashed
		mu.Unlock()
		if first {
			<-release // the first process dies while waiting here
			return "", 500, true
		}
		return routeDecision("direct", "answered after the crash"), 0, true
	})
	cfgPath := writeConfig(t, overrides(t, mock, t.TempDir()))

	p1 := startProcess(t, cfgPath)
	c := owner(t, p1.addr)
	id := c.say("survive this")
	if ack := c.next("ack"); ack.str("message_id") != id {
		t.Fatalf("ack %v", ack)
	}
	checkFor(t, waitLimit, func() bool { mu.Lock(); defer mu.Unlock(); return calls == 1 }, "the turn's model call")
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p1.cmd.Wait()
	mu.Lock()
	crashed = true
	mu.Unlock()

	p2 := startProcess(t, cfgPath)
	c2 := owner(t, p2.addr)
	if got := c2.answer(id).str("text"); got != "answered after the crash" {
		t.Fatalf("answer after restart %q", got)
	}
	mu.Lock()
	if calls != 2 {
		t.Errorf("model calls for the message = %d, want 1 before and 1 after the crash", calls)
	}
	mu.Unlock()

	// A clean stop and another start run nothing again.
	if err := p2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p2.cmd.Wait(); err != nil {
		t.Fatalf("silas exited with %v after SIGTERM", err)
	}
	p3 := startProcess(t, cfgPath)
	c3 := owner(t, p3.addr)
	c3.answer(c3.say("anything new?"))
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Errorf("model calls for the message after a clean restart = %d, want still 2", calls)
	}
}
