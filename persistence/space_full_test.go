package persistence

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// envFullDiskDir makes the test binary run fullDiskWriter instead of the
// tests: Badger's writes must happen in a process that exits, since a
// database left open holds its directory lock until the process ends.
const envFullDiskDir = "SILAS_TEST_FULL_DISK_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envFullDiskDir); dir != "" {
		if err := fullDiskWriter(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fullDiskWriter opens a DB in dir/db, fills dir's file system to the last
// block with another file, then commits 1,000 chronicle items (10 MB, less
// than a memtable) and closes. Without the write-ahead log allocated up
// front the first commit is a SIGBUS; without Close's room check the
// memtable flush is.
func fullDiskWriter(dir string) error {
	// A watermark turns the protections on; the monitor measures only at
	// Open (with room), so that the writes below meet a full disk that
	// the store has not noticed yet.
	db, err := Open(context.Background(), Options{Dir: filepath.Join(dir, "db"), SyncWrites: true, MinFreeBytes: 1 << 20, spaceInterval: time.Hour})
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		return err
	}
	for _, size := range []int{1 << 20, 4096} {
		chunk := make([]byte, size)
		for {
			if _, err := f.Write(chunk); err != nil {
				break
			}
		}
	}
	f.Close()
	if free, _ := freeBytes(dir); free != 0 {
		return fmt.Errorf("the filler left %d bytes free", free)
	}
	item := ctxItem("x", 1)
	item.Content = strings.Repeat("y", 10000)
	for i := range 1000 {
		item.CtxID = fmt.Sprint("c", i)
		if err := db.Chronicle().Append(context.Background(), "s1", item); err != nil {
			return fmt.Errorf("append %d on a full disk: %w", i, err)
		}
	}
	fmt.Println("close:", db.Close())
	return nil
}

// TestFullDiskIsAnErrorNotACrash: a disk that another process fills to
// the last block does not crash the store (SIGBUS): writes into the
// allocated write-ahead log go on, Close leaves the memtable to the log
// instead of flushing it, and the next start finds every write.
func TestFullDiskIsAnErrorNotACrash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=100m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envFullDiskDir+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the writer on a full disk failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "close: close: persistence: the disk is almost full") {
		t.Fatalf("Close on a full disk did not say so:\n%s", out)
	}
	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
	db, err := Open(t.Context(), Options{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	assertGapFree(t, "s1", chronicleSeqs(t, db, "s1"), 1000)
}
