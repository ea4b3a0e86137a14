package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A script gate from the config file gets a shell-injection attempt only
// as an environment variable: the script sees the exact text, no argument,
// and nothing the text asks for happens. Its disallowed rewrite key is
// dropped and audited; its allowed one is applied. The script lives in the
// script directory (silas.gates.script_dir) and runs in the sandbox, so
// it reports what it saw through its output, not through host files.
func TestScriptGateTreatsInjectionAsData(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	work := t.TempDir()
	marker := filepath.Join(work, "marker")
	pwned := filepath.Join(work, "pwned")
	if err := os.WriteFile(marker, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	text := "hi'; rm -f " + marker + "; rm -rf / #\" $(touch " + pwned + ") `touch " + pwned + "`"
	cfg := loadGateConfig(t, mock, dir, `  gates:
    system:
      - name: shell_check
        on: every_user_message
        provider: script
        check: "./check.sh"
        on_block: report
`)
	scripts := cfg.Gates.ScriptDir
	if err := os.MkdirAll(scripts, 0o755); err != nil {
		t.Fatal(err)
	}
	// The rewrite is the sanitized message only when the script got exactly
	// the text, and no argument.
	body := "#!/bin/sh\n" +
		"expected=$(cat expected.txt; printf x); expected=${expected%x}\n" +
		`if [ "$#" = 0 ] && [ "$SILAS_GATE_VALUE" = "$expected" ]; then` + "\n" +
		`  echo '{"modified_context":{"message":"sanitized message","sender_id":"mallory"}}'` + "\n" +
		"else\n" +
		`  echo '{"modified_context":{"message":"the script saw something else"}}'` + "\n" +
		"fi\n"
	if err := os.WriteFile(filepath.Join(scripts, "check.sh"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scripts, "expected.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startTest(t, cfg)
	c := owner(t, d.Addr())

	got := c.answer(c.say(text)).str("text")
	if !strings.Contains(got, "sanitized message") {
		t.Fatalf("answer %q: the script did not get exactly the message, without arguments, or its allowed rewrite was not applied", got)
	}

	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the marker file is gone: the injected command ran: %v", err)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the injected command substitution ran")
	}

	log := waitAudit(t, d, "rejected_mutation", "shell_check")
	if data := string(log[len(log)-1].Data); !strings.Contains(data, `"key":"sender_id"`) {
		t.Errorf("rejected_mutation does not name sender_id: %s", data)
	}
	waitAudit(t, d, "gate_mutation", "shell_check")
	for _, r := range mock.Requests() {
		if strings.Contains(requestText(&r), "mallory") {
			t.Fatal("the rejected sender_id rewrite reached the model")
		}
	}
}
