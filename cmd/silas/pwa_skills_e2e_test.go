package main

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/persistence"
)

// startPWASkills starts a daemon with its own skills_dir and the PWA on it.
func startPWASkills(t *testing.T) (*testDaemon, *pwa, string) {
	t.Helper()
	mock := newMock(t)
	ov := overrides(t, mock, t.TempDir())
	skillsDir := filepath.Join(t.TempDir(), "skills")
	ov["silas.skills_dir"] = skillsDir
	d := startTest(t, loadConfig(t, ov))
	p := openPWA(t, d.Addr(), 1440, 900)
	p.login()
	return d, p, skillsDir
}

// askInstall posts an install or import and returns the request id.
func askInstall(t *testing.T, addr, path, dir string) string {
	t.Helper()
	var out ownerapi.SkillRequestView
	pwaJSON(t, addr, "POST", path, pwaToken, `{"dir":`+js(dir)+`}`, http.StatusAccepted, &out)
	return out.RequestID
}

// The Review card of a skill shows SKILL.md, every script and the report,
// needs the slide (installing code is high risk), and installs only then.
func TestPWASkillCardInstallsAfterTheSlide(t *testing.T) {
	d, p, _ := startPWASkills(t)
	files := wordCount()
	// A bidi override in a comment must show, not reorder the line.
	files["scripts/count.py"] = strings.Replace(wordCountPy, "def main():", "def main():  # safe \u202eevil", 1)
	src := skillFiles(t, t.TempDir(), "word-count", files)
	id := askInstall(t, d.Addr(), "/skills/install", src)

	p.waitFor("the skill card", `document.querySelector('.review-root > .card.kind-skill')?.dataset.cardId === `+js(id))
	sel := card("skill")
	if got := eval[string](p, `document.querySelector(`+js(sel)+`).dataset.risk`); got != "high" {
		t.Fatalf("skill card risk %q, want high", got)
	}
	if !eval[bool](p, `document.querySelector(`+js(sel+" details")+`).open`) {
		t.Error("a skill card should have its details expanded")
	}
	if got := eval[string](p, `document.querySelector(`+js(sel+" .skill-md")+`).textContent`); got != wordCountMD {
		t.Fatalf("SKILL.md on the card:\n%q\nwant\n%q", got, wordCountMD)
	}
	script := eval[string](p, `document.querySelector(`+js(sel+` pre[data-path="scripts/count.py"]`)+`).textContent`)
	if !strings.Contains(script, "p.add_argument(\"--path\", required=True)") || !strings.Contains(script, "safe ⟨U+202E⟩evil") || strings.ContainsRune(script, '\u202e') {
		t.Fatalf("script on the card:\n%s", script)
	}
	for _, want := range []string{"Skill install", "Install skill word-count", "1 script", "validation passed", "✓ Passed", "scripts/count.py --help", "scripts/count.py --path=notes.txt"} {
		if !eval[bool](p, hasText(sel, want)) {
			t.Errorf("the skill card does not show %q", want)
		}
	}

	// A tap is not enough: the slide appears and nothing is installed yet.
	p.do("tap Approve", chromedp.Click(chromedp.CSS(sel+" .btn-primary")))
	p.waitFor("the slider", `!!document.querySelector('.slide-thumb')`)
	if _, err := d.in.db.Skills().Get(context.Background(), "word-count"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("a tap installed the skill: %v", err)
	}
	p.passLadder("high")
	p.tab("stream")
	p.waitFor("the installed note", hasText("#stream-list .note", "Skill word-count is installed."))
	p.waitFor("the card gone", `!document.querySelector('.review-root .card.kind-skill')`)
	if rec, err := d.in.db.Skills().Get(context.Background(), "word-count"); err != nil || rec.ApprovalTokenID == "" {
		t.Fatalf("after the slide: %+v %v", rec, err)
	}
}

// An import's card lists what the import changed, survives a reload while
// it waits, and a decline installs nothing.
func TestPWASkillImportCardDeclined(t *testing.T) {
	d, p, skillsDir := startPWASkills(t)
	id := askInstall(t, d.Addr(), "/skills/import", claudeSkill(t))
	p.waitFor("the import card", `document.querySelector('.review-root > .card.kind-skill')?.dataset.cardId === `+js(id))
	sel := card("skill")
	for _, want := range []string{"Skill import", "Import skill pdf-tools", "What the import changed", "allowed-tools", "scripts/extract.sh → scripts/extract.py", "adapted from claude"} {
		if !eval[bool](p, hasText(sel, want)) {
			t.Errorf("the import card does not show %q", want)
		}
	}
	// After a reload the server still lists it as pending: it stays live.
	p.do("reload the page", chromedp.Reload())
	p.waitFor("the app reconnected after the reload", `document.querySelector('#conn').dataset.state === 'online'`)
	p.waitFor("the pending card restored", `document.querySelector('.review-root > .card.kind-skill')?.dataset.cardId === `+js(id))
	if eval[bool](p, `!!document.querySelector('.review-root .card.expired')`) {
		t.Fatal("a pending skill card shows expired after a reload")
	}

	p.do("tap Decline", chromedp.Click(chromedp.CSS(sel+" .btn-decline")))
	p.tab("stream")
	p.waitFor("the declined note", hasText("#stream-list .note", "Skill pdf-tools was not installed (declined)"))
	if _, err := d.in.db.Skills().Get(context.Background(), "pdf-tools"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("a declined import has a record: %v", err)
	}
	if _, err := filepath.Glob(filepath.Join(skillsDir, "pdf-tools")); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(skillsDir, "*")); len(m) != 0 {
		t.Fatalf("a declined import left files: %v", m)
	}
}
