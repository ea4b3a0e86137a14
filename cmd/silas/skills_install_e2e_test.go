package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/persistence"
)

// The install flow end to end (spec 10.4, INV-06): a real daemon, the mock
// model, the real sandbox for the Python syntax check and the dry runs.

// wordCountMD and wordCountPy are a valid skill with one script.
const wordCountMD = `---
name: word-count
description: Use when the user asks how many words a text file in the work dir holds.
activation: auto
script_args:
  scripts/count.py:
    path: {type: string, max_length: 300, format: path, example: "notes.txt"}
---

# Word count

## When to use
Counting the words of a file. Run ` + "`scripts/count.py`" + ` with the file's path.
`

const wordCountPy = `import argparse
import json
import os


def main():
    p = argparse.ArgumentParser(description="count the words of a file")
    p.add_argument("--path", required=True)
    a = p.parse_args()
    if not os.path.exists(a.path):
        print(json.dumps({"words": 0, "missing": True}))
        return
    with open(a.path, encoding="utf-8") as f:
        print(json.dumps({"words": len(f.read().split())}))


if __name__ == "__main__":
    main()
`

// skillFiles writes files under parent/name and returns the directory.
func skillFiles(t *testing.T, parent, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func wordCount() map[string]string {
	return map[string]string{"SKILL.md": wordCountMD, "scripts/count.py": wordCountPy}
}

// skillEnv is a daemon with its own skills_dir and an owner connection.
type skillEnv struct {
	mock      *mockllm.Server
	d         *testDaemon
	addr      string
	skillsDir string
	dataDir   string
	cfgPath   string
	ov        map[string]any
	c         *client
}

func startSkillEnv(t *testing.T, extra map[string]any) *skillEnv {
	t.Helper()
	mock := newMock(t)
	dataDir := t.TempDir()
	ov := overrides(t, mock, dataDir)
	skillsDir := filepath.Join(t.TempDir(), "skills")
	ov["silas.skills_dir"] = skillsDir
	for k, v := range extra {
		ov[k] = v
	}
	e := &skillEnv{mock: mock, skillsDir: skillsDir, dataDir: dataDir, cfgPath: writeConfig(t, ov), ov: ov}
	e.d = startTest(t, loadConfig(t, ov))
	e.addr = e.d.Addr()
	e.c = owner(t, e.addr)
	return e
}

// post sends a JSON body to an owner endpoint and decodes the answer.
func (e *skillEnv) post(t *testing.T, path string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	status, raw := pwaCall(t, e.addr, "POST", path, "owner-secret-token", string(b))
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("POST %s: %d %s", path, status, raw)
	}
	return status, out
}

// request asks to install (or import) dir and returns the request id.
func (e *skillEnv) request(t *testing.T, path, dir string) string {
	t.Helper()
	status, out := e.post(t, path, map[string]any{"dir": dir})
	if status != http.StatusAccepted || out["request_id"] == "" {
		t.Fatalf("POST %s %s: %d %v", path, dir, status, out)
	}
	return out["request_id"].(string)
}

// card waits for the skill_install card of request id.
func (e *skillEnv) card(t *testing.T, id string) event {
	t.Helper()
	ev := e.c.next("approval_request")
	if ev.str("request_id") != id || ev.str("scope") != "skill_install" {
		t.Fatalf("approval_request %v, want the skill_install card of %s", ev, id)
	}
	return ev
}

// answer answers a card and waits for the install's outcome.
func (e *skillEnv) answer(t *testing.T, id, verdict string) event {
	t.Helper()
	ans := map[string]any{"type": "approval_response", "request_id": id, "verdict": verdict}
	if verdict == "approved" {
		ans["confirmation"] = slide // a skill_install card is high risk
	}
	e.c.send(ans)
	ev := e.c.next("skill_install_result")
	if ev.str("request_id") != id {
		t.Fatalf("skill_install_result %v, want request %s", ev, id)
	}
	return ev
}

