package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupThenRestore: `silas backup` on a running daemon, then `silas
// restore` into a fresh dir: a daemon started there has the history up to
// the backup (and not what came after), and goes on from it.
func TestBackupThenRestore(t *testing.T) {
	mock := newMock(t)
	oldDir := filepath.Join(t.TempDir(), "old")
	ov := overrides(t, mock, oldDir)
	cfgPath := writeConfig(t, ov)
	d := startTest(t, loadConfig(t, ov))
	url := "http://" + d.Addr()

	c := owner(t, d.Addr())
	c.answer(c.say("remember the harbour code 4172"))
	c.answer(c.say("and the boat is called Wanderer"))

	file := filepath.Join(t.TempDir(), "silas.backup")
	out, err := runCLI(t, "backup", file, "--config", cfgPath, "--url", url)
	if err != nil || !strings.Contains(out, "backup written to "+file) || !strings.Contains(out, "keys") {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("the backup holds every conversation but has mode %v", info.Mode().Perm())
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("backup left temporary files: %v", entries)
	}
	checkFor(t, waitLimit, func() bool { return audited(t, d, "backup_finished") }, "backup_finished in the audit log")
	if !audited(t, d, "backup_started") {
		t.Error("no backup_started audit entry")
	}

	// Refusals: an existing file is never overwritten; no daemon, no backup.
	if out, err := runCLI(t, "backup", file, "--config", cfgPath, "--url", url); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("backup over an existing file: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "backup", file+"2", "--config", cfgPath, "--url", "http://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("backup without a daemon: %v\n%s", err, out)
	}

	c.answer(c.say("this came after the backup"))
	d.stop()

	// The data dir in use (not empty) is refused, untouched.
	if out, err := runCLI(t, "restore", file, "--data-dir", oldDir); err == nil || !strings.Contains(err.Error(), "not empty") || !strings.Contains(err.Error(), oldDir) {
		t.Fatalf("restore into a used data dir: %v\n%s", err, out)
	}

	newDir := filepath.Join(t.TempDir(), "new")
	out, err = runCLI(t, "restore", file, "--data-dir", newDir)
	if err != nil || !strings.Contains(out, "restored") || !strings.Contains(out, filepath.Join(newDir, "keys")) {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	// The documented last step: the keys directory travels separately.
	if out, err := exec.Command("cp", "-a", filepath.Join(oldDir, "keys"), filepath.Join(newDir, "keys")).CombinedOutput(); err != nil {
		t.Fatalf("copy keys: %v\n%s", err, out)
	}

	d = startTest(t, loadConfig(t, overrides(t, mock, newDir)))
	history := ownerHistory(t, d)
	for _, want := range []string{"harbour code 4172", "called Wanderer"} {
		if !strings.Contains(history, want) {
			t.Errorf("restored history lacks %q:\n%s", want, history)
		}
	}
	if strings.Contains(history, "after the backup") {
		t.Errorf("restored history holds what came after the backup:\n%s", history)
	}
	rep, err := d.in.db.Audit().Verify(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("restored audit chain: %+v %v", rep, err)
	}

	// The restored daemon answers with that history in the model's context.
	mock.Reset()
	c = owner(t, d.Addr())
	// The answer to the last message before the backup may come again
	// first: its delivered mark can lag the backup (at least once).
	c.answerTo(c.say("what was the harbour code?"))
	var sent bool
	for _, r := range mock.Requests() {
		if text := requestText(&r); strings.Contains(text, "what was the harbour code?") && strings.Contains(text, "4172") {
			sent = true
		}
	}
	if !sent {
		t.Error("no model request carried the restored history with the new message")
	}
}

// audited reports whether the daemon's audit log has an entry of event.
func audited(t *testing.T, d *testDaemon, event string) bool {
	t.Helper()
	entries, err := d.in.db.Audit().Range(context.Background(), 1, 10000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Event == event {
			return true
		}
	}
	return false
}
