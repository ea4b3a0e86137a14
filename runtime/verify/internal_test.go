package verify

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateOutput(t *testing.T) {
	cases := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"cut", "abcdefgh", 5, "abcde"},
		{"multibyte counted as characters", "ééééééé", 3, "ééé"},
		{"invalid UTF-8 replaced", "a\xffb", 5, "a\uFFFDb"},
		{"empty", "", 5, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := truncateOutput([]byte(tc.in), tc.max)
			if got != tc.want || !utf8.ValidString(got) {
				t.Fatalf("truncateOutput(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
		})
	}
}

func TestRewriteLink(t *testing.T) {
	cases := []struct {
		name, link, rel, want string
	}{
		{"relative kept", "../x", "a/l", "../x"},
		{"outside kept", "/etc/passwd", "l", "/etc/passwd"},
		{"into the root at top level", "/exec/x", "l", "x"},
		{"into the root from a subdir", "/exec/c/d", "a/b/l", "../../c/d"},
		{"the root itself", "/exec", "a/l", ".."},
		{"through the alias", "/alias/x", "l", "x"},
		{"a sibling with a common prefix", "/execution/x", "l", "/execution/x"},
		{"unclean inside", "/exec/./c//d", "l", "c/d"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := rewriteLink(tc.link, tc.rel, "/exec", "/alias"); got != tc.want {
				t.Fatalf("rewriteLink(%q, %q) = %q, want %q", tc.link, tc.rel, got, tc.want)
			}
		})
	}
}

func TestFileExistsOnHost(t *testing.T) {
	work := t.TempDir()
	project := t.TempDir()
	other := t.TempDir()
	mustWrite := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mustLink := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(filepath.Join(work, "in.txt"))
	mustWrite(filepath.Join(project, "p.txt"))
	mustWrite(filepath.Join(other, "secret"))
	mustLink(filepath.Join(project, "p.txt"), filepath.Join(work, "to-project"))
	mustLink(filepath.Join(other, "secret"), filepath.Join(work, "to-other"))
	mustLink("../"+filepath.Base(other)+"/secret", filepath.Join(work, "relative-escape"))
	// A project dir named through a symlink still allows its files.
	viaLink := filepath.Join(t.TempDir(), "project-link")
	mustLink(project, viaLink)

	cases := []struct {
		name       string
		path       string
		projects   []string
		wantPass   bool
		wantReason string
	}{
		{"relative file", "in.txt", nil, true, "exists"},
		{"the work dir itself", ".", nil, true, "exists"},
		{"missing", "nope", nil, false, "does not exist"},
		{"absolute in project", filepath.Join(project, "p.txt"), []string{project}, true, "exists"},
		{"absolute in a project named by a symlink", filepath.Join(viaLink, "p.txt"), []string{viaLink}, true, "exists"},
		{"absolute in a dir that is not a project", filepath.Join(other, "secret"), []string{project}, false, "outside the allowed directories"},
		{"link to a project file", "to-project", []string{project}, true, "exists"},
		{"link to a project file without the project", "to-project", nil, false, "resolves outside"},
		{"link elsewhere", "to-other", []string{project}, false, "resolves outside"},
		{"relative link escaping", "relative-escape", nil, false, "resolves outside"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pass, reason := fileExists(tc.path, work, tc.projects)
			if pass != tc.wantPass || !strings.Contains(reason, tc.wantReason) {
				t.Fatalf("fileExists(%q) = %v, %q; want %v with %q", tc.path, pass, reason, tc.wantPass, tc.wantReason)
			}
		})
	}
}

// fakeEntry is an fs.DirEntry of a given kind, for skipArtifact.
type fakeEntry struct {
	name string
	dir  bool
}

func (e fakeEntry) Name() string { return e.name }
func (e fakeEntry) IsDir() bool  { return e.dir }
func (e fakeEntry) Type() fs.FileMode {
	if e.dir {
		return fs.ModeDir
	}
	return 0
}
func (e fakeEntry) Info() (fs.FileInfo, error) { return nil, fs.ErrInvalid }

func TestSkipArtifact(t *testing.T) {
	cases := []struct {
		rel  string
		dir  bool
		want bool
	}{
		{"node_modules", true, true},
		{"a/b/node_modules", true, true},
		{"node_modules", false, true},
		{"node_modules_notes.txt", false, false},
		{".git", true, false},
		{".git", false, true},
		{"sub/.git", false, true},
		{".git/config", false, true},
		{".git/config.worktree", false, true},
		{".git/hooks", true, true},
		{".git/commondir", false, true},
		{"sub/.git/config", false, true},
		{".git/modules/m/config", false, true},
		{".git/modules/m/hooks", true, true},
		{".git/worktrees/w/commondir", false, true},
		{".git/refs/heads/config", false, false},
		{".git/logs/refs/heads/hooks", false, false},
		{".git/HEAD", false, false},
		{".git/index", false, false},
		{"config", false, false},
		{"hooks", true, false},
		{"src/config", false, false},
	}
	for _, tc := range cases {
		if got := skipArtifact(tc.rel, fakeEntry{name: filepath.Base(tc.rel), dir: tc.dir}); got != tc.want {
			t.Errorf("skipArtifact(%q, dir=%v) = %v, want %v", tc.rel, tc.dir, got, tc.want)
		}
	}
}
