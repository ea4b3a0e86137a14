package connection

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/bwrap"
	"github.com/silas-ai/silas/sandbox/namespaces"
)

// isolating returns the namespaces backend, or bwrap; it skips (saying
// why) when neither runs here, since both refuse rather than run with
// less isolation.
func isolating(t *testing.T) sandbox.Manager {
	t.Helper()
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
		t.Skipf("no isolating sandbox backend runs on this host: namespaces: %v; bwrap: %v", nsErr, err)
	}
	t.Fatalf("sandbox backends: namespaces: %v; bwrap: %v", nsErr, err)
	return nil
}

const prelude = `import json, os, sys
ref = os.environ["SILAS_CREDENTIAL_REF"]
cred = os.path.join(os.environ["SILAS_SECRETS_DIR"], ref)
def say(o):
    print(json.dumps(o), flush=True)
`

var testScripts = map[string]string{
	// setup.py: a step, await input, then a new credential and completion.
	"setup.py": prelude + `
start = json.loads(sys.stdin.readline())
say({"type": "setup_step", "step_id": "s1", "step": {"type": "progress", "message": "hello " + start["settings"]["who"]}})
say({"type": "await_input", "step_id": "s1"})
res = json.loads(sys.stdin.readline())
old = open(cred).read()
tmp = cred + ".tmp"
with open(tmp, "w") as f:
    f.write(json.dumps({"access_token": old + "-rotated-" + res["payload"]["n"], "account": "octocat"}))
os.replace(tmp, cred)
say({"type": "completion", "connection_payload": {"success": True, "summary": "connected as octocat", "permissions_granted": ["read"], "account": "octocat"}})
`,
	"leak.py":  prelude + "say({'type': 'log', 'level': 'info', 'message': 'token ' + open(cred).read()})\n",
	"long.py":  "print('x' * 70000, flush=True)\n",
	"call.py":  prelude + "req = json.loads(sys.stdin.readline())\nsay({'healthy': True, 'latency_ms': 3, 'warnings': [req['type']], 'error': None})\n",
	"fresh.py": prelude + "say({'type': 'log', 'level': 'info', 'message': 'new ' + json.dumps(os.path.exists(cred))})\nopen(cred, 'w').write('sk-' + 'z' * 20)\nsay({'type': 'log', 'level': 'info', 'message': 'sk-' + 'z' * 20})\n",
	"hang.py":  "import time\ntime.sleep(60)\n",
}

func skillDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range testScripts {
		if err := os.WriteFile(filepath.Join(dir, "scripts", name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runner(t *testing.T, cred string) Runner {
	return Runner{Sandbox: isolating(t), SkillDir: skillDir(t), ConnectionID: "cn-test", CredentialRef: "cn-test-cred",
		Settings: map[string]any{"who": "owner"}, Credential: []byte(cred)}
}

func TestSetupConversation(t *testing.T) {
	r := runner(t, "secret-token-1")
	p, err := r.Start(t.Context(), Script{Path: "scripts/setup.py", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Send(NewStart(Start{AuthStrategy: "secure_input", Settings: r.Settings})); err != nil {
		t.Fatal(err)
	}
	var got []SetupEvent
	for l := range p.Lines {
		ev, err := DecodeSetupEvent(l)
		if err != nil {
			t.Fatalf("line %s: %v", l, err)
		}
		got = append(got, ev)
		if ev.Type == EventAwaitInput {
			if err := p.Send(NewStepResult(ev.StepID, map[string]any{"n": "7"})); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := p.Wait()
	if !out.OK() {
		t.Fatalf("setup: %s (stderr %s)", out.Describe(), out.Result.Stderr)
	}
	if len(got) != 3 || got[0].Step.Message != "hello owner" || got[2].Type != EventCompletion || got[2].Completion.Account != "octocat" {
		t.Fatalf("events %+v", got)
	}
	if !out.Changed || !strings.Contains(string(out.Credential), "secret-token-1-rotated-7") {
		t.Fatalf("credential read back %q changed=%v", out.Credential, out.Changed)
	}
}

func TestRunStopsOnProtocolBreaks(t *testing.T) {
	tests := []struct {
		script, cred, problem string
	}{
		{"scripts/leak.py", "secret-token-1", "credential"},
		{"scripts/leak.py", `{"access_token":"gho_abcdefgh12345","account":"octocat"}`, "credential"},
		{"scripts/long.py", "", "64 KiB"},
		{"scripts/fresh.py", "", "credential"}, // a credential it wrote itself, printed
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			r := runner(t, tt.cred)
			if tt.cred == "" {
				r.Credential = nil
			}
			p, err := r.Start(t.Context(), Script{Path: tt.script, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for l := range p.Lines {
				if tt.cred != "" && strings.Contains(string(l), "gho_abcdefgh12345") || strings.Contains(string(l), "secret-token-1") || strings.Contains(string(l), "zzzzzzzz") {
					t.Fatalf("a line with the credential was passed on: %s", l)
				}
			}
			out := p.Wait()
			if !strings.Contains(out.Problem, tt.problem) || !errors.Is(out.Err, ErrStopped) || out.Credential != nil {
				t.Fatalf("outcome %+v, want stopped for %q with no credential", out, tt.problem)
			}
		})
	}
}

func TestCallAndTimeout(t *testing.T) {
	r := runner(t, "")
	r.Credential = nil
	var h struct {
		Healthy  bool     `json:"healthy"`
		Warnings []string `json:"warnings"`
	}
	out := r.Call(t.Context(), Script{Path: "scripts/call.py", Timeout: 30 * time.Second}, Discover{Type: "discover"}, &h)
	if !out.OK() || !h.Healthy || len(h.Warnings) != 1 || h.Warnings[0] != "discover" {
		t.Fatalf("call: %s %+v", out.Describe(), h)
	}
	out = r.Call(t.Context(), Script{Path: "scripts/hang.py", Timeout: 500 * time.Millisecond}, nil, &h)
	if out.OK() || !out.Result.TimedOut {
		t.Fatalf("a hanging script: %+v", out)
	}
	if _, err := r.Start(t.Context(), Script{Path: "../outside.py"}); err == nil {
		t.Fatal("a script path outside the skill was accepted")
	}
}

func TestFragments(t *testing.T) {
	got := Fragments([]byte(`{"access_token":"gho_abcdefgh","refresh_token":"ghr_12345678","account":"octocat-the-user","expires_at":"2026-11-25T06:00:00Z","token_type":"bearer"}`))
	var s []string
	for _, f := range got[1:] {
		s = append(s, string(f))
	}
	joined := strings.Join(s, ",")
	if !strings.Contains(joined, "gho_abcdefgh") || !strings.Contains(joined, "ghr_12345678") || strings.Contains(joined, "octocat") || strings.Contains(joined, "2026") {
		t.Fatalf("fragments %v: want the tokens only", s)
	}
	if Fragments([]byte("short")) != nil {
		t.Fatal("a value shorter than 8 bytes is a fragment")
	}
}
