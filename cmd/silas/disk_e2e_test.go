package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/silas-ai/silas/channels/web"
	"github.com/silas-ai/silas/messages"
)

// mountTmpfs mounts a tmpfs of sizeMB on a fresh directory and unmounts it
// when the test ends (after the daemon stopped: cleanups run last first).
func mountTmpfs(t *testing.T, sizeMB int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	opts := fmt.Sprintf("size=%dm,mode=0700", sizeMB)
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
			_ = unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	return dir
}

// freeMB is what statfs says is free under dir.
func freeMB(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize >> 20
}

// fillUntil writes a filler file under dir until less than mb MB are free.
func fillUntil(t *testing.T, dir string, mb int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for freeMB(t, dir) >= mb {
		if _, err := f.Write(chunk); err != nil {
			t.Fatalf("fill %s: %v", dir, err)
		}
	}
	return path
}

// readyState returns /ready's status code and its checks by name.
func readyState(t *testing.T, addr string) (int, map[string]web.ReadyCheck) {
	t.Helper()
	status, body := pwaCall(t, addr, "GET", "/ready", "", "")
	var r struct {
		Status string           `json:"status"`
		Checks []web.ReadyCheck `json:"checks"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("/ready body %q: %v", body, err)
	}
	checks := map[string]web.ReadyCheck{}
	for _, c := range r.Checks {
		checks[c.Name] = c
	}
	return status, checks
}

// TestFullDiskRefusesThenRecovers: a daemon whose data dir fills up below
// persistence.min_free_mb keeps running, says why it refuses a new message,
// reports not ready, and takes messages again once space is freed, without
// a restart; every acknowledged message survives, the refused one is not
// stored.
func TestFullDiskRefusesThenRecovers(t *testing.T) {
	mnt := mountTmpfs(t, 160)
	mock := newMock(t)
	dataDir := filepath.Join(mnt, "data")
	ov := overrides(t, mock, dataDir)
	ov["silas.persistence.min_free_mb"] = 48
	d := startTest(t, loadConfig(t, ov))
	addr := d.Addr()

	c := owner(t, addr)
	before := c.say("first, before the disk fills")
	c.answer(before)
	if status, checks := readyState(t, addr); status != 200 || !checks["disk"].OK || !checks["database"].OK || !checks["actors"].OK || !checks["model"].OK {
		t.Fatalf("/ready with room = %d %+v", status, checks)
	}

	filler := fillUntil(t, mnt, 32)
	checkFor(t, waitLimit, func() bool {
		status, checks := readyState(t, addr)
		return status == 503 && !checks["disk"].OK
	}, "/ready to turn false on a full disk")
	_, checks := readyState(t, addr)
	if d := checks["disk"].Detail; !strings.Contains(d, "below persistence.min_free_mb (48 MB)") || strings.Contains(d, mnt) {
		t.Errorf("disk check detail %q: wants the watermark, not the path", d)
	}

	refused := c.say("second, while the disk is full")
	ev := c.next("error")
	if ev.str("code") != string(messages.CodeUnavailable) || !strings.Contains(ev.str("message"), "disk is almost full") {
		t.Fatalf("message on a full disk answered %v", ev)
	}
	if status, _ := pwaCall(t, addr, "GET", "/health", "", ""); status != 200 {
		t.Fatalf("/health on a full disk = %d", status)
	}
	if status, body := pwaCall(t, addr, "GET", "/metrics", "owner-secret-token", ""); status != 200 || !strings.Contains(string(body), "process_resident_memory_bytes") {
		t.Fatalf("/metrics on a full disk = %d", status)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	checkFor(t, waitLimit, func() bool { status, _ := readyState(t, addr); return status == 200 }, "/ready to recover once space is freed")
	after := c.say("third, after space was freed")
	ack := c.next("ack")
	if ack.str("message_id") != after {
		t.Fatalf("ack %v, want one for %s (the refused %s must get none)", ack, after, refused)
	}
	c.answer(after)

	// What was acknowledged is durable, what was refused is not stored:
	// look again after a restart on the same disk.
	d.stop()
	d = startTest(t, loadConfig(t, ov))
	history := ownerHistory(t, d)
	for _, want := range []string{"first, before the disk fills", "third, after space was freed"} {
		if !strings.Contains(history, want) {
			t.Errorf("history after restart lacks %q:\n%s", want, history)
		}
	}
	if strings.Contains(history, "second, while the disk is full") {
		t.Errorf("the refused message was stored:\n%s", history)
	}
	pending, err := d.in.db.Queue().Pending(context.Background())
	if err != nil || len(pending) != 0 {
		t.Errorf("queue after restart = %+v, %v", pending, err)
	}
}

// TestUnusableDataDirRefusesToStart: a read-only data dir, and one that
// cannot be created, stop serve before anything opens, naming the path.
func TestUnusableDataDirRefusesToStart(t *testing.T) {
	t.Run("read-only", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		if out, err := runCLI(t, "init", "--data-dir", dir); err != nil {
			t.Fatalf("init: %v\n%s", err, out)
		}
		// A read-only bind of the data dir onto itself: root ignores
		// permission bits, not a read-only mount.
		if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
			t.Skipf("cannot bind-mount (needs root or CAP_SYS_ADMIN): %v", err)
		}
		t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
		if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			t.Skipf("cannot remount read-only: %v", err)
		}
		out, err := runCLI(t, "serve", "--data-dir", dir, "--port", "0")
		if err == nil {
			t.Fatal("serve started on a read-only data dir")
		}
		for _, want := range []string{dir, "read-only", "silas.data_dir"} {
			if !strings.Contains(err.Error()+out, want) {
				t.Errorf("error does not say %q:\n%v\n%s", want, err, out)
			}
		}
	})
	t.Run("cannot be created", func(t *testing.T) {
		parent := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(parent, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(parent, "data") // under a regular file
		out, err := runCLI(t, "serve", "--data-dir", dir, "--port", "0")
		if err == nil {
			t.Fatal("serve started without a data dir")
		}
		if !strings.Contains(err.Error()+out, dir) {
			t.Errorf("error does not name %s:\n%v\n%s", dir, err, out)
		}
		if _, serr := os.Stat(dir); !errors.Is(serr, os.ErrNotExist) && !errors.Is(serr, unix.ENOTDIR) {
			t.Errorf("stat %s: %v", dir, serr)
		}
	})
}
