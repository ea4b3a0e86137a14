package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/bundled"
)

// skillSnapshots holds the daemon's current skills (the catalog of
// skills_dir and the bundled skills, and the hash each install record
// approved) for readers that must not do IO: a scope binding a plan's
// skills, an attempt choosing what to mount. Reload swaps in a new one.
type skillSnapshots struct {
	dir string
	db  *persistence.DB
	log zerolog.Logger
	cur atomic.Pointer[skills.Snapshot]
}

// newSkillSnapshots loads the skills and the install records (bootSkills
// has recorded the bundled ones already) and returns the holder.
func newSkillSnapshots(ctx context.Context, dir string, db *persistence.DB, log zerolog.Logger) (*skillSnapshots, error) {
	s := &skillSnapshots{dir: dir, db: db, log: log}
	if err := s.Reload(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Snapshot returns the current skills; never nil after newSkillSnapshots.
func (s *skillSnapshots) Snapshot() *skills.Snapshot { return s.cur.Load() }

// Reload reads skills_dir, the bundled skills and the install records
// again. A skill that does not load is logged and left out; the others
// stay usable.
func (s *skillSnapshots) Reload(ctx context.Context) error {
	cat, problems := skills.Load(s.dir, bundled.FS())
	for _, p := range problems {
		s.log.Warn().Str("skill", p.Name).Str("origin", string(p.Origin)).Err(p.Err).Msg("skill not loaded")
	}
	recs, err := s.db.Skills().List(ctx)
	if err != nil {
		return fmt.Errorf("read the installed skills: %w", err)
	}
	approved := make(map[string]string, len(recs))
	for _, r := range recs {
		approved[r.Name] = r.Hash
	}
	s.cur.Store(&skills.Snapshot{Catalog: cat, Approved: approved})
	return nil
}
