package actors

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/skills"
)

// LoadSkills builds the daemon's skill snapshot: the catalog of the bundled
// skills and of skills_dir (skills.Load) and the skill hash each install
// record approved. Skills that do not load are returned as problems for
// the log; they never stop the others. The daemon calls it at start; the
// SkillInstaller after every install and removal.
func LoadSkills(ctx context.Context, db *persistence.DB, dir string, bundled fs.FS) (*skills.Snapshot, []skills.LoadProblem, error) {
	cat, probs := skills.Load(dir, bundled)
	recs, err := db.Skills().List(ctx)
	if err != nil {
		return nil, probs, fmt.Errorf("load skills: %w", err)
	}
	approved := make(map[string]string, len(recs))
	for _, r := range recs {
		approved[r.Name] = r.Hash
	}
	return &skills.Snapshot{Catalog: cat, Approved: approved}, probs, nil
}

// BundledChange is one change SyncBundledSkills made to the install
// records; Event is the audit event that records it.
type BundledChange struct {
	Event    string
	Name     string
	Hash     string
	Previous string
}

// Audit events of SyncBundledSkills.
const (
	AuditBundledSkillInstalled = "bundled_skill_installed"
	AuditBundledSkillUpdated   = "bundled_skill_updated"
	AuditBundledSkillRetired   = "bundled_skill_retired"
)

// SyncBundledSkills records the bundled skills of cat as installed (spec
// 10.7): they ship inside the signed binary, so the build is their
// approval and they get no card. A bundled skill without a record, or
// whose record holds another hash (a new binary), is recorded with source
// bundled; a bundled record whose skill this binary no longer ships is
// deleted. Call it at start, before anything resolves skills.
func SyncBundledSkills(ctx context.Context, db *persistence.DB, cat *skills.Catalog, now time.Time) ([]BundledChange, error) {
	var out []BundledChange
	shipped := map[string]bool{}
	for _, name := range cat.Names() {
		e, _ := cat.Get(name)
		if e.Origin != skills.OriginBundled {
			continue
		}
		shipped[name] = true
		sk := e.Skill
		prev, err := db.Skills().Get(ctx, name)
		switch {
		case err == nil && prev.Source == persistence.SkillBundled && prev.Hash == sk.Hash():
			continue
		case err != nil && !errors.Is(err, persistence.ErrNotFound):
			return out, fmt.Errorf("bundled skill %s: %w", name, err)
		}
		rec := persistence.InstalledSkill{Name: name, Version: sk.Version, Source: persistence.SkillBundled, Hash: sk.Hash(), Files: sk.Files(), InstalledAt: now}
		if err := db.Skills().Put(ctx, rec); err != nil {
			return out, fmt.Errorf("record bundled skill %s: %w", name, err)
		}
		ch := BundledChange{Event: AuditBundledSkillInstalled, Name: name, Hash: sk.Hash()}
		if err == nil {
			ch.Event, ch.Previous = AuditBundledSkillUpdated, prev.Hash
		}
		out = append(out, ch)
	}
	recs, err := db.Skills().List(ctx)
	if err != nil {
		return out, fmt.Errorf("list skills: %w", err)
	}
	for _, r := range recs {
		if r.Source != persistence.SkillBundled || shipped[r.Name] {
			continue
		}
		if err := db.Skills().Delete(ctx, r.Name); err != nil {
			return out, fmt.Errorf("retire bundled skill %s: %w", r.Name, err)
		}
		out = append(out, BundledChange{Event: AuditBundledSkillRetired, Name: r.Name, Previous: r.Hash})
	}
	return out, nil
}
