package persistence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fakeDisk stands for the data dir's file system in watermark tests.
type fakeDisk struct {
	free atomic.Uint64
	fail atomic.Bool
}

func (f *fakeDisk) statfs(string) (uint64, error) {
	if f.fail.Load() {
		return 0, errors.New("statfs: input/output error")
	}
	return f.free.Load(), nil
}

// openWatermarked opens an on-disk DB whose free space is disk's.
func openWatermarked(t *testing.T, disk *fakeDisk, minFree int64) *DB {
	t.Helper()
	db, err := Open(t.Context(), Options{Dir: t.TempDir(), MinFreeBytes: minFree, spaceInterval: time.Millisecond, statfs: disk.statfs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestWatermarkRefusesNewMessagesAndRecovers(t *testing.T) {
	ctx := t.Context()
	disk := &fakeDisk{}
	disk.free.Store(1 << 30)
	db := openWatermarked(t, disk, 100<<20)
	q := db.Queue()
	if _, err := q.Enqueue(ctx, qrec("s1", "m1")); err != nil {
		t.Fatalf("enqueue above the watermark: %v", err)
	}

	disk.free.Store(40 << 20) // below the watermark, above a quarter of it
	checkFor(t, 10*time.Second, "the watermark to be seen", func() bool { return db.Space().Low() })
	_, err := q.Enqueue(ctx, qrec("s1", "m2"))
	if !errors.Is(err, ErrDiskFull) {
		t.Fatalf("enqueue below the watermark: %v, want ErrDiskFull", err)
	}
	for _, want := range []string{db.opts.Dir, "40 MB free", "persistence.min_free_mb (100 MB)", "free space"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if err := db.AcceptingWork(); !errors.Is(err, ErrDiskFull) {
		t.Errorf("AcceptingWork below the watermark = %v", err)
	}
	// A redelivery writes nothing and is still recognised.
	if dup, err := q.Enqueue(ctx, qrec("s1", "m1")); err != nil || !dup {
		t.Errorf("redelivery below the watermark: dup=%v err=%v", dup, err)
	}
	// Work already accepted goes on: its turn, its ack, the audit log.
	if err := db.Chronicle().Append(ctx, "s1", ctxItem("c1", 1)); err != nil {
		t.Errorf("chronicle below the watermark: %v", err)
	}
	if err := q.Ack(ctx, "s1", "m1"); err != nil {
		t.Errorf("ack below the watermark: %v", err)
	}
	if _, err := db.Audit().Append(ctx, auditEntries(1, "x")...); err != nil {
		t.Errorf("audit below the watermark: %v", err)
	}
	if recs, err := q.Pending(ctx); err != nil || len(recs) != 0 {
		t.Fatalf("a refused message was stored: %+v %v", recs, err)
	}

	disk.free.Store(1 << 30)
	checkFor(t, 10*time.Second, "the freed space to be seen", func() bool { return !db.Space().Low() })
	if _, err := q.Enqueue(ctx, qrec("s1", "m2")); err != nil {
		t.Fatalf("enqueue after space was freed: %v", err)
	}
	if err := db.AcceptingWork(); err != nil {
		t.Errorf("AcceptingWork after space was freed = %v", err)
	}
}

// TestCriticalSpaceRefusesEveryWrite: under a quarter of the watermark no
// write reaches Badger (it could not flush without room), reads go on,
// and writes resume once space is freed.
func TestCriticalSpaceRefusesEveryWrite(t *testing.T) {
	ctx := t.Context()
	disk := &fakeDisk{}
	disk.free.Store(1 << 30)
	db := openWatermarked(t, disk, 100<<20)
	if err := db.Chronicle().Append(ctx, "s1", ctxItem("c1", 1)); err != nil {
		t.Fatal(err)
	}

	disk.free.Store(20 << 20)
	checkFor(t, 10*time.Second, "critical space to be seen", func() bool { return db.Space().Critical() })
	writes := map[string]func() error{
		"chronicle": func() error { return db.Chronicle().Append(ctx, "s1", ctxItem("c2", 2)) },
		"audit":     func() error { _, err := db.Audit().Append(ctx, auditEntries(1, "x")...); return err },
		"probe":     func() error { return db.Probe(ctx) },
		"enqueue":   func() error { _, err := db.Queue().Enqueue(ctx, qrec("s1", "m1")); return err },
	}
	for name, w := range writes {
		if err := w(); !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "no write is taken") {
			t.Errorf("%s with 20 MB of a 100 MB watermark free: %v", name, err)
		}
	}
	if got := chronicleSeqs(t, db, "s1"); len(got) != 1 {
		t.Fatalf("reads while critical: %v", got)
	}

	disk.free.Store(60 << 20) // low, not critical: only new messages wait
	checkFor(t, 10*time.Second, "the space to leave critical", func() bool { return !db.Space().Critical() })
	if err := db.Chronicle().Append(ctx, "s1", ctxItem("c2", 2)); err != nil {
		t.Fatalf("chronicle below the watermark, above a quarter: %v", err)
	}
	if _, err := db.Queue().Enqueue(ctx, qrec("s1", "m1")); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("enqueue below the watermark: %v", err)
	}
}

func TestWatermarkOffAndUnmeasurable(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		name    string
		minFree int64
		fail    bool
	}{
		{"zero watermark is off", 0, false},
		{"a failed measurement refuses nothing", 100 << 20, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			disk := &fakeDisk{}
			disk.fail.Store(tc.fail)
			db := openWatermarked(t, disk, tc.minFree)
			if _, err := db.Queue().Enqueue(ctx, qrec("s1", "m1")); err != nil {
				t.Fatalf("enqueue: %v", err)
			}
			s := db.Space()
			if s.Low() || (s.Err != nil) != tc.fail {
				t.Fatalf("space = %+v", s)
			}
		})
	}
}

