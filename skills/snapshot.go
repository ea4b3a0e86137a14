package skills

import "fmt"

// Snapshot is the daemon's view of its skills at one moment: the catalog
// of skills found on disk and in the binary, and the skill hash each
// install record approved. It is immutable; the daemon swaps in a new one
// after an install, a removal or a reload, so a reader needs no IO and no
// lock.
type Snapshot struct {
	Catalog *Catalog
	// Approved maps an installed skill's name to the skill hash its
	// install approval bound.
	Approved map[string]string
}

// Bind returns the approved skill hash of every skill in names, for a
// plan's skill_hashes: a skill the catalog lacks, one that is not
// installed, or one whose files on disk no longer match what was approved
// makes the plan unusable, and the error says what to do.
func (s *Snapshot) Bind(names []string) (map[string]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	if s == nil {
		s = &Snapshot{}
	}
	out := make(map[string]string, len(names))
	for _, n := range names {
		e, ok := s.catalog().Get(n)
		if !ok {
			return nil, fmt.Errorf("skill %q: %w; install it with `silas skills install <dir>` or drop it from the plan", n, ErrUnknownSkill)
		}
		hash, ok := s.Approved[n]
		if !ok {
			return nil, fmt.Errorf("skill %q is not installed: install it with `silas skills install %s` and approve it", n, e.Dir)
		}
		if hash != e.Skill.Hash() {
			return nil, fmt.Errorf("skill %q changed since it was installed; approve it again with `silas skills install %s`", n, e.Dir)
		}
		out[n] = hash
	}
	return out, nil
}

func (s *Snapshot) catalog() *Catalog {
	if s == nil || s.Catalog == nil {
		return &Catalog{byName: map[string]Entry{}}
	}
	return s.Catalog
}
