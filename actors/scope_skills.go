package actors

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/runtime/contextmgr"
	"github.com/silas-ai/silas/skills"
)

// refreshSkillPrompts gives the owner scope's proxy and planner the
// daemon's current skills (spec 10.3): the proxy their names and
// descriptions, within skill_metadata_budget_pct and cut deterministically
// past it; the planner, in addition, each skill's full SKILL.md, to list the
// ones a plan needs in its skills. Only installed auto skills are shown.
// It runs before each turn and costs nothing until the skills change; the
// prompts stay byte-stable between changes, so providers' prompt caches
// keep hitting. Customers' scopes never see skills.
func (s *Scope) refreshSkillPrompts() {
	if s.kind != messages.ScopeOwner || s.d.Skills == nil {
		return
	}
	snap := s.d.Skills()
	if snap == s.skillSnap {
		return
	}
	s.skillSnap = snap
	proxy, planner := skillPrompts(snap, s.window)
	s.env.ProxyInstructions = ProxyInstructions + proxy
	s.env.PlannerInstructions = PlannerInstructions + planner
}

// skillPrompts renders the proxy's and the planner's skill sections.
func skillPrompts(snap *skills.Snapshot, w *contextmgr.Window) (proxy, planner string) {
	if snap == nil || snap.Catalog == nil {
		return "", ""
	}
	var usable []*skills.Skill
	for _, sk := range snap.Catalog.PlannerCandidates() {
		if snap.Approved[sk.Name] == sk.Hash() {
			usable = append(usable, sk)
		}
	}
	if len(usable) == 0 {
		return "", ""
	}
	metas := make([]contextmgr.SkillMeta, len(usable))
	for i, sk := range usable {
		m := sk.Meta()
		metas[i] = contextmgr.SkillMeta{Name: m.Name, Description: m.Description}
	}
	block, _ := w.SkillMetadata(metas)
	if block != "" {
		proxy = "\n\nSkills that plans can use (route to the planner when one fits the request):\n" + block
	}
	var b strings.Builder
	b.WriteString("\n\n# Skills\nA plan that needs a skill lists it in its front matter, e.g. `skills: [coding]`; " +
		"the executor then gets its instructions and runs its scripts. List only skills the work needs.\n")
	for _, sk := range usable {
		v := sk.PlannerView()
		fmt.Fprintf(&b, "\n## Skill %s\n%s\n\n%s\n", v.Name, v.Description, strings.TrimSpace(v.Body))
		for _, sc := range sk.Scripts() {
			schema, _ := json.Marshal(sc.JSONSchema())
			fmt.Fprintf(&b, "- script %s, args: %s\n", sc.Path, schema)
		}
	}
	return proxy, b.String()
}
