package main

import (
	"context"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/bundled"
)

// skillSnapshots holds the daemon's current skills (the catalog of
// skills_dir and the bundled skills, and the hash each install record
// approved) for readers that must not do IO: a scope binding a plan's
// skills, an attempt choosing what to mount. The SkillInstaller publishes
// a new one after every install and removal.
type skillSnapshots struct {
	cur atomic.Pointer[skills.Snapshot]
}

// newSkillSnapshots loads the skills and the install records (bootSkills
// has recorded the bundled ones already) and returns the holder. A skill
// that does not load is logged and left out; the others stay usable.
func newSkillSnapshots(ctx context.Context, dir string, db *persistence.DB, log zerolog.Logger) (*skillSnapshots, error) {
	snap, problems, err := actors.LoadSkills(ctx, db, dir, bundled.FS())
	for _, p := range problems {
		log.Warn().Str("skill", p.Name).Str("origin", string(p.Origin)).Err(p.Err).Msg("skill not loaded")
	}
	if err != nil {
		return nil, err
	}
	s := &skillSnapshots{}
	s.cur.Store(snap)
	return s, nil
}

// Snapshot returns the current skills; never nil after newSkillSnapshots.
func (s *skillSnapshots) Snapshot() *skills.Snapshot { return s.cur.Load() }
