package layout

import (
	"slices"
	"testing"
)

func TestFor(t *testing.T) {
	read, write := []string{"/srv/in"}, []string{"/srv/out"}
	got := For("/data/sandbox/work/sbx-1", false, read, write)
	if last := got[len(got)-1]; last != (Entry{Work, "/data/sandbox/work/sbx-1"}) {
		t.Fatalf("the work dir must come last, got %+v", last)
	}
	if !slices.Contains(got, Entry{Read, "/srv/in"}) || !slices.Contains(got, Entry{Write, "/srv/out"}) {
		t.Fatalf("filesystem paths missing: %+v", got)
	}
	if slices.Contains(got, Entry{Etc, "/etc/resolv.conf"}) {
		t.Fatal("resolv.conf without network access")
	}
	for _, e := range got {
		if e.Writable() != (e.Kind == Write || e.Kind == Work) {
			t.Fatalf("%+v: writable %v", e, e.Writable())
		}
	}
	if !slices.Contains(For("/w", true, nil, nil), Entry{Etc, "/etc/resolv.conf"}) {
		t.Fatal("resolv.conf missing with network access")
	}
}
