package skills

import "unicode/utf8"

// ProxyMetadata is the proxy's view of a work item's skills (spec 10.3,
// step 6.5): name and description only, in the work item's order, within
// budgetTokens. When the list does not fit, skills are dropped from the end
// of the list (the lowest priority) until it does, so the cut is
// deterministic. count measures a text in tokens (nil: 4 characters per
// token). It returns what to render and the names dropped.
func ProxyMetadata(list []*Skill, budgetTokens int, count func(string) int) (kept []Metadata, dropped []string) {
	if count == nil {
		count = func(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }
	}
	used := 0
	for i, s := range list {
		m := s.Meta()
		cost := count(m.Name) + count(m.Description) + 4
		if used+cost > budgetTokens {
			for _, rest := range list[i:] {
				dropped = append(dropped, rest.Name)
			}
			return kept, dropped
		}
		used += cost
		kept = append(kept, m)
	}
	return kept, nil
}

// Instructions is the planner's and executor's view of a skill (spec
// 10.3): its metadata and full SKILL.md body, and for the executor the
// invocable scripts with their argument schemas.
type Instructions struct {
	Metadata
	Body    string   `json:"body"`
	Scripts []Script `json:"scripts,omitempty"`
}

// PlannerView returns the skill's metadata and full instructions.
func (s *Skill) PlannerView() Instructions {
	return Instructions{Metadata: s.Meta(), Body: s.Body}
}

// ExecutorView adds the invocable scripts (none for background skills).
func (s *Skill) ExecutorView() Instructions {
	in := s.PlannerView()
	if s.Activation != ActivationBackground {
		in.Scripts = s.Scripts()
	}
	return in
}
