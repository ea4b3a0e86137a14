package manifest_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/silas-ai/silas/skills/manifest"
)

func sampleFS() fstest.MapFS {
	return fstest.MapFS{
		"SKILL.md":           {Data: []byte("---\nname: demo\n---\nbody\n")},
		"scripts/run.py":     {Data: []byte("print('hi')\n")},
		"scripts/lib/x.py":   {Data: []byte("X = 1\n")},
		"references/a.md":    {Data: []byte("# A\n")},
		"assets/data.json":   {Data: []byte("{}\n")},
		"scripts/a.txt":      {Data: []byte("")},
		"scripts/lib.py":     {Data: []byte("Y = 2\n")},
		"references/.hidden": {Data: []byte("hidden files count too\n")},
	}
}

// goldenHash pins the skill hash of sampleFS (name demo, version 1.0.0):
// it is bound into approvals and stored records, so it must never change
// for the same bytes. It was reproduced independently in Python:
// sha256(json.dumps({"kind": "silas.skill.v1", "name": ..., "version": ...,
// "files": [{"path", "sha256"} sorted by path]}, sort_keys=True,
// separators=(",", ":"), ensure_ascii=False)).
const goldenHash = "6ea8f8ebf4b66467b99626be0e9929646c7d332fe892ac209bfad2dc138b797a"

func TestSkillHashGoldenAndStable(t *testing.T) {
	m, err := manifest.Build(sampleFS(), "demo", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if m.Hash != goldenHash {
		t.Fatalf("skill hash %s, want the golden %s (changing the hash projection invalidates every approval)", m.Hash, goldenHash)
	}
	for i := 1; i < len(m.Files); i++ {
		if m.Files[i-1].Path >= m.Files[i].Path {
			t.Fatalf("files not in byte order: %q then %q", m.Files[i-1].Path, m.Files[i].Path)
		}
	}
	// The same tree on disk hashes the same.
	dir := t.TempDir()
	for p, f := range sampleFS() {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	es, err := manifest.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := manifest.New("demo", "1.0.0", es)
	if err != nil || m2.Hash != m.Hash {
		t.Fatalf("disk hash %s %v, want %s", m2.Hash, err, m.Hash)
	}
	if err := m.Check(); err != nil {
		t.Fatalf("check: %v", err)
	}
	// Name and version are part of the identity.
	for _, nv := range [][2]string{{"demo2", "1.0.0"}, {"demo", "1.0.1"}} {
		other, _ := manifest.Build(sampleFS(), nv[0], nv[1])
		if other.Hash == m.Hash {
			t.Fatalf("%v hashes like demo 1.0.0", nv)
		}
	}
}

func TestCompareNamesTheChangedFile(t *testing.T) {
	want, err := manifest.Build(sampleFS(), "demo", "1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mutate func(fstest.MapFS)
		path   string
		change string
	}{
		{"one byte", func(m fstest.MapFS) { m["scripts/run.py"] = &fstest.MapFile{Data: []byte("print('hI')\n")} }, "scripts/run.py", manifest.ChangeModified},
		{"appended newline", func(m fstest.MapFS) { m["references/a.md"] = &fstest.MapFile{Data: []byte("# A\n\n")} }, "references/a.md", manifest.ChangeModified},
		{"added pyc", func(m fstest.MapFS) {
			m["scripts/__pycache__/run.cpython-311.pyc"] = &fstest.MapFile{Data: []byte("x")}
		}, "scripts/__pycache__/run.cpython-311.pyc", manifest.ChangeAdded},
		{"removed", func(m fstest.MapFS) { delete(m, "assets/data.json") }, "assets/data.json", manifest.ChangeRemoved},
		{"renamed", func(m fstest.MapFS) { m["scripts/run2.py"] = m["scripts/run.py"]; delete(m, "scripts/run.py") }, "scripts/run.py", manifest.ChangeRemoved},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := sampleFS()
			c.mutate(fsys)
			got, err := manifest.Build(fsys, "demo", "1")
			if err != nil {
				t.Fatal(err)
			}
			err = manifest.Compare(want, got)
			var ce *manifest.ChangedError
			if !errors.Is(err, manifest.ErrChanged) || !errors.As(err, &ce) {
				t.Fatalf("compare: %v, want ErrChanged", err)
			}
			if ce.Path != c.path || ce.Change != c.change || !strings.Contains(err.Error(), c.path) {
				t.Fatalf("got %+v (%v), want %s %s", ce, err, c.change, c.path)
			}
		})
	}
	same, _ := manifest.Build(sampleFS(), "demo", "1")
	if err := manifest.Compare(want, same); err != nil {
		t.Fatalf("unchanged skill: %v", err)
	}
	bumped, _ := manifest.Build(sampleFS(), "demo", "2")
	if err := manifest.Compare(want, bumped); !errors.Is(err, manifest.ErrChanged) {
		t.Fatalf("version change: %v", err)
	}
}

func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.ReadDir(dir); !errors.Is(err, manifest.ErrUnreadable) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("symlink to outside: %v", err)
	}
	if _, err := manifest.Read(os.DirFS(dir)); !errors.Is(err, manifest.ErrUnreadable) {
		t.Fatalf("symlink through DirFS: %v", err)
	}

	big := fstest.MapFS{"SKILL.md": {Data: make([]byte, manifest.MaxFileBytes+1)}}
	if _, err := manifest.Read(big); !errors.Is(err, manifest.ErrUnreadable) {
		t.Fatalf("oversized file: %v", err)
	}
	many := fstest.MapFS{}
	for i := 0; i <= manifest.MaxFiles; i++ {
		many[filepath.Join("assets", strings.Repeat("a", 1+i%50)+string(rune('a'+i%26))+"-"+itoa(i))] = &fstest.MapFile{Data: []byte("x")}
	}
	if _, err := manifest.Read(many); !errors.Is(err, manifest.ErrUnreadable) {
		t.Fatalf("too many files: %v", err)
	}
	ctrl := fstest.MapFS{"assets/a\nb": {Data: []byte("x")}}
	if _, err := manifest.Read(ctrl); !errors.Is(err, manifest.ErrUnreadable) {
		t.Fatalf("control character in path: %v", err)
	}
}

func TestCheckRejectsTamperedManifest(t *testing.T) {
	m, err := manifest.Build(sampleFS(), "demo", "1")
	if err != nil {
		t.Fatal(err)
	}
	bad := m
	bad.Files = append([]manifest.File(nil), m.Files...)
	bad.Files[0].SHA256 = strings.Repeat("0", 64)
	if err := bad.Check(); err == nil {
		t.Fatal("a manifest whose file hash was changed still checks")
	}
	bad = m
	bad.Version = "2"
	if err := bad.Check(); err == nil {
		t.Fatal("a manifest whose version was changed still checks")
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"a", "coding", "skill-maker", "m365-outlook", "a1-b2-c3", strings.Repeat("a", 64)} {
		if err := manifest.ValidName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Coding", "-a", "a-", "a--b", "a_b", "a b", "a/b", "..", "ä", strings.Repeat("a", 65), "a\x00"} {
		if err := manifest.ValidName(bad); !errors.Is(err, manifest.ErrInvalidName) {
			t.Errorf("%q: %v, want ErrInvalidName", bad, err)
		}
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{digits[i%10]}, b...)
	}
	return string(b)
}
