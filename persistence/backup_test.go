package persistence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fillForBackup writes one record of several stores.
func fillForBackup(t *testing.T, h *harness) {
	t.Helper()
	ctx := t.Context()
	if err := h.db.Chronicle().Append(ctx, "s1", ctxItem("c1", 1), ctxItem("c2", 1)); err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, h, qrec("s1", "m1"), false)
	if _, err := h.db.Audit().Append(ctx, auditEntries(3, "x")...); err != nil {
		t.Fatal(err)
	}
	if err := h.db.Sessions().Put(ctx, "tok", SessionRecord{ScopeID: "s1", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

func backupOf(t *testing.T, db *DB) ([]byte, BackupInfo) {
	t.Helper()
	var buf bytes.Buffer
	info, err := db.Backup(t.Context(), &buf)
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	return buf.Bytes(), info
}

func TestBackupRestoreRoundTrip(t *testing.T) {
	for _, onDisk := range []bool{true, false} {
		t.Run(fmt.Sprintf("disk=%v", onDisk), func(t *testing.T) {
			ctx := t.Context()
			src := newHarness(t, onDisk)
			fillForBackup(t, src)
			b, info := backupOf(t, src.db)
			if info.Bytes == 0 || len(info.SHA256) != 64 || info.Version == 0 {
				t.Fatalf("backup info %+v", info)
			}
			if got, err := VerifyBackup(bytes.NewReader(b)); err != nil || got != info {
				t.Fatalf("VerifyBackup = %+v, %v; Backup said %+v", got, err, info)
			}

			dir := filepath.Join(t.TempDir(), "restored")
			if got, err := Restore(ctx, bytes.NewReader(b), Options{Dir: dir}); err != nil || got != info {
				t.Fatalf("Restore = %+v, %v", got, err)
			}
			dst := &harness{t: t, dir: dir, opts: Options{Dir: dir}}
			dst.reopenFresh()
			if got := chronicleSeqs(t, dst.db, "s1"); len(got) != 2 {
				t.Fatalf("restored chronicle seqs %v", got)
			}
			if got := pendingIDs(t, dst); len(got) != 1 || got[0] != "s1/m1" {
				t.Fatalf("restored queue %v", got)
			}
			mustEnqueue(t, dst, qrec("s1", "m1"), true) // idempotency survives
			mustVerifyOK(t, dst, 3)
			if rec, err := dst.db.Sessions().Get(ctx, "tok"); err != nil || rec.ScopeID != "s1" {
				t.Fatalf("restored session %+v %v", rec, err)
			}
			// The restored store goes on where the original stopped.
			if err := dst.db.Chronicle().Append(ctx, "s1", ctxItem("c3", 2)); err != nil {
				t.Fatal(err)
			}
			assertGapFree(t, "s1", chronicleSeqs(t, dst.db, "s1"), 3)
			if _, err := dst.db.Audit().Append(ctx, auditEntries(1, "y")...); err != nil {
				t.Fatal(err)
			}
			mustVerifyOK(t, dst, 4)
		})
	}
}

// reopenFresh opens h.opts for a harness built by hand.
func (h *harness) reopenFresh() {
	h.t.Helper()
	db, err := Open(h.t.Context(), h.opts)
	if err != nil {
		h.t.Fatalf("open: %v", err)
	}
	h.db = db
	h.t.Cleanup(func() { _ = h.db.Close() })
}

// TestBackupWhileWriting: a backup taken under concurrent writes holds
// every write committed before it began, and a consistent chronicle.
func TestBackupWhileWriting(t *testing.T) {
	ctx := t.Context()
	src := newHarness(t, true)
	for i := range 50 {
		if err := src.db.Chronicle().Append(ctx, "s1", ctxItem(fmt.Sprintf("pre%d", i), i)); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := src.db.Chronicle().Append(ctx, fmt.Sprintf("w%d", w), ctxItem(fmt.Sprintf("c%d", i), i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	b, _ := backupOf(t, src.db)
	close(stop)
	wg.Wait()

	dir := filepath.Join(t.TempDir(), "restored")
	if _, err := Restore(ctx, bytes.NewReader(b), Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	dst := &harness{t: t, dir: dir, opts: Options{Dir: dir}}
	dst.reopenFresh()
	assertGapFree(t, "s1", chronicleSeqs(t, dst.db, "s1"), 50)
	for w := range 4 {
		seqs := chronicleSeqs(t, dst.db, fmt.Sprintf("w%d", w))
		assertGapFree(t, fmt.Sprintf("w%d", w), seqs, len(seqs))
	}
}

// TestBackupRefusesDamage: a backup cut anywhere, altered or with bytes
// appended is refused whole, and a failed restore leaves nothing behind.
func TestBackupRefusesDamage(t *testing.T) {
	src := newHarness(t, false)
	fillForBackup(t, src)
	good, _ := backupOf(t, src.db)
	flipped := bytes.Clone(good)
	flipped[len(backupMagic)+10] ^= 0xff
	cases := map[string][]byte{
		"empty":               nil,
		"not a backup":        []byte("hello, this is not a backup at all"),
		"magic only":          good[:len(backupMagic)],
		"cut in a frame":      good[:len(good)/2],
		"cut before its end":  good[:len(good)-4-32-8],
		"cut in the checksum": good[:len(good)-20],
		"one byte short":      good[:len(good)-1],
		"bytes appended":      append(bytes.Clone(good), 'x'),
		"a flipped byte":      flipped,
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := VerifyBackup(bytes.NewReader(b)); !errors.Is(err, ErrBadBackup) {
				t.Fatalf("VerifyBackup = %v, want ErrBadBackup", err)
			}
			parent := t.TempDir()
			dir := filepath.Join(parent, "restored")
			if _, err := Restore(t.Context(), bytes.NewReader(b), Options{Dir: dir}); !errors.Is(err, ErrBadBackup) {
				t.Fatalf("Restore = %v, want ErrBadBackup", err)
			}
			if _, serr := os.Stat(dir); !errors.Is(serr, os.ErrNotExist) {
				t.Fatalf("a failed restore left %s behind (%v)", dir, serr)
			}
		})
	}
}

func TestRestoreRefusesNonEmptyDir(t *testing.T) {
	src := newHarness(t, false)
	fillForBackup(t, src)
	b, _ := backupOf(t, src.db)
	dir := t.TempDir()
	keep := filepath.Join(dir, "important")
	if err := os.WriteFile(keep, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(t.Context(), bytes.NewReader(b), Options{Dir: dir}); !errors.Is(err, ErrRestoreTarget) {
		t.Fatalf("Restore into a non-empty dir = %v", err)
	}
	if got, err := os.ReadFile(keep); err != nil || string(got) != "mine" {
		t.Fatalf("the existing file changed: %q %v", got, err)
	}

	// An empty, existing directory is fine and stays after a failure.
	empty := t.TempDir()
	if _, err := Restore(t.Context(), bytes.NewReader(b[:len(b)/2]), Options{Dir: empty}); !errors.Is(err, ErrBadBackup) {
		t.Fatalf("Restore of a cut backup = %v", err)
	}
	if entries, err := os.ReadDir(empty); err != nil || len(entries) != 0 {
		t.Fatalf("a failed restore into an empty dir left %v (%v)", entries, err)
	}
	if _, err := Restore(t.Context(), bytes.NewReader(b), Options{Dir: empty}); err != nil {
		t.Fatalf("Restore into an empty dir: %v", err)
	}
}

func TestBackupStopsWithContext(t *testing.T) {
	src := newHarness(t, false)
	fillForBackup(t, src)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var buf bytes.Buffer
	if _, err := src.db.Backup(ctx, &buf); !errors.Is(err, context.Canceled) {
		t.Fatalf("Backup with a cancelled context = %v", err)
	}
}
