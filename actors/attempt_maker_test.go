package actors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHarvestStagedSkills(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("daemon data"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, root, rel, data string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, work string)
		want  map[string]string // skill name -> "" (taken) or a problem substring
	}{
		{"nothing staged", func(*testing.T, string) {}, map[string]string{}},
		{"one skill", func(t *testing.T, work string) {
			write(t, work, "staging/greeter/SKILL.md", "---\nname: greeter\n---\n")
			write(t, work, "staging/greeter/scripts/hello.py", "print('hi')\n")
		}, map[string]string{"greeter": ""}},
		{"a symlinked skill dir", func(t *testing.T, work string) {
			write(t, work, "staging/.keep", "")
			if err := os.Symlink(outside, filepath.Join(work, "staging", "leak")); err != nil {
				t.Fatal(err)
			}
		}, map[string]string{".keep": "not a directory", "leak": "not a directory"}},
		{"a symlink inside the skill", func(t *testing.T, work string) {
			write(t, work, "staging/greeter/SKILL.md", "x")
			if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(work, "staging", "greeter", "secret")); err != nil {
				t.Fatal(err)
			}
		}, map[string]string{"greeter": "symlink"}},
		{"a bad name", func(t *testing.T, work string) {
			write(t, work, "staging/Bad_Name/SKILL.md", "x")
		}, map[string]string{"Bad_Name": "name"}},
		{"the staging dir is a symlink", func(t *testing.T, work string) {
			if err := os.MkdirAll(filepath.Join(outside, "greeter"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(work, "staging")); err != nil {
				t.Fatal(err)
			}
		}, nil}, // an error: nothing is taken from outside the work dir
		{"too many", func(t *testing.T, work string) {
			for _, n := range []string{"a", "b", "c", "d", "e"} {
				write(t, work, "staging/"+n+"/SKILL.md", "x")
			}
		}, map[string]string{"a": "", "b": "", "c": "", "d": "", "e": "only 4 skills"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			tt.setup(t, work)
			got, err := harvestStagedSkills(work)
			if tt.want == nil {
				if err == nil {
					t.Fatalf("harvest through a symlinked staging dir took %d skills, want an error", len(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("took %d skills %+v, want %v", len(got), got, tt.want)
			}
			for _, s := range got {
				want, ok := tt.want[s.name]
				switch {
				case !ok:
					t.Errorf("unexpected skill %q", s.name)
				case want == "" && (s.problem != "" || len(s.files) == 0):
					t.Errorf("%s: problem %q, %d files; want it taken", s.name, s.problem, len(s.files))
				case want != "" && !strings.Contains(s.problem, want):
					t.Errorf("%s: problem %q, want one about %q", s.name, s.problem, want)
				}
			}
		})
	}
}
