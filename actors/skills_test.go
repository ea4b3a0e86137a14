package actors

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/persistence"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/session"
	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/bundled"
	"github.com/silas-ai/silas/skills/manifest"
)

func memDB(t *testing.T) *persistence.DB {
	t.Helper()
	db, err := persistence.Open(context.Background(), persistence.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// The bundled skills are recorded without a card, once per binary: a new
// hash is an update, a skill the binary no longer ships is retired.
func TestSyncBundledSkills(t *testing.T) {
	ctx := context.Background()
	db := memDB(t)
	cat, probs := skills.Load("", bundled.FS())
	if len(probs) != 0 {
		t.Fatalf("bundled skills do not load: %v", probs)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	changes, err := SyncBundledSkills(ctx, db, cat, now)
	if err != nil || len(changes) != len(bundled.Names()) || changes[0].Event != AuditBundledSkillInstalled || changes[1].Event != AuditBundledSkillInstalled {
		t.Fatalf("first sync: %+v %v", changes, err)
	}
	for _, name := range bundled.Names() {
		rec, err := db.Skills().Get(ctx, name)
		e, _ := cat.Get(name)
		if err != nil || rec.Source != persistence.SkillBundled || rec.Hash != e.Skill.Hash() || rec.ApprovalTokenID != "" {
			t.Fatalf("%s record %+v %v", name, rec, err)
		}
	}
	if changes, err := SyncBundledSkills(ctx, db, cat, now); err != nil || len(changes) != 0 {
		t.Fatalf("second sync with the same binary: %+v %v", changes, err)
	}

	// An older binary recorded other bytes for coding, and shipped a skill
	// this one does not.
	old := oldRecord(t, "coding")
	if err := db.Skills().Put(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := db.Skills().Put(ctx, oldRecord(t, "gone-skill")); err != nil {
		t.Fatal(err)
	}
	changes, err = SyncBundledSkills(ctx, db, cat, now)
	if err != nil || len(changes) != 2 {
		t.Fatalf("sync after a binary update: %+v %v", changes, err)
	}
	coding, _ := cat.Get("coding")
	if c := changes[0]; c.Event != AuditBundledSkillUpdated || c.Name != "coding" || c.Previous != old.Hash || c.Hash != coding.Skill.Hash() {
		t.Fatalf("update %+v", c)
	}
	if c := changes[1]; c.Event != AuditBundledSkillRetired || c.Name != "gone-skill" {
		t.Fatalf("retire %+v", c)
	}
	if _, err := db.Skills().Get(ctx, "gone-skill"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("retired record: %v", err)
	}
	snap, _, err := LoadSkills(ctx, db, "", bundled.FS())
	if err != nil || snap.Approved["coding"] != coding.Skill.Hash() {
		t.Fatalf("snapshot %+v %v", snap, err)
	}
	if _, err := snap.Bind([]string{"coding", "skill-maker"}); err != nil {
		t.Fatalf("bundled skills cannot be bound: %v", err)
	}
}

func oldRecord(t *testing.T, name string) persistence.InstalledSkill {
	t.Helper()
	files := []manifest.File{{Path: "SKILL.md", SHA256: manifest.HashBytes([]byte("old " + name)), Size: 4}}
	m, err := manifest.FromFiles(name, "0.1", files)
	if err != nil {
		t.Fatal(err)
	}
	return persistence.InstalledSkill{Name: name, Version: "0.1", Source: persistence.SkillBundled, Hash: m.Hash, Files: m.Files}
}

// startInstaller starts an actor system whose SkillInstaller has no
// approval engine (and so installs nothing).
func startInstaller(t *testing.T, dir string) *System {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Environ: []string{}, Overrides: map[string]any{"silas.data_dir": t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	db := memDB(t)
	if _, err := SyncBundledSkills(context.Background(), db, mustLoad(t, dir), time.Now()); err != nil {
		t.Fatal(err)
	}
	snap, _, err := LoadSkills(context.Background(), db, dir, bundled.FS())
	if err != nil {
		t.Fatal(err)
	}
	router, err := llm.NewRouter(map[string]llm.Provider{"openrouter": llm.NewScripted(nil)}, map[llm.Role]string{
		llm.RoleProxy: "openrouter:p", llm.RolePlanner: "openrouter:pl", llm.RoleExecutor: "openrouter:e", llm.RoleScorer: "openrouter:s",
	})
	if err != nil {
		t.Fatal(err)
	}
	minter, _ := session.NewMinter([]byte(strings.Repeat("k", 32)))
	sys, err := Start(context.Background(), Deps{
		Config: cfg, DB: db, Models: router, OwnerToken: ownerToken, Sessions: minter, Log: zerolog.Nop(),
		SkillInstaller: &SkillInstallerOptions{Dir: dir, StagingDir: t.TempDir(), Bundled: bundled.FS(),
			Current: func() *skills.Snapshot { return snap }},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = sys.Stop(ctx)
	})
	return sys
}

func mustLoad(t *testing.T, dir string) *skills.Catalog {
	t.Helper()
	cat, _ := skills.Load(dir, bundled.FS())
	return cat
}

// Without an approval engine nothing can be installed; bundled skills are
// never removed; removing what is not there says so.
func TestSkillInstallerRefusals(t *testing.T) {
	dir := t.TempDir()
	sys := startInstaller(t, dir)
	ctx := context.Background()

	a, err := sys.InstallSkill(ctx, InstallSkill{Dir: dir})
	if err != nil || !errors.Is(a.Err, ErrSkillsUnavailable) || !strings.Contains(a.Err.Error(), "silas serve") {
		t.Fatalf("install without an approval engine: %+v %v", a, err)
	}
	for _, name := range bundled.Names() {
		r, err := sys.RemoveSkill(ctx, name)
		if err != nil || !errors.Is(r.Err, ErrSkillBundled) {
			t.Fatalf("remove %s: %+v %v", name, r, err)
		}
	}
	for _, name := range []string{"not-here", "../escape", "Bad Name"} {
		r, err := sys.RemoveSkill(ctx, name)
		if err != nil || !errors.Is(r.Err, ErrSkillNotInstalled) {
			t.Fatalf("remove %q: %+v %v", name, r, err)
		}
	}
	// A skill directory without a record is removed from skills_dir.
	if err := os.MkdirAll(filepath.Join(dir, "stray"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r, err := sys.RemoveSkill(ctx, "stray"); err != nil || r.Err != nil {
		t.Fatalf("remove stray: %+v %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stray")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stray dir after removal: %v", err)
	}
	pending, _, err := sys.SkillRequests(ctx)
	if err != nil || len(pending) != 0 {
		t.Fatalf("pending %v %v", pending, err)
	}
}