// audits returns the data of the audit entries named event.
func (e *skillEnv) audits(t *testing.T, event string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, a := range pwaAudit(t, e.d, event) {
		var m map[string]any
		if err := json.Unmarshal(a.Data, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// waitAudit waits for an audit entry event whose field key is value.
func (e *skillEnv) waitAudit(t *testing.T, event, key, value string) map[string]any {
	t.Helper()
	var found map[string]any
	checkFor(t, waitLimit, func() bool {
		for _, m := range e.audits(t, event) {
			if m[key] == value {
				found = m
				return true
			}
		}
		return false
	}, event+" "+key+"="+value)
	return found
}

// listSkills returns GET /skills.
func (e *skillEnv) listSkills(t *testing.T) ownerapi.SkillsResponse {
	t.Helper()
	var r ownerapi.SkillsResponse
	pwaJSON(t, e.addr, "GET", "/skills", "owner-secret-token", "", http.StatusOK, &r)
	return r
}

func findSkill(r ownerapi.SkillsResponse, name string) (ownerapi.SkillView, bool) {
	i := slices.IndexFunc(r.Skills, func(v ownerapi.SkillView) bool { return v.Name == name })
	if i < 0 {
		return ownerapi.SkillView{}, false
	}
	return r.Skills[i], true
}

func TestSkillInstallDeclineThenApprove(t *testing.T) {
	e := startSkillEnv(t, nil)
	src := skillFiles(t, t.TempDir(), "word-count", wordCount())

	// The card shows SKILL.md, each script and the report.
	id := e.request(t, "/skills/install", src)
	ev := e.card(t, id)
	sk, _ := ev["skill"].(map[string]any)
	if sk["skill_md"] != wordCountMD || sk["name"] != "word-count" || ev.str("risk_level") != "high" {
		t.Fatalf("card %v", ev)
	}
	scripts, _ := sk["scripts"].([]any)
	if len(scripts) != 1 || scripts[0].(map[string]any)["path"] != "scripts/count.py" || scripts[0].(map[string]any)["content"] != wordCountPy {
		t.Fatalf("card scripts %v", scripts)
	}
	report, _ := sk["validation_report"].(map[string]any)
	if report["passed"] != true || report["hash"] != sk["hash"] || report["python_version"] == "" {
		t.Fatalf("card validation report %v", report)
	}
	// The app's pending list has it, so a reconnecting device keeps it.
	var pending struct {
		Requests []map[string]any `json:"requests"`
	}
	pwaJSON(t, e.addr, "GET", "/approvals/pending", "owner-secret-token", "", http.StatusOK, &pending)
	if len(pending.Requests) != 1 || pending.Requests[0]["request_id"] != id || pending.Requests[0]["scope"] != "skill_install" {
		t.Fatalf("pending approvals %v", pending.Requests)
	}

	// Declined: nothing installed, neither the record nor the files.
	if res := e.answer(t, id, "declined"); res.str("status") != "declined" {
		t.Fatalf("declined: %v", res)
	}
	e.waitAudit(t, "install_declined", "request_id", id)
	if _, err := e.d.in.db.Skills().Get(context.Background(), "word-count"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("a declined skill has a record: %v", err)
	}
	if entries, _ := os.ReadDir(e.skillsDir); len(entries) != 0 {
		t.Fatalf("a declined skill left files in skills_dir: %v", entries)
	}
	if v, ok := findSkill(e.listSkills(t), "word-count"); ok {
		t.Fatalf("a declined skill is listed: %+v", v)
	}
	// The answer cannot be replayed.
	e.c.send(map[string]any{"type": "approval_response", "request_id": id, "verdict": "approved"})
	if er := e.c.next("error"); !strings.Contains(er.str("message"), "no approval is pending") {
		t.Fatalf("second answer: %v", er)
	}

	// Approved: dry runs ran, the exact bytes are in skills_dir, the record
	// names the approval, the list shows it, and plans can bind it.
	id = e.request(t, "/skills/install", src)
	e.card(t, id)
	if res := e.answer(t, id, "approved"); res.str("status") != "installed" {
		t.Fatalf("approved: %v", res)
	}
	dry := e.waitAudit(t, "dry_runs_passed", "request_id", id)
	calls, _ := dry["calls"].([]any)
	if !slices.Contains(calls, any("scripts/count.py --help")) || !slices.Contains(calls, any("scripts/count.py --path=notes.txt")) {
		t.Fatalf("dry runs %v", dry)
	}
	approved := e.waitAudit(t, "install_approved", "request_id", id)
	installed := e.waitAudit(t, "skill_installed", "request_id", id)
	rec, err := e.d.in.db.Skills().Get(context.Background(), "word-count")
	if err != nil || rec.Source != persistence.SkillLocal || rec.ApprovalTokenID == "" || rec.ApprovalTokenID != approved["token_id"] ||
		rec.ApprovalNonce == "" || rec.Hash != installed["hash"] {
		t.Fatalf("record %+v, err %v, audit %v", rec, err, approved)
	}
	for p, want := range wordCount() {
		got, err := os.ReadFile(filepath.Join(e.skillsDir, "word-count", filepath.FromSlash(p)))
		if err != nil || string(got) != want {
			t.Fatalf("installed %s: %v %q", p, err, got)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(e.skillsDir, ".install-*")); len(leftovers) != 0 {
		t.Fatalf("install work dirs left behind: %v", leftovers)
	}
	v, ok := findSkill(e.listSkills(t), "word-count")
	if !ok || v.Status != "installed" || v.Hash != rec.Hash || v.ApprovalTokenID != rec.ApprovalTokenID || v.Origin != "local" {
		t.Fatalf("listed %+v", v)
	}
	if got := e.d.skills.Snapshot().Approved["word-count"]; got != rec.Hash {
		t.Fatalf("the daemon's snapshot approves %q, want %q", got, rec.Hash)
	}
	if _, err := e.d.skills.Snapshot().Bind([]string{"word-count"}); err != nil {
		t.Fatalf("a plan cannot bind the installed skill: %v", err)
	}
	// Exactly these files again: nothing to approve.
	if status, out := e.post(t, "/skills/install", map[string]any{"dir": filepath.Join(e.skillsDir, "word-count")}); status != http.StatusConflict {
		t.Fatalf("reinstalling the same files: %d %v", status, out)
	}
	// A new version from the same source replaces the installed one after
	// its own card, which names the version it replaces.
	v2 := wordCountPy + "\n# version 2\n"
	if err := os.WriteFile(filepath.Join(src, "scripts", "count.py"), []byte(v2), 0o644); err != nil {
		t.Fatal(err)
	}
	id = e.request(t, "/skills/install", src)
	if sk := e.card(t, id)["skill"].(map[string]any); sk["replaces"] != rec.Hash {
		t.Fatalf("update card replaces %v, want %s", sk["replaces"], rec.Hash)
	}
	if res := e.answer(t, id, "approved"); res.str("status") != "installed" {
		t.Fatalf("update: %v", res)
	}
	if got, _ := os.ReadFile(filepath.Join(e.skillsDir, "word-count", "scripts", "count.py")); string(got) != v2 {
		t.Fatalf("updated script %q", got)
	}
	if rec2, err := e.d.in.db.Skills().Get(context.Background(), "word-count"); err != nil || rec2.Hash == rec.Hash || rec2.ApprovalTokenID == rec.ApprovalTokenID {
		t.Fatalf("record after the update %+v %v", rec2, err)
	}
	// No audit entry holds a script's content.
	for _, ev := range []string{"install_requested", "install_approved", "dry_runs_passed", "skill_installed"} {
		for _, a := range pwaAudit(t, e.d, ev) {
			if strings.Contains(string(a.Data), "argparse") {
				t.Fatalf("%s audit entry holds skill content: %s", ev, a.Data)
			}
		}
	}
}

// A skill written by the owner straight into skills_dir is approved in
// place; a byte changed after the card makes the approval install nothing.
func TestSkillInstallInPlaceRefusesChangedBytes(t *testing.T) {
	e := startSkillEnv(t, nil)
	dir := skillFiles(t, e.skillsDir, "word-count", wordCount())

	id := e.request(t, "/skills/install", dir)
	e.card(t, id)
	if err := os.WriteFile(filepath.Join(dir, "scripts", "count.py"), []byte(wordCountPy+"\nprint('extra')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := e.answer(t, id, "approved")
	if res.str("status") != "failed" || !strings.Contains(res.str("detail"), "changed since you reviewed it") {
		t.Fatalf("approving changed files: %v", res)
	}
	if _, err := e.d.in.db.Skills().Get(context.Background(), "word-count"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("changed files got a record: %v", err)
	}
	if v, _ := findSkill(e.listSkills(t), "word-count"); v.Status != "not_installed" {
		t.Fatalf("listed %+v", v)
	}
	// The owner reviews the new bytes and approves them.
	id = e.request(t, "/skills/install", dir)
	e.card(t, id)
	if res := e.answer(t, id, "approved"); res.str("status") != "installed" {
		t.Fatalf("approving the reviewed files: %v", res)
	}
}

// A script that fails its dry run installs nothing and says why.
func TestSkillInstallDryRunFailureInstallsNothing(t *testing.T) {
	e := startSkillEnv(t, nil)
	files := wordCount()
	files["scripts/count.py"] = "import sys\nsys.stderr.write('cannot start: missing module\\n')\nsys.exit(3)\n"
	src := skillFiles(t, t.TempDir(), "word-count", files)
	id := e.request(t, "/skills/install", src)
	e.card(t, id)
	res := e.answer(t, id, "approved")
	if res.str("status") != "dry_run_failed" || !strings.Contains(res.str("detail"), "scripts/count.py --help") ||
		!strings.Contains(res.str("detail"), "exit status 3: cannot start: missing module") {
		t.Fatalf("dry run failure: %v", res)
	}
	e.waitAudit(t, "dry_run_failed", "request_id", id)
	if _, err := e.d.in.db.Skills().Get(context.Background(), "word-count"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("a skill whose dry run failed has a record: %v", err)
	}
	if entries, _ := os.ReadDir(e.skillsDir); len(entries) != 0 {
		t.Fatalf("a failed dry run left files: %v", entries)
	}
}

// Every invalid skill fails validation with a finding that names the
// problem, and gets no card.
func TestSkillInstallRejectsInvalidSkills(t *testing.T) {
	e := startSkillEnv(t, nil)
	withMD := func(old, new string) map[string]string {
		f := wordCount()
		if !strings.Contains(f["SKILL.md"], old) {
			t.Fatalf("fixture: %q not in SKILL.md", old)
		}
		f["SKILL.md"] = strings.Replace(f["SKILL.md"], old, new, 1)
		return f
	}
	withPy := func(src string) map[string]string {
		f := wordCount()
		f["scripts/count.py"] = src
		return f
	}
	cases := []struct {
		name, dir string
		files     map[string]string
		rule      string
		want      string
	}{
		{"bad name", "Word_Count", withMD("name: word-count", "name: Word_Count"), "format", "name"},
		{"name not matching the directory", "counter", wordCount(), "format", "directory"},
		{"description too long", "word-count", withMD("description: Use when", "description: "+strings.Repeat("Use when counting words. ", 50)+"Use when"), "format", "at most 1024"},
		{"process-heavy description", "word-count",
			withMD("description: Use when the user asks how many words a text file in the work dir holds.",
				"description: First open the file. Then split it on spaces. Next count the parts. Finally print the number."),
			"description_quality", "process-heavy"},
		{"python syntax error", "word-count", withPy(strings.Replace(wordCountPy, "a = p.parse_args()", "a = p.parse_args(", 1)), "python_syntax", "syntax"},
		{"credential literal", "word-count", withPy(wordCountPy + "\nAPI_KEY = \"sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz\"\n"), "credential_literal", "credential"},
		{"path escaping the skill dir", "word-count", withMD("with the file's path.", "with the file's path. See [the passwords](../../../etc/passwd)."), "path", "escapes the skill directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := skillFiles(t, t.TempDir(), tc.dir, tc.files)
			status, out := e.post(t, "/skills/install", map[string]any{"dir": src})
			if status != http.StatusUnprocessableEntity || out["code"] != "validation_failed" || out["request_id"] != nil {
				t.Fatalf("%d %v", status, out)
			}
			report, _ := out["validation_report"].(map[string]any)
			findings, _ := report["findings"].([]any)
			named := false
			for _, f := range findings {
				m := f.(map[string]any)
				if m["severity"] == "error" && m["rule"] == tc.rule && strings.Contains(strings.ToLower(fmt.Sprint(m["message"], " ", m["field"])), tc.want) {
					named = true
				}
			}
			if report["passed"] != false || !named || !strings.Contains(out["message"].(string), tc.rule) {
				t.Fatalf("report does not name the problem (rule %s, %q): %v", tc.rule, tc.want, out)
			}
		})
	}
	if n := len(e.audits(t, "install_requested")); n != 0 {
		t.Fatalf("%d invalid skills were put to the owner", n)
	}
	// No card went out: the next card the owner sees is the valid skill's.
	id := e.request(t, "/skills/install", skillFiles(t, t.TempDir(), "word-count", wordCount()))
	e.card(t, id)
	e.waitAudit(t, "install_validation_failed", "skill", "word-count")
	// A URL is not a directory the daemon reads.
	if status, out := e.post(t, "/skills/install", map[string]any{"dir": "relative/dir"}); status != http.StatusBadRequest {
		t.Fatalf("relative dir: %d %v", status, out)
	}
}

// Expired cards install nothing.
func TestSkillInstallExpires(t *testing.T) {
	e := startSkillEnv(t, map[string]any{"silas.approval.request_timeout_seconds": 1})
	id := e.request(t, "/skills/install", skillFiles(t, t.TempDir(), "word-count", wordCount()))
	e.card(t, id)
	res := e.c.next("skill_install_result")
	if res.str("request_id") != id || res.str("status") != "expired" {
		t.Fatalf("expiry: %v", res)
	}
	e.waitAudit(t, "install_declined", "reason", "timeout")
	if _, err := e.d.in.db.Skills().Get(context.Background(), "word-count"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("an expired card installed the skill: %v", err)
	}
	e.c.send(map[string]any{"type": "approval_response", "request_id": id, "verdict": "approved"})
	if er := e.c.next("error"); !strings.Contains(er.str("message"), "no approval is pending") {
		t.Fatalf("late answer: %v", er)
	}
}

// claudeSkill is a Claude-style skill folder: allowed-tools and other
// Claude keys, a shell script, a helper at the top level.
func claudeSkill(t *testing.T) string {
	return skillFiles(t, t.TempDir(), "PDF Tools", map[string]string{
		"SKILL.md": `---
name: PDF Tools
description: Extract text from PDF files. Use when the user works with PDF documents or asks for the text of a PDF.
allowed-tools: Bash(python:*), Read, Write
context: fork
license: MIT
---

# PDF tools

Run ` + "`scripts/extract.sh <file>`" + ` to extract the text.
`,
		"scripts/extract.sh": "#!/bin/bash\nset -eu\nout=\"${2:-out.txt}\"\ncp \"$1\" \"$out\"\necho \"wrote $out\"\n",
	})
}

// openClawSkill is an OpenClaw/ClawHub SKILL.md with its metadata block.
func openClawSkill(t *testing.T) string {
	return skillFiles(t, t.TempDir(), "todoist", map[string]string{
		"SKILL.md": `---
name: todoist
description: Manage Todoist tasks. Use when the user asks to add, list or complete tasks in Todoist.
version: 1.2.0
metadata: {"openclaw": {"emoji": "✅", "requires": {"env": ["TODOIST_API_KEY"], "bins": ["curl"]}, "primaryEnv": "TODOIST_API_KEY"}}
---

# Todoist

Call ` + "`{baseDir}/todo.sh add \"task\"`" + ` to add a task.
`,
		"todo.sh": "#!/bin/sh\ncurl -s -H \"Authorization: Bearer $TODOIST_API_KEY\" https://api.todoist.com/rest/v2/tasks -d \"content=$2\"\n",
	})
}

func TestSkillImportShowsTransformationAndNeedsApproval(t *testing.T) {
	e := startSkillEnv(t, nil)
	cases := []struct {
		src, name, format  string
		removed, rewritten string
	}{
		{claudeSkill(t), "pdf-tools", "claude", "allowed-tools", "scripts/extract.sh"},
		{openClawSkill(t), "todoist", "openclaw", "metadata.openclaw.emoji", "scripts/todo.sh"},
	}
	for _, tc := range cases {
		status, out := e.post(t, "/skills/import", map[string]any{"dir": tc.src})
		if status != http.StatusAccepted {
			t.Fatalf("import %s: %d %v", tc.name, status, out)
		}
		id := out["request_id"].(string)
		ev := e.card(t, id)
		sk := ev["skill"].(map[string]any)
		tr, _ := sk["transformation_report"].(map[string]any)
		if sk["name"] != tc.name || sk["origin"] != "imported" || !strings.HasPrefix(ev.str("title"), "Import skill") || tr == nil {
			t.Fatalf("import card %v", ev)
		}
		if src := tr["source"].(map[string]any); src["format"] != tc.format || !strings.HasPrefix(src["uri"].(string), "file://") {
			t.Fatalf("%s: source %v", tc.name, src)
		}
		raw, _ := json.Marshal(tr)
		if !strings.Contains(string(raw), `"field":"`+tc.removed+`"`) || !strings.Contains(string(raw), `"original":"`+tc.rewritten+`"`) {
			t.Fatalf("%s: transformation report lacks the removed %s or the rewritten %s: %s", tc.name, tc.removed, tc.rewritten, raw)
		}
		// The wrapper the import wrote is on the card like any script.
		scripts, _ := json.Marshal(sk["scripts"])
		if !strings.Contains(string(scripts), `.py","sha256"`) {
			t.Fatalf("%s: card scripts %s", tc.name, scripts)
		}
		// Nothing is installed before the owner approves.
		if _, err := e.d.in.db.Skills().Get(context.Background(), tc.name); !errors.Is(err, persistence.ErrNotFound) {
			t.Fatalf("%s has a record before approval: %v", tc.name, err)
		}
		if _, err := os.Stat(filepath.Join(e.skillsDir, tc.name)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s is in skills_dir before approval: %v", tc.name, err)
		}
		if res := e.answer(t, id, "approved"); res.str("status") != "installed" {
			t.Fatalf("%s: %v", tc.name, res)
		}
		rec, err := e.d.in.db.Skills().Get(context.Background(), tc.name)
		if err != nil || rec.Source != persistence.SkillImported || rec.Hash != sk["hash"] {
			t.Fatalf("%s record %+v %v", tc.name, rec, err)
		}
		if _, err := os.Stat(filepath.Join(e.skillsDir, tc.name, "SKILL.md")); err != nil {
			t.Fatalf("%s not in skills_dir: %v", tc.name, err)
		}
	}
	// The staging area under the data dir is cleaned up.
	checkFor(t, waitLimit, func() bool {
		entries, _ := os.ReadDir(filepath.Join(e.dataDir, "skills", "staging"))
		return len(entries) == 0
	}, "empty import staging")

	// A git URL gets the engine's error.
	status, out := e.post(t, "/skills/import", map[string]any{"dir": "https://github.com/anthropics/skills"})
	if status != http.StatusBadRequest || !strings.Contains(out["message"].(string), "clone the repository first") {
		t.Fatalf("git URL: %d %v", status, out)
	}
}