func TestInMemoryHasNoWatermark(t *testing.T) {
	h := newHarness(t, false)
	if s := h.db.Space(); s.Low() || s.MinFreeBytes != 0 {
		t.Fatalf("in-memory space = %+v", s)
	}
	if err := h.db.AcceptingWork(); err != nil {
		t.Fatal(err)
	}
	if err := h.db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.db.AcceptingWork(); !errors.Is(err, ErrClosed) {
		t.Fatalf("AcceptingWork after Close = %v", err)
	}
}

// TestWriteAheadLogIsAllocated: the memtable's log, which Badger creates
// sparse and writes through a mapping, has its blocks on disk once Open
// returns, so a write to it cannot fault when the disk fills up.
func TestWriteAheadLogIsAllocated(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(t.Context(), Options{Dir: dir, MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.space.noAlloc {
		t.Skip("this file system cannot fallocate; the watermark alone guards the log")
	}
	name, err := newestWAL(dir)
	if err != nil || name == "" {
		t.Fatalf("no memtable log in %s: %v", dir, err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, name), &st); err != nil {
		t.Fatal(err)
	}
	if allocated := st.Blocks * 512; allocated < st.Size {
		t.Fatalf("%s: %d of %d bytes allocated", name, allocated, st.Size)
	}
}

func TestNoWatermarkNoAllocation(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(t.Context(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !db.space.noAlloc || db.space.allocated != "" {
		t.Fatalf("allocated %q without a watermark", db.space.allocated)
	}
}

func TestNewestWAL(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"00001.mem", "00010.mem", "00002.mem", "00011.vlog", "x.mem", "MANIFEST"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := newestWAL(dir); err != nil || got != "00010.mem" {
		t.Fatalf("newestWAL = %q, %v", got, err)
	}
}

func TestENOSPCIsDiskFull(t *testing.T) {
	err := mapBadgerErr(fmt.Errorf("sync wal: %w", syscall.ENOSPC))
	if !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("mapped %v", err)
	}
}

func TestProbe(t *testing.T) {
	h := newHarness(t, true)
	if err := h.db.Probe(t.Context()); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if err := h.db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.db.Probe(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("probe after Close = %v", err)
	}
}
