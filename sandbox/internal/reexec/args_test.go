package reexec

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/silas-ai/silas/sandbox/internal/layout"
)

func TestLimitsRoundTrip(t *testing.T) {
	l := Limits{MemoryBytes: 512 << 20, CPUSeconds: 60, FileSizeBytes: 1 << 30}
	args := HelperArgs(l, HelperOptions{}, []string{"python3", "-c", "--"})[1:]
	cfg, argv, err := parseHelperArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	lims := cfg.lims
	if fmt.Sprint(argv) != "[python3 -c --]" {
		t.Fatalf("argv %q", argv)
	}
	want := map[int]unix.Rlimit{
		unix.RLIMIT_AS:     {Cur: 512 << 20, Max: 512 << 20},
		unix.RLIMIT_CPU:    {Cur: 60, Max: 61},
		unix.RLIMIT_FSIZE:  {Cur: 1 << 30, Max: 1 << 30},
		unix.RLIMIT_NOFILE: {Cur: DefaultOpenFiles, Max: DefaultOpenFiles},
		unix.RLIMIT_CORE:   {},
	}
	if len(lims) != len(want) {
		t.Fatalf("limits %v, want %v", lims, want)
	}
	for _, r := range lims {
		if w, ok := want[r.resource]; !ok || w != r.lim {
			t.Fatalf("resource %d: %v, want %v", r.resource, r.lim, w)
		}
	}
}

func TestHelperOptionsRoundTrip(t *testing.T) {
	o := HelperOptions{Seccomp: true, Drop: &Drop{UID: 2_000_000_001, GID: 2_000_000_001, Stage: []string{"/data/sandbox/work/sbx-1", "/a=b"}}}
	cfg, argv, err := parseHelperArgs(HelperArgs(Limits{}, o, []string{"bwrap", "--", "true"})[1:])
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.seccomp || fmt.Sprint(*cfg.drop) != fmt.Sprint(*o.Drop) || fmt.Sprint(argv) != "[bwrap -- true]" {
		t.Fatalf("got seccomp=%v drop=%+v argv=%q, want %+v", cfg.seccomp, cfg.drop, argv, o)
	}
}

func TestParseHelperArgsRefuses(t *testing.T) {
	cases := [][]string{
		{"as=1", "python3"},
		{"as=1", "--"},
		{"as=x", "--", "true"},
		{"stack=1", "--", "true"},
		{"as", "--", "true"},
		{"seccomp=0", "--", "true"},
		{"stage=/x", "--", "true"},
		{"uid=0", "gid=0", "--", "true"},
		{"uid=5", "--", "true"},
		{"uid=5", "gid=5", "stage=relative", "--", "true"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if _, _, err := parseHelperArgs(args); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestInitArgsRoundTrip(t *testing.T) {
	c := InitConfig{
		Entries:  layout.For("/data/sandbox/work/sbx-1", true, []string{"/srv/a=b"}, []string{"/srv/out"}),
		Network:  true,
		Trees:    true,
		TmpBytes: 256 << 20,
	}
	helper := HelperArgs(Limits{MemoryBytes: 1 << 30}, HelperOptions{Seccomp: true}, []string{"sh", "-c", "--"})
	args := InitArgs(c, helper)
	if args[0] != InitName {
		t.Fatalf("argv[0] %q, want %q", args[0], InitName)
	}
	got, gotHelper, err := parseInitArgs(args[1:])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Entries, c.Entries) || got.Network != c.Network || got.Trees != c.Trees || got.TmpBytes != c.TmpBytes {
		t.Fatalf("got %+v, want %+v", got, c)
	}
	if !slices.Equal(gotHelper, helper) {
		t.Fatalf("helper argv %q, want %q", gotHelper, helper)
	}
	if got.workDir() != "/data/sandbox/work/sbx-1" {
		t.Fatalf("work dir %q", got.workDir())
	}
}

func TestParseInitArgsRefuses(t *testing.T) {
	cases := [][]string{
		{"work=/w", "tmpsize=1"},
		{"work=/w", "tmpsize=1", "--"},
		{"tmpsize=1", "--", "true"},
		{"work=relative", "tmpsize=1", "--", "true"},
		{"work=/w", "tmpsize=0", "--", "true"},
		{"work=/w", "net=0", "--", "true"},
		{"work=/w", "mystery=1", "--", "true"},
		{"work", "--", "true"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if _, _, err := parseInitArgs(args); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestParseReport(t *testing.T) {
	cases := []struct {
		line string
		want Report
		ok   bool
	}{
		{"exit 0", Report{Exited: true}, true},
		{"exit 9", Report{Exited: true, WaitStatus: 9}, true},
		{"fail network lo: denied", Report{Failure: FailNetwork, Message: "lo: denied"}, true},
		{"fail setup mount /usr: EPERM", Report{Failure: FailSetup, Message: "mount /usr: EPERM"}, true},
		{"fail other x", Report{}, false},
		{"exit -1", Report{}, false},
		{"", Report{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			got, err := ParseReport(tc.line)
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v (ok %v)", got, err, tc.want, tc.ok)
			}
		})
	}
}
