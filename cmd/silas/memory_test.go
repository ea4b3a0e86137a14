package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// runCLIIO runs silas with stdin and returns stdout and stderr apart.
func runCLIIO(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(t.Context(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

// withDB opens the database of dataDir, runs fn and closes it again, so
// that the CLI can open it afterwards.
func withDB(t *testing.T, dataDir string, fn func(m persistence.Memory)) {
	t.Helper()
	db, err := persistence.Open(t.Context(), persistence.Options{Dir: filepath.Join(dataDir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	fn(db.Memory())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// dump returns every item of every scope of dataDir's database.
func dump(t *testing.T, dataDir string) map[string][]messages.MemoryItem {
	t.Helper()
	out := map[string][]messages.MemoryItem{}
	withDB(t, dataDir, func(m persistence.Memory) {
		scopes, err := m.Scopes(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scopes {
			err := m.All(t.Context(), s, func(it messages.MemoryItem) error {
				out[s] = append(out[s], it)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	return out
}

func put(t *testing.T, dataDir, scope string, items ...messages.MemoryItem) {
	t.Helper()
	withDB(t, dataDir, func(m persistence.Memory) {
		if err := m.Put(t.Context(), scope, items...); err != nil {
			t.Fatal(err)
		}
	})
}

func ptr[T any](v T) *T { return &v }

var memT0 = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)

func item(id, content string) messages.MemoryItem {
	return messages.MemoryItem{
		MemoryID: id, Content: content, MemoryType: messages.MemoryFact,
		ReingestionTier: messages.TierActive, TrustLevel: messages.TrustWorking,
		Taint: messages.TaintOwner, CreatedAt: memT0, UpdatedAt: memT0,
		SourceKind: messages.SourceMemoryOp,
	}
}

// richItems use every MemoryItem field and every taint, trust level and
// tier, with values that are easy to lose on the way (nanoseconds, a
// non-UTC offset, float32 extremes, HTML characters, empty vs nil lists).
func richItems() map[string][]messages.MemoryItem {
	ext := item("ext-1", "a web page said <b>\"x\" & y</b>")
	ext.Taint, ext.MemoryType, ext.SourceKind = messages.TaintExternal, messages.MemoryEpisode, messages.SourceToolOutputRaw
	ext.ReingestionTier = messages.TierLowReingestion
	ext.Embedding = []float32{0.1, -1e-8, 3.4028235e38, 0, -0.33333334}
	ext.SemanticTags = []string{}

	ver := item("ver-1", "owner prefers tea — ünïcode ✓")
	ver.TrustLevel, ver.MemoryType = messages.TrustVerified, messages.MemoryPreference
	ver.Taint = messages.TaintAuth
	ver.CreatedAt = time.Date(2024, 12, 31, 23, 59, 59, 1, time.FixedZone("", 5*3600+30*60))
	ver.UpdatedAt = ver.CreatedAt.Add(time.Hour)
	ver.ValidFrom, ver.ValidUntil = ptr(memT0.Add(-time.Hour)), ptr(memT0.Add(24*time.Hour))
	ver.LastAccessed, ver.AccessCount = ptr(memT0.Add(time.Minute)), 7
	ver.SemanticTags, ver.EntityRefs, ver.CausalRefs = []string{"behavior:tea"}, []string{"person:owner"}, []string{"ext-1"}
	ver.TemporalNext, ver.TemporalPrev, ver.SessionID = ptr("con-1"), ptr(""), ptr("sess-9")

	con := item("con-1", "never send money without asking")
	con.TrustLevel, con.MemoryType = messages.TrustConstitutional, messages.MemoryDecision

	return map[string][]messages.MemoryItem{
		"owner":       {con, ext, ver},
		"group/a\x01": {item("g1", "group fact")},
	}
}

func seed(t *testing.T, dataDir string, items map[string][]messages.MemoryItem) {
	t.Helper()
	for scope, its := range items {
		put(t, dataDir, scope, its...)
	}
}

func TestMemoryExportImportRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stdio bool // through stdout and stdin instead of a file
	}{{"file", false}, {"stdio", true}} {
		t.Run(tc.name, func(t *testing.T) {
			src, dst := t.TempDir(), t.TempDir()
			seed(t, src, richItems())
			bundle := filepath.Join(t.TempDir(), "memories.jsonl")

			var stdin string
			if tc.stdio {
				out, errOut, err := runCLIIO(t, "", "memory", "export", "--data-dir", src)
				if err != nil {
					t.Fatalf("export: %v\n%s", err, errOut)
				}
				if want := "exported 4 memories from 2 scopes to standard output"; !strings.Contains(errOut, want) {
					t.Fatalf("export summary %q, want %q", errOut, want)
				}
				stdin = out
			} else {
				out, errOut, err := runCLIIO(t, "", "memory", "export", "--data-dir", src, "--out", bundle)
				if err != nil || !strings.Contains(out, "exported 4 memories from 2 scopes to "+bundle) {
					t.Fatalf("export: %v\n%s%s", err, out, errOut)
				}
				if fi, err := os.Stat(bundle); err != nil || fi.Mode().Perm() != 0o600 {
					t.Fatalf("bundle file: %v, %v; want mode 0600", fi, err)
				}
			}

			// The fresh target also holds memories a replace must clear
			// (same scope) or keep (another scope).
			put(t, dst, "owner", item("stale", "to be replaced"))
			put(t, dst, "other", item("kept", "not in the bundle"))
			args := []string{"memory", "import", "--replace", "--data-dir", dst}
			if !tc.stdio {
				args = append(args, "--in", bundle)
			}
			out, errOut, err := runCLIIO(t, stdin, args...)
			if err != nil || !strings.Contains(out, "imported 4 memories into 2 scopes") {
				t.Fatalf("import: %v\n%s%s", err, out, errOut)
			}

			want, got := dump(t, src), dump(t, dst)
			if kept := got["other"]; len(kept) != 1 || kept[0].MemoryID != "kept" {
				t.Errorf("scope outside the bundle = %+v, want it untouched", kept)
			}
			delete(got, "other")
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("imported items differ:\n got %+v\nwant %+v", got, want)
			}
			// Spot-check that the rich fields really made it.
			ext := got["owner"][1]
			if ext.Taint != messages.TaintExternal || ext.TrustLevel != messages.TrustWorking ||
				ext.ReingestionTier != messages.TierLowReingestion || ext.Embedding[2] != 3.4028235e38 || ext.SemanticTags == nil {
				t.Errorf("external item after import = %+v", ext)
			}
		})
	}
}

func TestMemoryImportMerge(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	newer := item("m1", "new content")
	newer.TrustLevel = messages.TrustVerified
	put(t, src, "owner", newer, item("m2", "only in bundle"))
	put(t, dst, "owner", item("m1", "old content"), item("m9", "only in target"))
	bundle := filepath.Join(t.TempDir(), "b.jsonl")
	if _, errOut, err := runCLIIO(t, "", "memory", "export", "--data-dir", src, "--out", bundle); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	out, errOut, err := runCLIIO(t, "", "memory", "import", "--merge", "--data-dir", dst, "--in", bundle)
	if err != nil || !strings.Contains(out, "(merged)") {
		t.Fatalf("import --merge: %v\n%s%s", err, out, errOut)
	}
	got := dump(t, dst)["owner"]
	want := []messages.MemoryItem{dump(t, src)["owner"][0], dump(t, src)["owner"][1], item("m9", "only in target")}
	if len(got) != 3 || !reflect.DeepEqual(got[:2], want[:2]) || got[2].MemoryID != "m9" || got[2].Content != want[2].Content {
		t.Fatalf("after merge:\n got %+v\nwant %+v", got, want)
	}
}

// line encodes v as one bundle line.
func line(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func TestMemoryImportRefusesBadBundles(t *testing.T) {
	hdr := func(count int, scopes ...string) bundleHeader {
		return bundleHeader{BundleVersion: bundleFormat, ExportedAt: memT0, SchemaVersion: persistence.SchemaVersion(), Scopes: scopes, Count: count}
	}
	good := func(id string) bundleRecord { return bundleRecord{Scope: "owner", Item: item(id, "fine")} }
	laundered := good("bad")
	laundered.Item.Taint, laundered.Item.TrustLevel = messages.TaintExternal, messages.TrustVerified
	for _, tc := range []struct {
		name   string
		bundle func(t *testing.T) string
		want   string
	}{
		{"unknown format", func(t *testing.T) string {
			return line(t, map[string]any{"bundle_version": "jsonl-v9", "count": 0}) + line(t, good("a"))
		}, `line 1: bundle version "jsonl-v9" is not supported`},
		{"not a header", func(t *testing.T) string { return line(t, good("a")) }, "line 1: not a memory bundle header"},
		{"empty", func(*testing.T) string { return "\n\n" }, "the bundle is empty"},
		{"external item as verified", func(t *testing.T) string {
			return line(t, hdr(3, "owner")) + line(t, good("a")) + line(t, laundered) + line(t, good("c"))
		}, "line 3: memory item bad: external-tainted content cannot be verified"},
		{"invalid JSON", func(t *testing.T) string {
			return line(t, hdr(2, "owner")) + line(t, good("a")) + "{\"scope\":\n"
		}, "line 3: invalid JSON"},
		{"unknown field", func(t *testing.T) string {
			return line(t, hdr(1, "owner")) + `{"scope":"owner","item":{"memory_id":"a","surprise":1}}` + "\n"
		}, `line 2: invalid JSON: json: unknown field "surprise"`},
		{"scope not in header", func(t *testing.T) string {
			return line(t, hdr(2, "owner")) + line(t, good("a")) + line(t, bundleRecord{Scope: "elsewhere", Item: item("b", "x")})
		}, `line 3: scope "elsewhere" is not listed`},
		{"duplicate memory_id", func(t *testing.T) string {
			return line(t, hdr(2, "owner")) + line(t, good("a")) + "\n" + line(t, good("a"))
		}, `line 4: memory_id "a" of scope "owner" already appears on line 2`},
		{"truncated", func(t *testing.T) string {
			return line(t, hdr(3, "owner")) + line(t, good("a")) + line(t, good("b"))
		}, "the header announces 3 items but the bundle holds 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := t.TempDir()
			put(t, dst, "owner", item("existing", "must survive a refused import"))
			before := dump(t, dst)
			_, _, err := runCLIIO(t, tc.bundle(t), "memory", "import", "--replace", "--data-dir", dst)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was imported") {
				t.Fatalf("import error = %v, want it to contain %q", err, tc.want)
			}
			if after := dump(t, dst); !reflect.DeepEqual(after, before) {
				t.Fatalf("a refused import changed the database:\n got %+v\nwant %+v", after, before)
			}
		})
	}
}

func TestMemoryCommandErrors(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "owner", item("a", "x"))
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"no subcommand", []string{"memory"}, 2, "subcommands are export, import and reindex"},
		{"unknown subcommand", []string{"memory", "dump"}, 2, "subcommands are export, import and reindex"},
		{"reindex without a database", []string{"memory", "reindex", "--data-dir", t.TempDir()}, 1, "no database at"},
		{"import without mode", []string{"memory", "import", "--data-dir", dir}, 2, "exactly one of --merge"},
		{"import with both modes", []string{"memory", "import", "--merge", "--replace", "--data-dir", dir}, 2, "exactly one of --merge"},
		{"export without a database", []string{"memory", "export", "--data-dir", t.TempDir()}, 1, "no database at"},
		{"missing bundle file", []string{"memory", "import", "--merge", "--data-dir", dir, "--in", filepath.Join(dir, "nope.jsonl")}, 1, "open bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLIIO(t, "", tc.args...)
			if err == nil || exitCode(err) != tc.wantCode || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v (exit %d), want exit %d containing %q", err, exitCode(err), tc.wantCode, tc.want)
			}
		})
	}

	t.Run("database held by the daemon", func(t *testing.T) {
		db, err := persistence.Open(t.Context(), persistence.Options{Dir: filepath.Join(dir, "db")})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, _, err = runCLIIO(t, "", "memory", "export", "--data-dir", dir, "--out", filepath.Join(dir, "b.jsonl"))
		if err == nil || !strings.Contains(err.Error(), "stop it first") {
			t.Fatalf("export while the database is open elsewhere: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "b.jsonl")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a failed export left a bundle file: %v", err)
		}
	})
}

// `silas memory reindex` rebuilds the index of one scope or of all: search
// still finds every item by stem, and the items themselves do not change.
func TestMemoryReindexCommand(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "owner", item("tea", "Alice drinks green tea every morning"), item("cat", "The owner adopted a cat named Miso"))
	put(t, dir, "c-1", item("parcel", "The parcel arrives on Monday"))
	search := func(scope, q string) []string {
		var ids []string
		withDB(t, dir, func(m persistence.Memory) {
			res, err := m.Search(t.Context(), scope, q, persistence.SearchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				ids = append(ids, r.Item.MemoryID)
			}
		})
		return ids
	}
	before := dump(t, dir)
	// One scope, then every scope.
	out, _, err := runCLIIO(t, "", "memory", "reindex", "--data-dir", dir, "--scope", "owner")
	if err != nil || !strings.Contains(out, "reindexed 2 memories in 1 scope") {
		t.Fatalf("reindex --scope owner: %v, %q", err, out)
	}
	out, _, err = runCLIIO(t, "", "memory", "reindex", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "reindexed 3 memories in 2 scopes") {
		t.Fatalf("reindex: %v, %q", err, out)
	}
	if got := search("owner", "cats"); !reflect.DeepEqual(got, []string{"cat"}) {
		t.Errorf("search cats after reindex = %v", got)
	}
	if got := search("c-1", "parcels"); !reflect.DeepEqual(got, []string{"parcel"}) {
		t.Errorf("search parcels after reindex = %v", got)
	}
	if after := dump(t, dir); !reflect.DeepEqual(after, before) {
		t.Fatalf("reindex changed the items:\n got %+v\nwant %+v", after, before)
	}
}
