package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/silas-ai/silas/sandbox"
)

func TestCapture(t *testing.T) {
	cases := []struct {
		name      string
		r         io.Reader
		max       int
		want      string
		truncated bool
	}{
		{"under the cap", strings.NewReader("abc"), 10, "abc", false},
		{"at the cap", strings.NewReader("abcdefghij"), 10, "abcdefghij", false},
		{"past the cap", strings.NewReader("abcdefghijk"), 10, "abcdefghij", true},
		{"past the cap in one-byte reads", iotest.OneByteReader(strings.NewReader("abcdef")), 3, "abc", true},
		{"stream cut off", io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(os.ErrClosed)), 10, "ab", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(tc.max)
			c.readFrom(tc.r)
			if string(c.buf) != tc.want || c.truncated != tc.truncated {
				t.Fatalf("got %q truncated=%v, want %q truncated=%v", c.buf, c.truncated, tc.want, tc.truncated)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	cases := []struct {
		line     string
		reported bool
		ws       uint32
		err      error
	}{
		{"", false, 0, nil},
		{"exit 256", true, 256, nil},
		{"exit 9", true, 9, nil},
		{"fail setup mount /usr: permission denied", true, 0, sandbox.ErrBackendUnavailable},
		{"fail network loopback: operation not permitted", true, 0, sandbox.ErrNetworkIsolationUnavailable},
		{"exit x", false, 0, sandbox.ErrStart},
		{"fail disk full", false, 0, sandbox.ErrStart},
		{"hello", false, 0, sandbox.ErrStart},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			st, err := parseStatus(tc.line)
			if st.failure != nil {
				err = st.failure
			}
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) || st.reported != tc.reported || uint32(st.ws) != tc.ws {
				t.Fatalf("got %+v, %v; want reported=%v ws=%d err=%v", st, err, tc.reported, tc.ws, tc.err)
			}
		})
	}
}

func TestIDPool(t *testing.T) {
	p, err := NewIDPool(100_000, 2)
	if err != nil {
		t.Fatal(err)
	}
	a, errA := p.Acquire()
	b, errB := p.Acquire()
	if errA != nil || errB != nil || a == b {
		t.Fatalf("got %d (%v) and %d (%v), want two different ids", a, errA, b, errB)
	}
	if _, err := p.Acquire(); !errors.Is(err, sandbox.ErrBackendUnavailable) {
		t.Fatalf("exhausted pool: want ErrBackendUnavailable, got %v", err)
	}
	p.Release(a)
	if c, err := p.Acquire(); err != nil || c != a {
		t.Fatalf("after release got %d, %v; want %d", c, err, a)
	}
	for _, bad := range [][2]int{{0, 10}, {100_000, 0}, {1 << 31, 1}} {
		if _, err := NewIDPool(bad[0], bad[1]); !errors.Is(err, sandbox.ErrInvalidConfig) {
			t.Errorf("NewIDPool(%d, %d): want ErrInvalidConfig, got %v", bad[0], bad[1], err)
		}
	}
}

func TestCgroupLimits(t *testing.T) {
	dir := t.TempDir()
	c := Cgroup{Parent: dir, MemoryBytes: 64 << 20, Pids: 32}
	if err := c.writeLimits(dir); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"memory.max": "67108864", "memory.swap.max": "0", "pids.max": "32", "memory.oom.group": "1"}
	for name, v := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != v {
			t.Errorf("%s: %q, %v; want %q", name, b, err, v)
		}
	}
}

func TestProbeCgroupRefusesPlainDirectory(t *testing.T) {
	err := ProbeCgroup(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "cgroup v2") {
		t.Fatalf("want an error naming cgroup v2, got %v", err)
	}
}

func TestIsNamespaceErr(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{&os.PathError{Op: "fork/exec", Path: "/proc/self/exe", Err: syscall.EPERM}, true},
		{&os.PathError{Op: "fork/exec", Path: "/proc/self/exe", Err: syscall.EUSERS}, true},
		{&os.PathError{Op: "fork/exec", Path: "/proc/self/exe", Err: syscall.ENOENT}, false},
		{bytes.ErrTooLarge, false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.err), func(t *testing.T) {
			if got := isNamespaceErr(tc.err); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseStatusIDs(t *testing.T) {
	status := "Name:\tsh\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nThreads:\t7\n"
	uid, threads, ok := parseStatusIDs([]byte(status))
	if !ok || uid != 1000 || threads != 7 {
		t.Fatalf("got uid %d threads %d ok %v", uid, threads, ok)
	}
	if _, _, ok := parseStatusIDs([]byte("Name:\tx\n")); ok {
		t.Fatal("a status without Uid and Threads must not count")
	}
	if n := TasksOf(os.Getuid()); n < 1 {
		t.Fatalf("TasksOf(own uid) = %d, want at least this test", n)
	}
}
