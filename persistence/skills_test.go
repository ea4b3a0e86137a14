package persistence

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/silas-ai/silas/skills/manifest"
)

func skillFS() fstest.MapFS {
	return fstest.MapFS{
		"SKILL.md":         {Data: []byte("---\nname: demo\ndescription: Use when testing the install record store.\n---\n# Demo\n")},
		"scripts/count.py": {Data: []byte("print(len('hello world'.split()))\n")},
	}
}

func installed(t *testing.T, fsys fstest.MapFS) InstalledSkill {
	t.Helper()
	m, err := manifest.Build(fsys, "demo", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	return InstalledSkill{Name: m.Name, Version: m.Version, Source: SkillLocal, Hash: m.Hash, Files: m.Files,
		ApprovalTokenID: "tok-1", ApprovalNonce: "nonce-1", InstalledAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func TestSkillsStore(t *testing.T) {
	for _, onDisk := range []bool{true, false} {
		t.Run(map[bool]string{true: "disk", false: "memory"}[onDisk], func(t *testing.T) {
			h := newHarness(t, onDisk)
			ctx := t.Context()
			st := h.db.Skills()
			rec := installed(t, skillFS())
			if _, err := st.Get(ctx, "demo"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("get before put: %v", err)
			}
			if err := st.Verify(ctx, "demo", skillFS()); !errors.Is(err, ErrNotFound) {
				t.Fatalf("verify of a skill never installed: %v, want ErrNotFound", err)
			}
			if err := st.Put(ctx, rec); err != nil {
				t.Fatal(err)
			}
			bundled := installed(t, skillFS())
			bundled.Name, bundled.Source, bundled.ApprovalTokenID, bundled.ApprovalNonce = "coding", SkillBundled, "", ""
			m, _ := manifest.Build(skillFS(), "coding", "1.0.0")
			bundled.Hash = m.Hash
			if err := st.Put(ctx, bundled); err != nil {
				t.Fatalf("bundled record without approval: %v", err)
			}
			if onDisk {
				h.reopen()
				st = h.db.Skills()
			}
			got, err := st.Get(ctx, "demo")
			if err != nil || got.Hash != rec.Hash || got.ApprovalTokenID != "tok-1" || len(got.Files) != 2 || !got.InstalledAt.Equal(rec.InstalledAt) {
				t.Fatalf("get: %+v %v", got, err)
			}
			list, err := st.List(ctx)
			if err != nil || len(list) != 2 || list[0].Name != "coding" || list[1].Name != "demo" {
				t.Fatalf("list: %+v %v", list, err)
			}
			if err := st.Verify(ctx, "demo", skillFS()); err != nil {
				t.Fatalf("verify unchanged: %v", err)
			}

			// INV-06: one changed byte makes the skill unusable, and the
			// error names the file.
			changed := skillFS()
			changed["scripts/count.py"] = &fstest.MapFile{Data: []byte("print(len('hello world'.split()))\n ")}
			err = st.Verify(ctx, "demo", changed)
			var ce *SkillChangedError
			if !errors.Is(err, ErrSkillChanged) || !errors.As(err, &ce) || ce.Path != "scripts/count.py" || ce.Change != manifest.ChangeModified {
				t.Fatalf("verify after a one-byte change: %v", err)
			}
			if !strings.Contains(err.Error(), "re-approve") {
				t.Fatalf("the error does not say what to do: %v", err)
			}
			added := skillFS()
			added["scripts/extra.py"] = &fstest.MapFile{Data: []byte("")}
			if err := st.Verify(ctx, "demo", added); !errors.As(err, &ce) || ce.Path != "scripts/extra.py" || ce.Change != manifest.ChangeAdded {
				t.Fatalf("verify after adding a file: %v", err)
			}

			// Re-approval replaces the record; then the changed skill verifies.
			re := installed(t, changed)
			re.ApprovalTokenID, re.ApprovalNonce = "tok-2", "nonce-2"
			if err := st.Put(ctx, re); err != nil {
				t.Fatal(err)
			}
			if err := st.Verify(ctx, "demo", changed); err != nil {
				t.Fatalf("verify after re-approval: %v", err)
			}
			if err := st.Verify(ctx, "demo", skillFS()); !errors.Is(err, ErrSkillChanged) {
				t.Fatalf("the old bytes still verify after re-approval: %v", err)
			}

			if err := st.Delete(ctx, "demo"); err != nil {
				t.Fatal(err)
			}
			if err := st.Delete(ctx, "demo"); err != nil {
				t.Fatalf("second delete: %v", err)
			}
			if err := st.Verify(ctx, "demo", changed); !errors.Is(err, ErrNotFound) {
				t.Fatalf("verify after delete: %v", err)
			}
		})
	}
}

func TestSkillsStoreRefuses(t *testing.T) {
	h := newHarness(t, false)
	st := h.db.Skills()
	good := installed(t, skillFS())
	cases := map[string]func(r *InstalledSkill){
		"bad name":               func(r *InstalledSkill) { r.Name = "Demo" },
		"unknown source":         func(r *InstalledSkill) { r.Source = "web" },
		"local without token":    func(r *InstalledSkill) { r.ApprovalTokenID = "" },
		"imported without nonce": func(r *InstalledSkill) { r.Source, r.ApprovalNonce = SkillImported, "" },
		"hash not matching":      func(r *InstalledSkill) { r.Hash = strings.Repeat("0", 64) },
		"file hash changed": func(r *InstalledSkill) {
			r.Files = append([]manifest.File(nil), r.Files...)
			r.Files[0].SHA256 = strings.Repeat("a", 64)
		},
		"no files":        func(r *InstalledSkill) { r.Files = nil },
		"version changed": func(r *InstalledSkill) { r.Version = "2.0.0" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			r := good
			mutate(&r)
			if err := st.Put(t.Context(), r); !errors.Is(err, ErrInvalid) {
				t.Fatalf("put: %v, want ErrInvalid", err)
			}
		})
	}
	if _, err := st.Get(t.Context(), "../x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get with a bad name: %v", err)
	}
	if err := st.Delete(t.Context(), ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("delete with an empty name: %v", err)
	}
}

func TestSkillsVerifyOnDiskRefusesSymlinks(t *testing.T) {
	h := newHarness(t, false)
	st := h.db.Skills()
	dir := t.TempDir()
	for p, f := range skillFS() {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Put(t.Context(), installed(t, skillFS())); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	if err := st.Verify(t.Context(), "demo", root.FS()); err != nil {
		t.Fatalf("verify on disk: %v", err)
	}
	// Swap the script for a symlink to identical bytes elsewhere: refused,
	// not followed.
	outside := filepath.Join(t.TempDir(), "count.py")
	if err := os.WriteFile(outside, skillFS()["scripts/count.py"].Data, 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "scripts", "count.py")
	if err := os.Remove(script); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, script); err != nil {
		t.Fatal(err)
	}
	if err := st.Verify(t.Context(), "demo", root.FS()); !errors.Is(err, manifest.ErrUnreadable) {
		t.Fatalf("verify through a symlink: %v", err)
	}
}

// TestSkillKeyPrefixIsDisjoint: the skill prefix overlaps no other store's.
func TestSkillKeyPrefixIsDisjoint(t *testing.T) {
	others := []string{pfxMeta, keySchemaVersion, pfxMigration, keyAuditHead, keySeqQueue, keySeqOutbox, pfxChronicle,
		pfxChronicleScope, pfxSnapshot, pfxSession, pfxAudit, pfxQueue, pfxQueueIndex, pfxDeadLetter, pfxAcked, pfxProcessed,
		pfxOutbox, pfxOutboxIndex, pfxNonce, pfxMemory, pfxPosting, pfxMemoryTime, pfxDocFreq, pfxMemStats, pfxUsageTotal,
		pfxUsageDay, pfxPersonaState, pfxPersonaEvent, pfxPersonaIndex, pfxWorkItem, pfxStandingToken, pfxDevice,
		pfxDeviceCode, pfxSecureInput, keyOwnerVisit}
	for _, o := range others {
		if strings.HasPrefix(o, pfxSkill) || strings.HasPrefix(pfxSkill, o) {
			t.Errorf("%q and %q overlap", pfxSkill, o)
		}
	}
}
