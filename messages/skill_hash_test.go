package messages

import "testing"

// TestPlanHashBindsSkillHashes: a plan's skill_hashes are in its hash, so
// the same skill with other approved files needs a new approval, while a
// plan without skills hashes as it did before the field existed.
func TestPlanHashBindsSkillHashes(t *testing.T) {
	base := WorkItem{ID: "task-x", Type: WorkTask, Title: "x", Body: "b", Skills: []string{"coding"}}
	hash := func(w WorkItem) string {
		t.Helper()
		h, err := WorkItemPlanHash(&w)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	a, b := base, base
	a.SkillHashes = map[string]string{"coding": "aaaa"}
	b.SkillHashes = map[string]string{"coding": "bbbb"}
	if hash(a) == hash(b) {
		t.Fatal("two different approved skill hashes give the same plan hash")
	}
	if hash(a) == hash(base) {
		t.Fatal("binding skill hashes does not change the plan hash")
	}
	empty := base
	empty.SkillHashes = map[string]string{}
	if hash(empty) != hash(base) {
		t.Fatal("an empty skill_hashes changes the hash of a plan without bound skills")
	}
}
