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
// dropped and audited; its allowed one is applied.
func TestScriptGateTreatsInjectionAsData(t *testing.T) {
	mock := newMock(t)
	dir := t.TempDir()
	work := t.TempDir()
	marker := filepath.Join(work, "marker")
	pwned := filepath.Join(work, "pwned")
	seen := filepath.Join(work, "seen")
	if err := os.WriteFile(marker, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(work, "check.sh")
	body := "#!/bin/sh\n" +
		"printf '%s' \"$SILAS_GATE_VALUE\" > '" + seen + "'\n" +
		"printf '%s' \"$#\" > '" + seen + ".argc'\n" +
		`echo '{"modified_context":{"message":"sanitized message","sender_id":"mallory"}}'` + "\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := loadGateConfig(t, mock, dir, `  gates:
    system:
      - name: shell_check
        on: every_user_message
        provider: script
        check: "`+script+`"
        on_block: report
`)
	d := startTest(t, cfg)
	c := owner(t, d.Addr())

	text := "hi'; rm -f " + marker + "; rm -rf / #\" $(touch " + pwned + ") `touch " + pwned + "`"
	got := c.answer(c.say(text)).str("text")
	if !strings.Contains(got, "sanitized message") {
		t.Fatalf("answer %q: the gate's allowed rewrite of the message was not applied", got)
	}

	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatalf("the script did not run: %v", err)
	}
	if string(b) != text {
		t.Fatalf("SILAS_GATE_VALUE = %q, want exactly the message %q", b, text)
	}
	if argc, _ := os.ReadFile(seen + ".argc"); string(argc) != "0" {
		t.Fatalf("the script got %s arguments; values must reach it only through the environment", argc)
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
