package persistence

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/silas-ai/silas/skills/manifest"
)

// ErrSkillChanged is manifest.ErrChanged: a skill's files differ from the
// approved install record. Refuse to use the skill until the owner
// re-approves it (skill_install) or its files are restored. The error is a
// *SkillChangedError naming the first changed file.
var ErrSkillChanged = manifest.ErrChanged

// SkillChangedError names the skill and the file that changed.
type SkillChangedError = manifest.ChangedError

// SkillSource says how an installed skill reached Silas.
type SkillSource string

// Skill sources.
const (
	// SkillBundled skills ship inside the binary; the build is their
	// approval, so they carry no approval token.
	SkillBundled SkillSource = "bundled"
	// SkillLocal skills were written into skills_dir (by the owner or by
	// skill-maker) and approved with a skill_install token.
	SkillLocal SkillSource = "local"
	// SkillImported skills were adapted from another format (spec 10.4.1)
	// and approved with a skill_install token.
	SkillImported SkillSource = "imported"
)

// InstalledSkill is the install record of one skill (spec 10.4, INV-06):
// the exact files that were approved, the skill hash over them, and the
// approval that installed them. A skill runs only while its files match.
type InstalledSkill struct {
	Name    string      `json:"name"`
	Version string      `json:"version"`
	Source  SkillSource `json:"source"`
	// Hash is the skill hash (manifest.SkillHash) over Name, Version and
	// Files; the skill_install approval binds it.
	Hash  string          `json:"hash"`
	Files []manifest.File `json:"files"`
	// ApprovalTokenID and ApprovalNonce identify the skill_install token
	// that approved this exact Hash (empty for bundled skills).
	ApprovalTokenID string    `json:"approval_token_id,omitempty"`
	ApprovalNonce   string    `json:"approval_nonce,omitempty"`
	InstalledAt     time.Time `json:"installed_at"`
}

// Manifest returns the approved manifest.
func (r InstalledSkill) Manifest() manifest.Manifest {
	return manifest.Manifest{Name: r.Name, Version: r.Version, Files: r.Files, Hash: r.Hash}
}

// Check compares the manifest of a skill as it is now (for example
// skills.Skill.Manifest() of a fresh parse) with the record: nil when every
// byte is as approved, else a *SkillChangedError (ErrSkillChanged).
func (r InstalledSkill) Check(now manifest.Manifest) error {
	return manifest.Compare(r.Manifest(), now)
}

// validate checks a record before it is stored or after it is read.
func (r InstalledSkill) validate() error {
	if err := manifest.ValidName(r.Name); err != nil {
		return err
	}
	switch r.Source {
	case SkillBundled:
	case SkillLocal, SkillImported:
		if r.ApprovalTokenID == "" || r.ApprovalNonce == "" {
			return fmt.Errorf("skill %s: a %s skill needs the approval token id and nonce that installed it", r.Name, r.Source)
		}
	default:
		return fmt.Errorf("skill %s: source %q: want bundled, local or imported", r.Name, r.Source)
	}
	if len(r.Files) == 0 {
		return fmt.Errorf("skill %s: no files (a skill has at least SKILL.md)", r.Name)
	}
	if err := r.Manifest().Check(); err != nil {
		return err
	}
	return nil
}

// Skills stores install records, one per skill name.
type Skills struct{ d *DB }

// Skills returns the installed-skill store.
func (d *DB) Skills() Skills { return Skills{d: d} }

// Put stores r, replacing an earlier record of the same skill (a
// re-approval after a change). The record must be self-consistent (its
// Hash recomputes from Name, Version and Files) and, unless bundled, name
// the approval that installed it; otherwise ErrInvalid.
func (s Skills) Put(ctx context.Context, r InstalledSkill) error {
	if err := r.validate(); err != nil {
		return fmt.Errorf("put skill: %w: %w", ErrInvalid, err)
	}
	if r.InstalledAt.IsZero() {
		r.InstalledAt = time.Now().UTC()
	}
	val, err := encodeJSON(&r)
	if err != nil {
		return fmt.Errorf("put skill %s: %w", r.Name, err)
	}
	k := key1(pfxSkill, r.Name)
	err = s.d.updateSized(ctx, int64(len(val))+defaultWriteSize, func(txn *wtxn) error { return txn.Set(k, val) })
	if err != nil {
		return fmt.Errorf("put skill %s: %w", r.Name, err)
	}
	return nil
}

// Get returns the install record of name, or ErrNotFound when the skill is
// not installed (it must not run). A record that fails its own hash check
// is ErrCorrupt.
func (s Skills) Get(ctx context.Context, name string) (InstalledSkill, error) {
	if err := manifest.ValidName(name); err != nil {
		return InstalledSkill{}, fmt.Errorf("get skill: %w: %w", ErrNotFound, err)
	}
	var r InstalledSkill
	err := s.d.view(ctx, func(txn *badger.Txn) error {
		return getValue(txn, key1(pfxSkill, name), func(v []byte) error { return decodeJSON(v, &r) })
	})
	if err != nil {
		return InstalledSkill{}, fmt.Errorf("get skill %s: %w", name, err)
	}
	if err := r.validate(); err != nil || r.Name != name {
		return InstalledSkill{}, fmt.Errorf("get skill %s: %w: %v", name, ErrCorrupt, err)
	}
	return r, nil
}

// List returns every install record, sorted by name.
func (s Skills) List(ctx context.Context) ([]InstalledSkill, error) {
	all, err := scanJSON[InstalledSkill](ctx, s.d, []byte(pfxSkill), "skill")
	if err != nil {
		return nil, fmt.Errorf("list skills: %w", err)
	}
	for _, r := range all {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("list skills: %s: %w: %v", r.Name, ErrCorrupt, err)
		}
	}
	return all, nil
}

// Delete removes the install record of name (the skill is uninstalled and
// can no longer run); deleting a missing record is no error.
func (s Skills) Delete(ctx context.Context, name string) error {
	if err := manifest.ValidName(name); err != nil {
		return fmt.Errorf("delete skill: %w: %w", ErrInvalid, err)
	}
	if err := s.d.update(ctx, func(txn *wtxn) error { return txn.Delete(key1(pfxSkill, name)) }); err != nil {
		return fmt.Errorf("delete skill %s: %w", name, err)
	}
	return nil
}

// Verify rereads the skill directory at the root of current and compares
// every file with the install record of name (INV-06); call it before
// every script run. It returns ErrNotFound when the skill is not installed,
// a *SkillChangedError (ErrSkillChanged) naming the first file that was
// modified, added or removed, or a manifest.ErrUnreadable error when the
// directory breaks the reading rules (a symlink, a special file). Pass an
// os.Root's FS (or manifest.ReadDir's equivalent) so nothing outside the
// skill directory is read.
func (s Skills) Verify(ctx context.Context, name string, current fs.FS) error {
	r, err := s.Get(ctx, name)
	if err != nil {
		return fmt.Errorf("verify skill: %w", err)
	}
	now, err := manifest.Build(current, r.Name, r.Version)
	if err != nil {
		return fmt.Errorf("verify skill %s: %w", name, err)
	}
	if err := r.Check(now); err != nil {
		return fmt.Errorf("verify skill %s: %w", name, err)
	}
	return nil
}
