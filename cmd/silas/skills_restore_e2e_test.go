package main

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// pendingSkillIDs lists the request ids of the pending skill_install cards.
func pendingSkillIDs(t *testing.T, addr string) []string {
	t.Helper()
	var pending struct {
		Requests []map[string]any `json:"requests"`
	}
	pwaJSON(t, addr, "GET", "/approvals/pending", "owner-secret-token", "", http.StatusOK, &pending)
	var ids []string
	for _, r := range pending.Requests {
		if r["scope"] == "skill_install" {
			id, _ := r["request_id"].(string)
			ids = append(ids, id)
		}
	}
	return ids
}

// restart stops e's daemon and starts it again on the same config and data
// dir, with a new owner connection.
func (e *skillEnv) restart(t *testing.T) {
	t.Helper()
	e.d.stop()
	e.d = startTest(t, loadConfig(t, e.ov))
	e.addr = e.d.Addr()
	e.c = owner(t, e.addr)
}

// TestSkillCardSurvivesRestart: a skill_install card is journaled before it
// goes out, so after a restart the same card (same request id) is pending
// and approving it installs the skill; a card whose skill changed while
// Silas was down does not come back.
func TestSkillCardSurvivesRestart(t *testing.T) {
	e := startSkillEnv(t, nil)
	src := skillFiles(t, t.TempDir(), "word-count", wordCount())
	id := e.request(t, "/skills/install", src)
	e.card(t, id)

	e.restart(t)
	checkFor(t, waitLimit, func() bool {
		ids := pendingSkillIDs(t, e.addr)
		return len(ids) == 1 && ids[0] == id
	}, "the restored card "+id)
	e.waitAudit(t, "install_restored", "request_id", id)
	if res := e.answer(t, id, "approved"); res.str("status") != "installed" {
		t.Fatalf("approving the restored card: %v", res)
	}
	if _, ok := findSkill(e.listSkills(t), "word-count"); !ok {
		t.Fatal("the skill approved on the restored card is not listed")
	}
	e.restart(t)
	if ids := pendingSkillIDs(t, e.addr); len(ids) != 0 {
		t.Fatalf("an answered card came back after a restart: %v", ids)
	}

	// Changed while down: refused, audited, no card.
	files := wordCount()
	files["SKILL.md"] = wordCountMD
	other := skillFiles(t, t.TempDir(), "word-count", files)
	if err := os.WriteFile(filepath.Join(other, "scripts", "count.py"), []byte(wordCountPy+"\n# v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id = e.request(t, "/skills/install", other)
	e.card(t, id)
	e.d.stop()
	if err := os.WriteFile(filepath.Join(other, "scripts", "count.py"), []byte(wordCountPy+"\n# v3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.d = startTest(t, loadConfig(t, e.ov))
	e.addr = e.d.Addr()
	e.waitAudit(t, "install_restore_failed", "request_id", id)
	if ids := pendingSkillIDs(t, e.addr); len(ids) != 0 {
		t.Fatalf("a card whose skill changed while Silas was down came back: %v", ids)
	}
}
