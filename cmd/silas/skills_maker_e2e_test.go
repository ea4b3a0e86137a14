package main

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/silas-ai/silas/bench/mockllm"
	"github.com/silas-ai/silas/skills/bundled"
)

// makerPlan is a task with the bundled skill-maker whose check is that the
// skill was staged.
const makerPlan = `---
id: task-make-skill
type: task
title: Build a word-count skill
skills: [skill-maker]
verify:
  - name: staged
    run: "test -f staging/word-count/SKILL.md"
    expect: { exit_code: 0 }
---
Write a skill that counts the words of a file, with skill-maker.
`

// pendingSkillCard waits for a skill_install request among the owner's
// pending approvals and returns it.
func (e *skillEnv) pendingSkillCard(t *testing.T) map[string]any {
	t.Helper()
	var card map[string]any
	checkFor(t, waitLimit, func() bool {
		var pending struct {
			Requests []map[string]any `json:"requests"`
		}
		pwaJSON(t, e.addr, "GET", "/approvals/pending", "owner-secret-token", "", http.StatusOK, &pending)
		for _, r := range pending.Requests {
			if r["scope"] == "skill_install" {
				card = r
				return true
			}
		}
		return false
	}, "a skill_install card")
	return card
}

// TestSkillMakerBuildsASkillTheOwnerApproves (spec 10.5): a work item with
// skill-maker writes a skill in its sandbox; when it passes verification
// the skill is proposed on a skill_install card, is not usable until the
// owner approves it, and a follow-up task then runs its script.
func TestSkillMakerBuildsASkillTheOwnerApproves(t *testing.T) {
	e := startSkillEnv(t, nil)
	draft, err := fs.ReadFile(bundled.FS(), "skill-maker/assets/draft-example.json")
	if err != nil {
		t.Fatal(err)
	}
	writeDraft := mockllm.ToolCall{ID: "call-draft", Name: "python_exec",
		Arguments: mustJSON(t, map[string]any{"code": "open('draft.json', 'w').write(" + strconv.Quote(string(draft)) + ")\n"})}
	create := mockllm.ToolCall{ID: "call-create", Name: "skill_script", Arguments: mustJSON(t, map[string]any{
		"skill": "skill-maker", "script": "scripts/create_skill.py", "args": map[string]any{"name": "word-count", "spec_file": "draft.json"},
	})}
	scriptWork(e.mock, makerPlan, executorScript(`{"summary":"staged word-count","artifact_refs":[],"next_steps":[]}`, writeDraft, create))

	e.c.say("build me a skill that counts words")
	evs := e.c.approveAndFinish("task-make-skill")
	last := evs[len(evs)-1]
	if last.str("status") != "done" || !strings.Contains(last.str("detail"), "Skills proposed for your approval: word-count") {
		t.Fatalf("the skill-maker work item ended %v, want done with word-count proposed", last)
	}
	if res := toolResult(e.mock, "call-create"); !strings.Contains(res, `\"written\": true`) {
		t.Fatalf("create_skill.py answered %q", res)
	}

	card := e.pendingSkillCard(t)
	sk, _ := card["skill"].(map[string]any)
	if sk["name"] != "word-count" || sk["origin"] != "skill-maker" {
		t.Fatalf("skill card %v, want word-count from skill-maker", card)
	}
	if !strings.Contains(sk["skill_md"].(string), "# Word count") {
		t.Fatalf("the card does not show the staged SKILL.md: %v", sk["skill_md"])
	}
	e.waitAudit(t, "install_requested", "work_item_id", "task-make-skill")
	if _, ok := findSkill(e.listSkills(t), "word-count"); ok {
		t.Fatal("the staged skill is listed before the owner approved it")
	}

	id, _ := card["request_id"].(string)
	if res := e.answer(t, id, "approved"); res.str("status") != "installed" {
		t.Fatalf("approving the staged skill: %v", res)
	}
	if v, ok := findSkill(e.listSkills(t), "word-count"); !ok || v.Source != "local" {
		t.Fatalf("after approval the skill is listed as %+v (%v)", v, ok)
	}

	// The follow-up task lists the new skill and runs its script.
	notes := mockllm.ToolCall{ID: "call-notes", Name: "python_exec",
		Arguments: mustJSON(t, map[string]any{"code": "open('notes.txt', 'w').write('one two three')\n"})}
	count := mockllm.ToolCall{ID: "call-count", Name: "skill_script", Arguments: mustJSON(t, map[string]any{
		"skill": "word-count", "script": "scripts/count.py", "args": map[string]any{"path": "notes.txt"},
	})}
	scriptWork(e.mock, skillPlan("task-use-skill", "[word-count]"), executorScript(`{"summary":"counted","artifact_refs":[],"next_steps":[]}`, notes, count))
	e.c.say("count the words in my notes")
	evs = e.c.approveAndFinish("task-use-skill")
	if last := evs[len(evs)-1]; last.str("status") != "done" {
		t.Fatalf("the follow-up task ended %v, want done", last)
	}
	if res := toolResult(e.mock, "call-count"); !strings.Contains(res, `\"words\": 3`) {
		t.Fatalf("the new skill's script answered %q, want 3 words", res)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
