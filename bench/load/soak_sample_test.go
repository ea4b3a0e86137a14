package load

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMeasureDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int{"a": 1000, "sub/b": 5000} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A sparse file, as Badger's preallocated ones: apparent, not allocated.
	f, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s, err := MeasureDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Apparent != 6000+1<<20 {
		t.Errorf("apparent %d, want %d", s.Apparent, 6000+1<<20)
	}
	if s.Allocated < 6000 || s.Allocated >= 1<<20 {
		t.Errorf("allocated %d: want the written blocks and not the hole", s.Allocated)
	}
	if _, err := MeasureDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing directory measured")
	}
}

func TestOpenFDs(t *testing.T) {
	before, err := OpenFDs(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	after, err := OpenFDs(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after != before+1 {
		t.Errorf("open files %d then %d: want one more", before, after)
	}
}
