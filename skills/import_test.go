package skills_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/silas-ai/silas/skills"
)

// The secrets planted in import sources; none may reach the staged skill.
const (
	plantedKey   = "sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz"
	plantedEnv   = "OPENAI_API_KEY=sk-live-should-never-be-imported-123456"
	plantedToken = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
)

func claudeSource(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "PDF Tools")
	writeTree(t, dir, fstest.MapFS{
		"SKILL.md": {Data: []byte(`---
name: PDF Tools
description: Extract text from PDF files. Use when the user works with PDF documents or asks for the text of a PDF.
allowed-tools: Bash(python:*), Read, Write
context: fork
model: claude-opus-4
hooks:
  PreToolUse: echo hi
disable-model-invocation: true
license: MIT
---

# PDF tools

Run ` + "`scripts/extract.sh <file>`" + ` to extract the text. The form fields are
described in [forms](forms.md); ` + "`helper.py`" + ` prints the page count.

!` + "`date`" + `
`)},
		"scripts/extract.sh":        {Data: []byte("#!/bin/bash\nset -eu\nout=\"${2:-out.txt}\"\ncp \"$1\" \"$out\"\necho \"wrote $out\"\n")},
		"forms.md":                  {Data: []byte("# Forms\nFields are listed per page.\n")},
		"helper.py":                 {Data: []byte("import sys\nAPI_KEY = \"" + plantedKey + "\"\nprint(len(sys.argv))\n")},
		".env":                      {Data: []byte(plantedEnv + "\n")},
		"credentials.json":          {Data: []byte(`{"token": "` + plantedToken + `"}`)},
		"scripts/__pycache__/x.pyc": {Data: []byte("\x00\x01")},
	})
	// A git checkout: the commit goes into the report.
	writeTree(t, dir, fstest.MapFS{
		".git/HEAD":            {Data: []byte("ref: refs/heads/main\n")},
		".git/refs/heads/main": {Data: []byte("0123456789abcdef0123456789abcdef01234567\n")},
	})
	return dir
}

func openClawSource(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "todoist")
	writeTree(t, dir, fstest.MapFS{
		"SKILL.md": {Data: []byte(`---
name: todoist
description: Manage Todoist tasks. Use when the user asks to add, list or complete tasks in Todoist.
version: 1.2.0
homepage: https://example.org/todoist
user-invocable: true
metadata: {"openclaw": {"emoji": "✅", "requires": {"env": ["TODOIST_API_KEY"], "bins": ["curl"]}, "primaryEnv": "TODOIST_API_KEY", "install": [{"id": "brew", "kind": "brew", "formula": "curl"}]}}
---

# Todoist

Call ` + "`{baseDir}/todo.sh add \"task\"`" + `. Never paste the token (` + plantedToken + `) anywhere.
`)},
		"todo.sh":              {Data: []byte("#!/bin/sh\ncurl -s -H \"Authorization: Bearer $TODOIST_API_KEY\" https://api.todoist.com/rest/v2/tasks -d \"content=$2\" -d \"$@\"\n")},
		".clawhub/origin.json": {Data: []byte(`{"slug":"todoist"}`)},
	})
	return dir
}

// assertNoSecrets fails if a planted secret reached the staged skill.
func assertNoSecrets(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range []string{plantedKey, plantedEnv, plantedToken, "sk-live"} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds the planted secret %q", p, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func fieldNames(cs []skills.FieldChange) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Field)
	}
	return out
}

