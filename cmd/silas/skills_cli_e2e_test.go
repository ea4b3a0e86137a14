package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/skills/bundled"
)

var requestIDRe = regexp.MustCompile(`Request ([0-9a-f-]{36}):`)

// `silas skills` against a running daemon: install prints the request id
// and where to approve, list and show read the installed skill, remove
// uninstalls it, and bundled skills cannot be removed.
func TestSkillsCLI(t *testing.T) {
	e := startSkillEnv(t, nil)
	url := "http://" + e.addr
	cli := func(args ...string) (string, error) {
		return runCLI(t, append(append([]string{"skills"}, args...), "--config", e.cfgPath, "--url", url)...)
	}

	// The bundled skills are installed at start, without a card.
	out, err := cli("list")
	if err != nil || !regexp.MustCompile(`(?m)^coding\s+\S+\s+bundled\s+installed`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^skill-maker\s+\S+\s+bundled\s+installed`).MatchString(out) {
		t.Fatalf("list at start: %v\n%s", err, out)
	}
	if n, want := len(e.audits(t, "bundled_skill_installed")), len(bundled.Names()); n != want {
		t.Fatalf("%d bundled_skill_installed audit entries, want %d", n, want)
	}

	// install: a relative path is resolved by the CLI; the answer names the
	// request and where to approve it.
	parent := t.TempDir()
	skillFiles(t, parent, "word-count", wordCount())
	t.Chdir(parent)
	out, err = cli("install", "word-count")
	m := requestIDRe.FindStringSubmatch(out)
	if err != nil || m == nil || !strings.Contains(out, "approve or decline its card in the Silas app") || !strings.Contains(out, "validation of word-count passed") {
		t.Fatalf("install: %v\n%s", err, out)
	}
	e.card(t, m[1])
	out, err = cli("list")
	if err != nil || !strings.Contains(out, "pending: word-count (local") || !strings.Contains(out, m[1]) {
		t.Fatalf("list with a pending card: %v\n%s", err, out)
	}
	if res := e.answer(t, m[1], "approved"); res.str("status") != "installed" {
		t.Fatalf("approve: %v", res)
	}

	out, err = cli("list")
	if err != nil || !regexp.MustCompile(`(?m)^word-count\s+-\s+local\s+installed`).MatchString(out) {
		t.Fatalf("list after install: %v\n%s", err, out)
	}
	out, err = cli("show", "word-count")
	if err != nil || !strings.Contains(out, "word-count - (local, installed)") || !strings.Contains(out, "scripts/count.py") ||
		!strings.Contains(out, "approval apt-") || !strings.Contains(out, "# Word count") {
		t.Fatalf("show: %v\n%s", err, out)
	}

	// A byte changed on disk shows in list.
	script := filepath.Join(e.skillsDir, "word-count", "scripts", "count.py")
	if err := os.WriteFile(script, []byte(wordCountPy+"#\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = cli("list")
	if err != nil || !strings.Contains(out, "! word-count changed") || !strings.Contains(out, "scripts/count.py") {
		t.Fatalf("list after a change: %v\n%s", err, out)
	}

	// Bundled skills are refused, the record stays.
	out, err = cli("remove", "coding")
	if err == nil || !strings.Contains(err.Error(), "bundled skills ship with Silas") {
		t.Fatalf("remove coding: %v\n%s", err, out)
	}
	if _, err := e.d.in.db.Skills().Get(context.Background(), "coding"); err != nil {
		t.Fatalf("coding after a refused removal: %v", err)
	}

	out, err = cli("remove", "word-count")
	if err != nil || !strings.Contains(out, "skill word-count is uninstalled") {
		t.Fatalf("remove: %v\n%s", err, out)
	}
	if _, err := e.d.in.db.Skills().Get(context.Background(), "word-count"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("record after removal: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.skillsDir, "word-count")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("files after removal: %v", err)
	}
	if _, ok := e.d.skills.Snapshot().Approved["word-count"]; ok {
		t.Fatal("the daemon's snapshot still approves the removed skill")
	}
	e.waitAudit(t, "skill_removed", "skill", "word-count")
	if out, err = cli("remove", "word-count"); err == nil || !strings.Contains(err.Error(), "no such skill") {
		t.Fatalf("remove twice: %v\n%s", err, out)
	}
	if out, err = cli("show", "word-count"); err == nil || !strings.Contains(err.Error(), `no skill "word-count"`) {
		t.Fatalf("show after removal: %v\n%s", err, out)
	}

	// An invalid skill: the CLI prints the report and fails.
	bad := wordCount()
	bad["scripts/count.py"] = "def broken(:\n"
	dir := skillFiles(t, t.TempDir(), "word-count", bad)
	out, err = cli("install", dir)
	if err == nil || !strings.Contains(out, "validation of word-count FAILED") || !strings.Contains(out, "scripts/count.py:1") || !strings.Contains(out, "[python_syntax]") {
		t.Fatalf("install invalid: %v\n%s", err, out)
	}
	// import of a URL: the engine's clear error.
	if out, err = cli("import", "https://github.com/anthropics/skills"); err == nil || !strings.Contains(err.Error(), "clone the repository first") {
		t.Fatalf("import a URL: %v\n%s", err, out)
	}
}

func TestSkillsCLINeedsRunningDaemon(t *testing.T) {
	e := startSkillEnv(t, nil)
	url := "http://" + e.addr
	e.d.stop()
	out, err := runCLI(t, "skills", "list", "--config", e.cfgPath, "--url", url)
	if err == nil || !strings.Contains(out+err.Error(), "silas serve") {
		t.Fatalf("skills list without a daemon: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "skills", "frobnicate", "--config", e.cfgPath); err == nil {
		t.Fatal("an unknown subcommand succeeded")
	}
}
