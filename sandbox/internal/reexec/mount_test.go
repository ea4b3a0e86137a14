package reexec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureMountpoint(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		path    string
		dir     bool
		wantErr string
	}{
		{"new directories", "/a/b/c", true, ""},
		{"new file in new directories", "/d/e/f.txt", false, ""},
		{"existing directory", "/a/b", true, ""},
		{"root", "/", true, ""},
		{"through a symlink", "/escape/x", true, "symlink"},
		{"onto a symlink", "/escape", true, "symlink"},
		{"through a file", "/file/x", true, "not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ensureMountpoint(root, tc.path, tc.dir)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				fi, err := os.Stat(root + tc.path)
				if err != nil || fi.IsDir() != tc.dir {
					t.Fatalf("%s: %v, dir=%v; want dir=%v", tc.path, err, fi != nil && fi.IsDir(), tc.dir)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Fatalf("a mount point was created outside the root: %v", entries)
	}
}

func TestParentOf(t *testing.T) {
	for in, want := range map[string]string{"/bin": "/", "/usr/bin": "/usr", "/a/b/c": "/a/b"} {
		if got := parentOf(in); got != want {
			t.Errorf("parentOf(%q) = %q, want %q", in, got, want)
		}
	}
}
