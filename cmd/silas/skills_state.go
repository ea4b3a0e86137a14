package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/sandbox/backends"
	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/bundled"
)

// bootSkills prepares the skills at start, before the first snapshot is
// loaded: the bundled skills are recorded as installed (they ship inside
// the binary: no card) with an audit entry for each one new or changed
// with this binary, and what an earlier run staged or left half-installed
// is removed (install requests do not outlive a restart).
func bootSkills(ctx context.Context, cfg *config.Config, db *persistence.DB, log zerolog.Logger) error {
	// Only the bundled skills are synced: skills_dir is read once, by
	// newSkillSnapshots, after this.
	cat, _ := skills.Load("", bundled.FS())
	changes, err := actors.SyncBundledSkills(ctx, db, cat, time.Now().UTC())
	for _, ch := range changes {
		data, _ := json.Marshal(map[string]any{"skill": ch.Name, "hash": ch.Hash, "previous_hash": ch.Previous})
		if _, aerr := db.Audit().Append(ctx, persistence.AuditEntry{Event: ch.Event, Scope: cfg.OwnerID, Data: data}); aerr != nil {
			return fmt.Errorf("audit %s: %w", ch.Event, aerr)
		}
		log.Info().Str("skill", ch.Name).Str("event", ch.Event).Msg("bundled skill recorded")
	}
	if err != nil {
		return fmt.Errorf("record the bundled skills: %w", err)
	}
	stale, _ := filepath.Glob(filepath.Join(cfg.SkillsDir, ".install-*"))
	for _, dir := range append(stale, cfg.DataPath("skills", "staging")) {
		if err := os.RemoveAll(dir); err != nil {
			log.Warn().Err(err).Str("dir", dir).Msg("remove stale skill staging")
		}
	}
	return nil
}

// publish makes snap the snapshot in force; the SkillInstaller calls it
// after every install and removal.
func (s *skillSnapshots) publish(snap *skills.Snapshot) { s.cur.Store(snap) }

// skillInstallerOptions configures the SkillInstaller: skills_dir, a
// staging directory for imports under the data dir, and a sandbox of its
// own (<data_dir>/sandbox/skills) for the Python syntax check and the dry
// runs. It publishes into snaps.
func skillInstallerOptions(cfg *config.Config, snaps *skillSnapshots, choice backends.Choice) (*actors.SkillInstallerOptions, error) {
	root := cfg.DataPath("sandbox", "skills")
	mgr, err := choice.Manager(root)
	if err != nil {
		return nil, fmt.Errorf("skill check sandbox under %s: %w", root, err)
	}
	return &actors.SkillInstallerOptions{
		Dir: cfg.SkillsDir, StagingDir: cfg.DataPath("skills", "staging"), Bundled: bundled.FS(),
		Sandbox: mgr, Validation: cfg.Skills.Validation, Current: snaps.Snapshot, Publish: snaps.publish,
	}, nil
}
