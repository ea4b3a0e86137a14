package actors

import (
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
)

// proposeSkills sends each skill a skill-maker work item staged to the
// SkillInstaller, which validates it and puts its skill_install card to the
// owner (spec 10.5): nothing is installed, and no work item can use the
// skill, until the owner approves. It returns what the work item's result
// says about them.
func (a *WorkItem) proposeSkills(c actor.Context, staged []stagedSkill) string {
	if len(staged) == 0 {
		return ""
	}
	var proposed, refused []string
	for _, s := range staged {
		if s.problem != "" {
			refused = append(refused, s.name+" ("+s.problem+")")
			continue
		}
		if a.d.skills == nil {
			refused = append(refused, s.name+" (this process cannot install skills; run it through `silas serve`)")
			continue
		}
		c.Send(a.d.skills, &InstallSkill{Name: s.name, Origin: SkillOriginMaker, files: s.files, workItem: a.w.ID})
		proposed = append(proposed, s.name)
	}
	a.audit("skills_staged", map[string]any{"proposed": proposed, "refused": refused})
	var b strings.Builder
	if len(proposed) > 0 {
		fmt.Fprintf(&b, "\nSkills proposed for your approval: %s. Silas validates each and shows its skill_install card; none is installed until you approve it.", strings.Join(proposed, ", "))
	}
	if len(refused) > 0 {
		fmt.Fprintf(&b, "\nStaged skills not proposed: %s.", strings.Join(refused, "; "))
	}
	return b.String()
}