func TestImportClaudeSkill(t *testing.T) {
	requirePython(t)
	src := claudeSource(t)
	stage := t.TempDir()
	im, err := skills.Import(src, skills.ImportOptions{StagingRoot: stage})
	if err != nil {
		t.Fatal(err)
	}
	r := im.Report
	if r.Source.Format != skills.FormatClaude || r.Source.Commit != "0123456789abcdef0123456789abcdef01234567" ||
		!strings.HasPrefix(r.Source.URI, "file:///") || r.Name != "pdf-tools" || im.Dir != filepath.Join(stage, "pdf-tools") {
		t.Fatalf("source %+v name %s dir %s", r.Source, r.Name, im.Dir)
	}
	removed := fieldNames(r.RemovedFields)
	for _, f := range []string{"allowed-tools", "context", "model", "hooks"} {
		if !slices.Contains(removed, f) {
			t.Errorf("removed fields %v lack %s", removed, f)
		}
	}
	translated := fieldNames(r.TranslatedFields)
	if !slices.Contains(translated, "name") || !slices.Contains(translated, "disable-model-invocation") {
		t.Errorf("translated %v", r.TranslatedFields)
	}
	if len(r.RewrittenScripts) != 1 || r.RewrittenScripts[0].Original != "scripts/extract.sh" ||
		r.RewrittenScripts[0].Entrypoint != "scripts/extract.py" || !slices.Equal(r.RewrittenScripts[0].Args, []string{"arg1", "arg2"}) {
		t.Fatalf("rewritten %+v", r.RewrittenScripts)
	}
	var dropped []string
	for _, d := range r.DroppedFiles {
		dropped = append(dropped, d.Path)
	}
	for _, p := range []string{".env", "credentials.json", ".git/", "scripts/__pycache__/"} {
		if !slices.Contains(dropped, p) {
			t.Errorf("dropped %v lack %s", dropped, p)
		}
	}
	if len(r.RemovedSecrets) != 1 || r.RemovedSecrets[0] != (skills.SecretRemoval{File: "scripts/helper.py", Line: 2, Kind: "llm_api_key"}) {
		t.Errorf("removed secrets %+v", r.RemovedSecrets)
	}
	if !slices.Contains(r.MovedFiles, skills.FileMove{From: "forms.md", To: "references/forms.md"}) ||
		!slices.Contains(r.MovedFiles, skills.FileMove{From: "helper.py", To: "scripts/helper.py"}) {
		t.Errorf("moves %+v", r.MovedFiles)
	}
	var review string
	for _, it := range r.ManualReview {
		review += it.File + ": " + it.Message + "\n"
	}
	for _, want := range []string{"hooks", "dynamic context injection", "the executor runs scripts/extract.py", "scripts/helper.py: has no script_args", "held a credential"} {
		if !strings.Contains(review, want) {
			t.Errorf("manual review lacks %q:\n%s", want, review)
		}
	}
	assertNoSecrets(t, im.Dir)

	// The staged skill is a valid Silas skill that still needs approval.
	if im.Skill == nil || im.Skill.Activation != skills.ActivationManual || im.Skill.License != "MIT" {
		t.Fatalf("skill %+v", im.Skill)
	}
	md, _ := im.Skill.ReadFile("SKILL.md")
	if !strings.Contains(string(md), "[forms](references/forms.md)") || !strings.Contains(string(md), "`scripts/helper.py`") ||
		strings.Contains(string(md), "allowed-tools") {
		t.Fatalf("SKILL.md not adapted:\n%s", md)
	}
	_, vr := skills.ValidateDir(t.Context(), im.Dir, skills.Options{Python: hostPython{}})
	if !vr.Passed {
		t.Fatalf("the imported skill fails validation: %+v", vr.Errors())
	}
	// The wrapper passes arguments as a list; a hostile value stays data.
	in, err := im.Skill.CheckArgs("scripts/extract.py", map[string]any{"arg1": "in.txt; touch pwned", "arg2": "out.txt"})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "in.txt; touch pwned"), []byte("pdf text"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runScript(t, im.Dir, work, in)
	if res.code != 0 || !strings.Contains(res.stdout, "wrote out.txt") {
		t.Fatalf("wrapper run: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(work, "pwned")); err == nil {
		t.Fatal("an argument was run as a shell command")
	}
	// Importing again into the same staging root refuses to overwrite.
	if _, err := skills.Import(src, skills.ImportOptions{StagingRoot: stage}); !errors.Is(err, skills.ErrImport) || !strings.Contains(err.Error(), "already staged") {
		t.Fatalf("second import: %v", err)
	}
}

func TestImportOpenClawSkill(t *testing.T) {
	requirePython(t)
	im, err := skills.Import(openClawSource(t), skills.ImportOptions{StagingRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r := im.Report
	if r.Source.Format != skills.FormatOpenClaw || !slices.Contains(r.Source.DetectedBy, "metadata.openclaw") || r.Source.Commit != "" {
		t.Fatalf("source %+v", r.Source)
	}
	for _, f := range []string{"metadata.openclaw.emoji", "metadata.openclaw.install", "user-invocable"} {
		if !slices.Contains(fieldNames(r.RemovedFields), f) {
			t.Errorf("removed %v lack %s", fieldNames(r.RemovedFields), f)
		}
	}
	for _, f := range []string{"version", "homepage", "metadata.openclaw.requires.env", "metadata.openclaw.requires.bins", "metadata.openclaw.primaryEnv"} {
		if !slices.Contains(fieldNames(r.TranslatedFields), f) {
			t.Errorf("translated %v lack %s", fieldNames(r.TranslatedFields), f)
		}
	}
	if len(r.RewrittenScripts) != 1 || r.RewrittenScripts[0].Entrypoint != "scripts/todo.py" ||
		!slices.Equal(r.RewrittenScripts[0].Args, []string{"arg1", "arg2", "args"}) {
		t.Fatalf("rewritten %+v", r.RewrittenScripts)
	}
	if len(r.RemovedSecrets) != 1 || r.RemovedSecrets[0].File != "SKILL.md" || r.RemovedSecrets[0].Kind != "github_token" {
		t.Fatalf("secrets %+v", r.RemovedSecrets)
	}
	assertNoSecrets(t, im.Dir)
	s := im.Skill
	if s == nil || s.Version != "1.2.0" || !slices.Equal(s.Requirements.Env, []string{"TODOIST_API_KEY"}) ||
		!slices.Equal(s.Requirements.Binaries, []string{"curl"}) || s.Metadata["homepage"] != "https://example.org/todoist" {
		t.Fatalf("skill %+v", s)
	}
	_, vr := skills.ValidateDir(t.Context(), im.Dir, skills.Options{Python: hostPython{}})
	if !vr.Passed {
		t.Fatalf("the imported skill fails validation: %+v", vr.Errors())
	}
}

func TestImportOpenAISkill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "slides")
	writeTree(t, dir, fstest.MapFS{
		"SKILL.md":           {Data: []byte("---\nname: slides\ndescription: Use when the user asks to build or edit a slide deck from an outline.\nmetadata:\n  short-description: Build slide decks\n---\n\n# Slides\nUse the template in `assets/deck.json`.\n")},
		"agents/openai.yaml": {Data: []byte("interface:\n  display_name: \"Slides\"\n  icon_small: \"./assets/icon.svg\"\n  brand_color: \"#123456\"\npolicy:\n  allow_implicit_invocation: false\n")},
		"assets/icon.svg":    {Data: []byte("<svg/>")},
		"assets/deck.json":   {Data: []byte("{}")},
	})
	im, err := skills.Import(dir, skills.ImportOptions{StagingRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s := im.Skill
	if im.Report.Source.Format != skills.FormatOpenAI || s.UI.DisplayName != "Slides" || s.UI.Icon != "assets/icon.svg" ||
		s.UI.ShortDescription != "Build slide decks" || s.Activation != skills.ActivationManual {
		t.Fatalf("format %s skill %+v", im.Report.Source.Format, s)
	}
	if _, ok := s.ReadFile("agents/openai.yaml"); ok {
		t.Fatal("agents/openai.yaml was imported")
	}
	if !slices.Contains(fieldNames(im.Report.RemovedFields), "agents/openai.yaml: interface.brand_color") {
		t.Fatalf("removed %v", im.Report.RemovedFields)
	}
}

func TestImportRefuses(t *testing.T) {
	stage := t.TempDir()
	for _, url := range []string{"https://github.com/anthropics/skills", "git@github.com:anthropics/skills.git", "ssh://host/x", "github.com/a/b"} {
		if _, err := skills.Import(url, skills.ImportOptions{StagingRoot: stage}); !errors.Is(err, skills.ErrRemoteSource) ||
			!strings.Contains(err.Error(), "clone the repository first") {
			t.Errorf("%s: %v", url, err)
		}
	}
	pack := t.TempDir()
	writeTree(t, pack, fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\n---\n")}, "b/SKILL.md": {Data: []byte("---\nname: b\n---\n")}})
	if _, err := skills.Import(pack, skills.ImportOptions{StagingRoot: stage}); !errors.Is(err, skills.ErrImport) || !strings.Contains(err.Error(), "a, b; import each") {
		t.Errorf("skill pack: %v", err)
	}
	if _, err := skills.Import(t.TempDir(), skills.ImportOptions{StagingRoot: stage}); !errors.Is(err, skills.ErrImport) {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := skills.Import(claudeSource(t), skills.ImportOptions{}); !errors.Is(err, skills.ErrImport) {
		t.Errorf("no staging root: %v", err)
	}
	bad := t.TempDir()
	writeTree(t, bad, fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: x\nmeta: &a [1]\nother: *a\n---\n")}})
	if _, err := skills.Import(bad, skills.ImportOptions{StagingRoot: stage}); !errors.Is(err, skills.ErrImport) || !strings.Contains(err.Error(), "anchors") {
		t.Errorf("aliases: %v", err)
	}
}

func TestImportWithoutFrontMatter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Notes_Helper")
	writeTree(t, dir, fstest.MapFS{"SKILL.md": {Data: []byte("# Notes helper\n\nHelps with note taking when the user asks to organise notes.\n")}})
	im, err := skills.Import(dir, skills.ImportOptions{StagingRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if im.Skill.Name != "notes-helper" || !strings.HasPrefix(im.Skill.Description, "Helps with note taking") || len(im.Report.ManualReview) < 2 {
		t.Fatalf("skill %+v report %+v", im.Skill, im.Report)
	}
}
